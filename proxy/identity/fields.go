package identity

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// DateFormat is the layout of dates in session responses.
const DateFormat = "2006-01-02 15:04:05"

func formatDate(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(DateFormat)
}

// Fields is a decoded request body: a JSON object (numbers as
// json.Number) or a form's first values.
type Fields map[string]any

// str returns a string field; absent and null are "". Numbers are not
// strings.
func (p Fields) str(name string) (string, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid("Invalid value for field '%s': expected string.", name)
	}
	return s, nil
}

// has reports whether a field is present and not null.
func (p Fields) has(name string) bool {
	v, ok := p[name]
	return ok && v != nil
}

// int returns an integer field, accepting JSON numbers and numeric
// strings (forms); ok is false when absent or null.
func (p Fields) int(name string) (n int64, ok bool, err error) {
	v, present := p[name]
	if !present || v == nil {
		return 0, false, nil
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
		if s == "" {
			return 0, false, nil
		}
	default:
		return 0, false, invalid("Invalid value for field '%s': expected integer.", name)
	}
	n, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, invalid("Invalid value for field '%s': expected integer.", name)
	}
	return n, true, nil
}

// Answer is DreamFactory's {"success":true}, with a new session's token
// or the note that a confirmation code was sent.
type Answer struct {
	Success              bool   `json:"success"`
	SessionToken         string `json:"session_token,omitempty"`
	ConfirmationRequired bool   `json:"confirmation_required,omitempty"`
}

// SecurityQuestion answers a reset request for a user who has one.
type SecurityQuestion struct {
	SecurityQuestion string `json:"security_question"`
}
