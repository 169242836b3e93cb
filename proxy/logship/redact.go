package logship

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted replaces every credential before a message leaves the process.
const Redacted = "***REDACTED***"

// Sensitive lists the key names whose values are always redacted, in
// headers, query parameters and bodies: DreamFactory's list
// (BaseService::redactSensitiveRequestFields) and Portcullis's own
// headers. Keys are compared in lower case with "-" read as "_".
var Sensitive = []string{
	"authorization", "proxy_authorization", "cookie", "set_cookie",
	"x_dreamfactory_session_token", "x_dreamfactory_api_key", "x_mcp_internal_key",
	"x_platform_session_token", "x_platform_api_key",
	"session_token", "api_key", "apikey", "password", "secret", "client_secret",
	"access_token", "refresh_token", "id_token", "token", "jwt", "auth",
}

// sensitiveParts are fragments that make any key containing them
// sensitive (new_password, db_secret, x_auth_token, aws_credentials…).
var sensitiveParts = []string{
	"password", "passwd", "passphrase", "secret", "token", "api_key", "apikey",
	"authorization", "cookie", "credential", "private_key", "jwt", "session_id", "signature",
}

var sensitiveSet = func() map[string]bool {
	m := make(map[string]bool, len(Sensitive))
	for _, k := range Sensitive {
		m[k] = true
	}
	return m
}()

// IsSensitive reports whether a header, parameter or body key names a
// credential, case-insensitively.
func IsSensitive(key string) bool {
	if key == "" || len(key) > 256 {
		return len(key) > 256 // an absurd key is not worth the risk
	}
	k := normalKey(key)
	if sensitiveSet[k] {
		return true
	}
	for _, p := range sensitiveParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// normalKey lower-cases key and reads "-", "." and " " as "_".
func normalKey(key string) string {
	var b []byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '-' || c == '.' || c == ' ':
			c = '_'
		default:
			if b == nil {
				continue
			}
		}
		if b == nil {
			b = []byte(key)
		}
		b[i] = c
	}
	if b == nil {
		return key
	}
	return string(b)
}

// RedactHeader returns header as a JSON object with credentials redacted:
// a header with one value maps to it, one with several to the list.
func RedactHeader(h map[string][]string) map[string]any {
	out := make(map[string]any, len(h))
	for k, vs := range h {
		if IsSensitive(k) {
			out[k] = Redacted
			continue
		}
		if len(vs) == 1 {
			out[k] = redactString(vs[0])
			continue
		}
		list := make([]any, len(vs))
		for i, v := range vs {
			list[i] = redactString(v)
		}
		out[k] = list
	}
	return out
}

// RedactQuery returns a raw query string as a JSON object of parameters
// with credentials redacted. A query that does not parse keeps what did.
func RedactQuery(raw string) map[string]any {
	q, _ := url.ParseQuery(raw)
	return RedactHeader(q)
}

// RedactValue redacts a decoded JSON value in place, at any depth: every
// object member whose key is sensitive becomes Redacted, and strings that
// carry a bearer token or a JWT lose it. It returns v.
func RedactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if IsSensitive(k) {
				t[k] = Redacted
			} else {
				t[k] = RedactValue(x)
			}
		}
	case []any:
		for i, x := range t {
			t[i] = RedactValue(x)
		}
	case string:
		return redactString(t)
	}
	return v
}

var (
	bearerRE = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9\-._~+/]+=*`)
	jwtRE    = regexp.MustCompile(`eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`)
)

// redactString removes bearer credentials and JWTs from a free-text value.
func redactString(s string) string {
	if strings.Contains(s, "eyJ") {
		s = jwtRE.ReplaceAllString(s, Redacted)
	}
	if len(s) > 5 && containsFold(s, "bearer", "basic ", "token ") {
		s = bearerRE.ReplaceAllString(s, "${1} "+Redacted)
	}
	return s
}

func containsFold(s string, subs ...string) bool {
	l := strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// jsonPairRE finds "key": value pairs in JSON text, also in a cut one: the
// value is a string (perhaps unterminated), or a scalar, or the start of
// an object or array.
var jsonPairRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"?|[{\[]|[^,}\]\s"{\[]+)`)

