package service

// ConfigField describes one key of a service type's configuration, as
// DreamFactory's service_type config_schema lists them, for
// administration screens that build the configuration form.
type ConfigField struct {
	// Name is the key in the service's config object.
	Name string `json:"name"`
	// Label is the key for people.
	Label string `json:"label"`
	// Type is one of string, text, password (a secret, masked on read),
	// integer, number, boolean, object, array or picklist.
	Type string `json:"type"`
	// Required says the configuration is refused without it.
	Required bool `json:"required"`
	// Default is the value used when the key is absent (nil: none).
	Default any `json:"default"`
	// Description says what the key does.
	Description string `json:"description"`
	// Values lists the choices of a picklist.
	Values []string `json:"values,omitempty"`
}

// ConfigSchemer is implemented by service types that describe their
// configuration; /system/service_type shows it as config_schema.
type ConfigSchemer interface {
	ConfigSchema() []ConfigField
}
