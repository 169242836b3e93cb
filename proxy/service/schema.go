package service

import "strings"

// ConfigField describes one key of a service type's configuration, as
// DreamFactory's service_type config_schema lists them, for
// administration screens that build the configuration form.
type ConfigField struct {
	// Name is the key in the service's config object.
	Name string `json:"name"`
	// Label is the key for people.
	Label string `json:"label"`
	// Type is one of string, text, password (a secret, masked on read and
	// left out of exports without secrets; its Name must satisfy
	// SecretKey), integer, number, boolean, object, array or picklist.
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

// secretWords are the words that end the name of a configuration key
// holding a credential (compared without case, "_" or "-").
var secretWords = []string{"password", "passwords", "passwd", "passphrase", "secret", "secrets",
	"secretkey", "token", "tokens", "privatekey", "apikey", "credential", "credentials"}

// notSecret are configuration keys that end with such a word but hold no
// credential: SOAP's wsse_username_token is the wsu:Id of the WSSE header.
var notSecret = []string{"wsse_username_token"}

// credentialHeaders are HTTP headers that carry a credential whatever
// their name says.
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie"}

// SecretEntry reports whether a name/value entry of a configuration's list
// (a header or a parameter an rws, SOAP or MCP service sends upstream)
// holds a credential in its value: its name satisfies SecretKey (api_key,
// X-Auth-Token, X-Api-Key) or is a header that carries credentials
// (Authorization, Proxy-Authorization, Cookie).
func SecretEntry(name string) bool {
	for _, h := range credentialHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return SecretKey(name)
}

// SecretKey reports whether a configuration key (at any depth of a
// service's config) holds a credential: its name ends with a word such as
// password, secret, token, private key or API key (password,
// client_secret, sp_privateKey, options.api_token). A key that only
// mentions one on the way to something else is no secret
// (password_email_service_id, token_endpoint). Every ConfigField of type
// password satisfies it, so the mask on read and the redaction of an
// export need no service type.
func SecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, n := range notSecret {
		if k == n {
			return false
		}
	}
	k = strings.NewReplacer("_", "", "-", "").Replace(k)
	for _, w := range secretWords {
		if strings.HasSuffix(k, w) {
			return true
		}
	}
	return false
}
