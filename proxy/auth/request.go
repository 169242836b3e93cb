package auth

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Headers and query parameters that carry a session token.
const (
	HeaderSessionToken   = "X-Platform-Session-Token"
	HeaderDFSessionToken = "X-DreamFactory-Session-Token"
	QuerySessionToken    = "session_token"
)

// TokenFromRequest returns the session token r carries: header
// X-Platform-Session-Token, X-DreamFactory-Session-Token, Authorization:
// Bearer, or query parameter session_token, first found wins; "" when none.
// Other Authorization schemes (Basic) are not session tokens.
func TokenFromRequest(r *http.Request) string {
	for _, h := range []string{HeaderSessionToken, HeaderDFSessionToken} {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return v
		}
	}
	if v := r.Header.Get("Authorization"); v != "" {
		if scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok && strings.EqualFold(scheme, "Bearer") {
			if tok = strings.TrimSpace(tok); tok != "" {
				return tok
			}
		}
	}
	return strings.TrimSpace(r.URL.Query().Get(QuerySessionToken))
}

// DateFormat is the layout of dates in session responses.
const DateFormat = "2006-01-02 15:04:05"

func formatDate(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(DateFormat)
}

// payload is a decoded request body: a JSON object or a form.
type payload map[string]any

// readPayload decodes r's body as a JSON object, or as a form when the
// content type says so. An empty body is an empty payload.
func readPayload(r *http.Request) (payload, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded", "multipart/form-data":
		var err error
		if mt == "multipart/form-data" {
			err = r.ParseMultipartForm(1 << 20)
		} else {
			err = r.ParseForm()
		}
		if err != nil {
			return nil, apierr.As(err)
		}
		p := payload{}
		for k, vs := range r.PostForm {
			if len(vs) > 0 {
				p[k] = vs[0]
			}
		}
		return p, nil
	}
	var raw any
	if err := apierr.DecodeJSON(r, &raw, true); err != nil {
		return nil, err
	}
	switch v := raw.(type) {
	case nil:
		return payload{}, nil
	case map[string]any:
		return payload(v), nil
	}
	return nil, apierr.BadRequest("The request body must be a JSON object.")
}

// str returns a string field; absent and null are "". Numbers are not
// strings.
func (p payload) str(name string) (string, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", apierr.BadRequest("Invalid value for field '%s': expected string.", name)
	}
	return s, nil
}

// has reports whether a field is present and not null.
func (p payload) has(name string) bool {
	v, ok := p[name]
	return ok && v != nil
}

// int returns an integer field, accepting JSON numbers and numeric
// strings (forms); ok is false when absent or null.
func (p payload) int(name string) (n int64, ok bool, err error) {
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
		return 0, false, apierr.BadRequest("Invalid value for field '%s': expected integer.", name)
	}
	n, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, apierr.BadRequest("Invalid value for field '%s': expected integer.", name)
	}
	return n, true, nil
}

// boolParam reads a boolean query parameter as DreamFactory does
// (true/1/yes/on).
func boolParam(r *http.Request, name string) bool {
	switch strings.ToLower(strings.TrimSpace(r.URL.Query().Get(name))) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

// unsupported is DreamFactory's 400 for a verb a resource does not serve.
func unsupported(r *http.Request, resource string) error {
	return apierr.BadRequest("%s requests for resource '%s' are not currently supported.", r.Method, resource)
}

// writeJSON writes a 200 that must not be cached (it may carry a token).
// A failure to write to the client is not an API error and is dropped.
func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	_ = apierr.WriteJSON(w, http.StatusOK, v)
	return nil
}

// success is DreamFactory's {"success":true}.
type success struct {
	Success              bool   `json:"success"`
	SessionToken         string `json:"session_token,omitempty"`
	ConfirmationRequired bool   `json:"confirmation_required,omitempty"`
}