// formPairRE finds key=value pairs in form or query text.
var formPairRE = regexp.MustCompile(`(^|[&?;\s])([^=&?;\s]+)=([^&;\s]*)`)

// RedactText redacts credentials in text that is not a whole JSON
// document (a body cut at the content limit, or one that does not
// parse): "key": value pairs and key=value pairs with a sensitive key lose
// their value, and bearer tokens and JWTs anywhere are removed. A
// sensitive key whose value is an object or array ends the text there,
// since the end of that value may not be in it; cut reports that.
func RedactText(s string) (out string, cut bool) {
	if idx := jsonPairRE.FindAllStringSubmatchIndex(s, -1); len(idx) > 0 {
		var b strings.Builder
		last := 0
		for _, m := range idx {
			if !IsSensitive(s[m[2]:m[3]]) {
				continue
			}
			b.WriteString(s[last:m[4]])
			if v := s[m[4]:m[5]]; v == "{" || v == "[" {
				b.WriteString(`"` + Redacted + `"`)
				last = len(s)
				cut = true
				break
			}
			b.WriteString(`"` + Redacted + `"`)
			last = m[5]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	s = formPairRE.ReplaceAllStringFunc(s, func(p string) string {
		m := formPairRE.FindStringSubmatch(p)
		key, _ := url.QueryUnescape(m[2])
		if key == "" {
			key = m[2]
		}
		if !IsSensitive(key) {
			return p
		}
		return m[1] + m[2] + "=" + url.QueryEscape(Redacted)
	})
	return redactString(s), cut
}

// content is a body made ready for a message: its value (a redacted JSON
// value, or text), and whether it was cut.
func content(b *Body, limit int) (value any, truncated bool) {
	data := b.Data
	truncated = b.Truncated()
	if limit < 0 {
		limit = 0
	}
	if len(data) > limit {
		data, truncated = data[:limit], true
	}
	if len(data) == 0 && !truncated {
		return nil, false
	}
	ct := strings.ToLower(b.ContentType)
	size := b.Size
	if size < int64(len(data)) {
		size = int64(len(data))
	}
	switch {
	case strings.HasPrefix(ct, "multipart/"):
		return "[multipart content of " + strconv.FormatInt(size, 10) + " bytes not shipped]", truncated
	case !utf8.Valid(trimPartialRune(data, truncated)):
		return "[binary content of " + strconv.FormatInt(size, 10) + " bytes not shipped]", truncated
	}
	if !truncated {
		if isJSON(ct, data) {
			d := json.NewDecoder(bytes.NewReader(data))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err == nil && !d.More() {
				return RedactValue(v), false
			}
		}
		if strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			return RedactQuery(string(data)), false
		}
	}
	text, cut := RedactText(string(trimPartialRune(data, truncated)))
	if truncated || cut {
		text += "…[truncated: " + strconv.FormatInt(size, 10) + " bytes]"
		truncated = true
	}
	return text, truncated
}

func isJSON(ct string, data []byte) bool {
	if strings.Contains(ct, "json") {
		return true
	}
	if ct != "" && !strings.HasPrefix(ct, "text/plain") {
		return false
	}
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// trimPartialRune drops a UTF-8 sequence cut at the end of a truncated
// body.
func trimPartialRune(data []byte, truncated bool) []byte {
	if !truncated {
		return data
	}
	for i := 0; i < utf8.UTFMax && i < len(data); i++ {
		r, size := utf8.DecodeLastRune(data[:len(data)-i])
		if r != utf8.RuneError || size > 1 {
			return data[:len(data)-i]
		}
	}
	return data
}
