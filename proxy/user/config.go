package user

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Config is the user service's configuration (DreamFactory's user_config).
// Keys not listed here are kept as sent.
type Config struct {
	// AllowOpenRegistration enables POST /register.
	AllowOpenRegistration bool `json:"allow_open_registration"`
	// OpenRegRoleID is the role registered users get for the app they
	// registered through.
	OpenRegRoleID *int64 `json:"open_reg_role_id"`
	// OpenRegEmailServiceID, when set, makes registration e-mail a
	// confirmation code through that service.
	OpenRegEmailServiceID *int64 `json:"open_reg_email_service_id"`
	// OpenRegEmailTemplateID names the e-mail template for confirmations.
	OpenRegEmailTemplateID *int64 `json:"open_reg_email_template_id"`
	// InviteEmailServiceID and InviteEmailTemplateID are for invitations.
	InviteEmailServiceID  *int64 `json:"invite_email_service_id"`
	InviteEmailTemplateID *int64 `json:"invite_email_template_id"`
	// PasswordEmailServiceID is the e-mail service for reset codes; unset
	// means the service named "email".
	PasswordEmailServiceID *int64 `json:"password_email_service_id"`
	// PasswordEmailTemplateID names the e-mail template for reset codes.
	PasswordEmailTemplateID *int64 `json:"password_email_template_id"`
}

// idKeys are the configuration keys that hold a record id or null.
var idKeys = []string{
	"open_reg_role_id", "open_reg_email_service_id", "open_reg_email_template_id",
	"invite_email_service_id", "invite_email_template_id",
	"password_email_service_id", "password_email_template_id",
}

// ParseConfig validates raw and returns the configuration, reporting every
// problem at once. An empty or null configuration is the default one.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var cfg Config
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return cfg, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return cfg, errors.New("config must be a JSON object")
	}
	var problems []error
	if v, ok := m["allow_open_registration"]; ok && !isNull(v) {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			problems = append(problems, errors.New("allow_open_registration must be true or false"))
		}
		cfg.AllowOpenRegistration = b
	}
	ids := map[string]**int64{
		"open_reg_role_id": &cfg.OpenRegRoleID, "open_reg_email_service_id": &cfg.OpenRegEmailServiceID,
		"open_reg_email_template_id": &cfg.OpenRegEmailTemplateID, "invite_email_service_id": &cfg.InviteEmailServiceID,
		"invite_email_template_id": &cfg.InviteEmailTemplateID, "password_email_service_id": &cfg.PasswordEmailServiceID,
		"password_email_template_id": &cfg.PasswordEmailTemplateID,
	}
	keys := append([]string(nil), idKeys...)
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := m[k]
		if !ok || isNull(v) {
			continue
		}
		// Decoding into any keeps strings strings: "3" is not an id.
		var x any
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		_ = dec.Decode(&x) // v is valid JSON: it came out of an object
		n, isNumber := x.(json.Number)
		if !isNumber {
			problems = append(problems, fmt.Errorf("%s must be a positive integer or null", k))
			continue
		}
		id, err := n.Int64()
		if err != nil || id <= 0 {
			problems = append(problems, fmt.Errorf("%s must be a positive integer or null", k))
			continue
		}
		*ids[k] = &id
	}
	return cfg, errors.Join(problems...)
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
