package system

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// secretMask is what a credential in a service configuration reads as
// (DreamFactory's mask for protected attributes). Writing it back keeps
// the stored value.
const secretMask = "**********"

type revealKey struct{}

// withSecrets marks a request whose answer may show credentials in clear:
// an administrator asked for them with secrets=true.
func withSecrets(r *http.Request) *http.Request {
	if !boolParam(r.URL.Query().Get("secrets")) {
		return r
	}
	id := caller.IdentityFrom(r.Context())
	if id == nil || !id.Admin {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), revealKey{}, true))
}

// revealSecrets reports whether ctx belongs to a request marked by
// withSecrets.
func revealSecrets(ctx context.Context) bool {
	v, _ := ctx.Value(revealKey{}).(bool)
	return v
}

// maskConfig replaces each credential of a service configuration by
// secretMask (objects nested in it too), the value of each entry of a list
// that names a credential (a header such as Authorization or X-Api-Key, a
// parameter such as api_key: service.SecretEntry) too, and the password of
// a DSN by dialects.Redact's placeholder.
func maskConfig(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return raw
	}
	changed := false
	for k, v := range m {
		switch {
		case service.SecretKey(k):
			if !isNullJSON(v) && string(v) != `""` {
				m[k], _ = json.Marshal(secretMask)
				changed = true
			}
		case strings.EqualFold(k, "dsn"):
			var s string
			if json.Unmarshal(v, &s) == nil {
				if red := dialects.Redact(s); red != s {
					m[k], _ = json.Marshal(red)
					changed = true
				}
			}
		default:
			if nv := maskNested(v); !bytes.Equal(nv, v) {
				m[k], changed = nv, true
			}
		}
	}
	if !changed {
		return raw
	}
	out, _ := json.Marshal(m)
	return out
}

// maskNested masks an object (maskConfig) or a list inside a
// configuration: its credential entries' values, and the objects in it.
func maskNested(v json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return v
	}
	switch t[0] {
	case '{':
		return maskConfig(v)
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			return v
		}
		changed := false
		for i, el := range list {
			if e, name, ok := entryOf(el); ok {
				if vk := valueKey(e); vk != "" && service.SecretEntry(name) {
					e[vk], _ = json.Marshal(secretMask)
					list[i], _ = json.Marshal(e)
					changed = true
					continue
				}
			}
			if nv := maskNested(el); !bytes.Equal(nv, el) {
				list[i], changed = nv, true
			}
		}
		if changed {
			out, _ := json.Marshal(list)
			return out
		}
	}
	return v
}

// valueKey names the member holding an entry's value: "value" (rws and
// MCP headers, parameters) or "data" (a SOAP header given as text, such as
// a WSSE password row), when it holds a string that is not empty; "" when
// there is none.
func valueKey(e map[string]json.RawMessage) string {
	for _, k := range []string{"value", "data"} {
		var s string
		if json.Unmarshal(e[k], &s) == nil && s != "" {
			return k
		}
	}
	return ""
}

// entryOf decodes a name/value entry of a configuration's list (a header,
// a parameter): an object with a string name.
func entryOf(el json.RawMessage) (e map[string]json.RawMessage, name string, ok bool) {
	if t := bytes.TrimSpace(el); len(t) == 0 || t[0] != '{' {
		return nil, "", false
	}
	if json.Unmarshal(el, &e) != nil || e == nil || json.Unmarshal(e["name"], &name) != nil || name == "" {
		return nil, "", false
	}
	return e, name, true
}

// keepMasked returns in with every masked value a client sent back (the
// mask of a credential, a DSN as maskConfig shows it) replaced by the
// stored one from cur, in nested objects too.
func keepMasked(k string, in, cur json.RawMessage) json.RawMessage {
	if cur == nil {
		return in
	}
	var s string
	switch {
	case service.SecretKey(k):
		if json.Unmarshal(in, &s) == nil && s == secretMask {
			return cur
		}
	case strings.EqualFold(k, "dsn"):
		var old string
		if json.Unmarshal(in, &s) == nil && json.Unmarshal(cur, &old) == nil && s != old && s == dialects.Redact(old) {
			return cur
		}
	default:
		if t := bytes.TrimSpace(in); len(t) > 0 && t[0] == '[' {
			return keepMaskedEntries(in, cur)
		}
		var inM, curM map[string]json.RawMessage
		if json.Unmarshal(in, &inM) != nil || inM == nil || json.Unmarshal(cur, &curM) != nil || curM == nil {
			return in
		}
		changed := false
		for ik, iv := range inM {
			if nv := keepMasked(ik, iv, curM[ik]); !bytes.Equal(nv, iv) {
				inM[ik], changed = nv, true
			}
		}
		if changed {
			out, _ := json.Marshal(inM)
			return out
		}
	}
	return in
}

// keepMaskedEntries returns the list in with the masked value of each
// credential entry a client sent back replaced by the stored value of the
// entry of the same name (compared without case) in cur.
func keepMaskedEntries(in, cur json.RawMessage) json.RawMessage {
	var inL, curL []json.RawMessage
	if json.Unmarshal(in, &inL) != nil || json.Unmarshal(cur, &curL) != nil {
		return in
	}
	changed := false
	for i, el := range inL {
		e, name, ok := entryOf(el)
		if !ok || !service.SecretEntry(name) {
			continue
		}
		vk := valueKey(e)
		var val string
		if vk == "" || json.Unmarshal(e[vk], &val) != nil || val != secretMask {
			continue
		}
		for _, c := range curL {
			if ce, cname, ok := entryOf(c); ok && strings.EqualFold(cname, name) {
				e[vk] = ce[vk]
				inL[i], _ = json.Marshal(e)
				changed = true
				break
			}
		}
	}
	if !changed {
		return in
	}
	out, _ := json.Marshal(inL)
	return out
}
