package service

import (
	"net/http"
	"strings"
)

// Headers and query parameters that carry a session token.
const (
	HeaderSessionToken   = "X-Platform-Session-Token"
	HeaderDFSessionToken = "X-DreamFactory-Session-Token"
	QuerySessionToken    = "session_token"
)

// tokenHeaders are HeaderSessionToken and HeaderDFSessionToken in
// canonical form, read straight from the header map (Header.Get would
// canonicalize them on every request).
var tokenHeaders = [...]string{http.CanonicalHeaderKey(HeaderSessionToken), http.CanonicalHeaderKey(HeaderDFSessionToken)}

// SessionToken returns the session token r carries: header
// X-Platform-Session-Token, X-DreamFactory-Session-Token, Authorization:
// Bearer, or query parameter session_token, first found wins; "" when none.
// Other Authorization schemes (Basic) are not session tokens. The session
// stage and the backends that serve the session resources read tokens the
// same way through it.
func SessionToken(r *http.Request) string {
	for _, h := range tokenHeaders {
		if vs := r.Header[h]; len(vs) > 0 {
			if v := strings.TrimSpace(vs[0]); v != "" {
				return v
			}
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
