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
// secretMask (objects nested in it too) and the password of a DSN by
// dialects.Redact's placeholder.
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
			if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
				if nv := maskConfig(v); !bytes.Equal(nv, v) {
					m[k], changed = nv, true
				}
			}
		}
	}
	if !changed {
		return raw
	}
	out, _ := json.Marshal(m)
	return out
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
