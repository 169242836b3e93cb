package oidc_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// provider is an in-process OpenID Connect provider: discovery, JWKS, an
// authorization endpoint that approves at once, and a token endpoint that
// checks the PKCE verifier. Its knobs forge the ID token it returns.
type provider struct {
	*httptest.Server
	key, forger *rsa.PrivateKey
	clientID    string

	mu    sync.Mutex
	codes map[string]grant
	// Knobs for the next tokens.
	sub, email                       string
	forge, expired, badNonce, badAud bool
	// Microsoft's multi-tenant shape: the document's issuer is
	// <URL>/{tenantid}/v2.0, tokens carry tid and the issuer of issTenant.
	msTemplate      bool
	tid, issTenant  string
	noEmailVerified bool
	extra           map[string]any
	// slash: the issuer ends in "/", as zitadel's and Auth0's do.
	slash bool
}

type grant struct{ nonce, challenge, redirect string }

func newProvider(t *testing.T, clientID string) *provider {
	t.Helper()
	p := &provider{clientID: clientID, codes: map[string]grant{}, sub: "u-123", email: "ann@example.org"}
	var err error
	if p.key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if p.forger, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		issuer := p.URL
		if p.msTemplate {
			issuer = p.URL + "/{tenantid}/v2.0"
		}
		if p.slash {
			issuer += "/"
		}
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuer, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
			"jwks_uri": p.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		code := rand.Text()
		p.mu.Lock()
		p.codes[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		p.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		v := back.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		p.mu.Lock()
		g, ok := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostForm.Get("redirect_uri") != g.redirect {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "code or verifier does not match"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": p.idToken(t, g.nonce)})
	})
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

func (p *provider) idToken(t *testing.T, nonce string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := p.key
	if p.forge {
		key = p.forger
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Error(err)
		return ""
	}
	now := time.Now()
	exp := now.Add(time.Hour)
	if p.expired {
		exp = now.Add(-time.Hour)
	}
	aud := p.clientID
	if p.badAud {
		aud = "someone-else"
	}
	if p.badNonce {
		nonce = "not-the-nonce"
	}
	claims := map[string]any{"iss": p.URL, "sub": p.sub, "aud": aud, "exp": exp.Unix(), "iat": now.Unix(), "nonce": nonce,
		"email": p.email, "email_verified": true, "name": "Ann Example", "given_name": "Ann", "family_name": "Example"}
	if p.msTemplate {
		claims["iss"] = p.URL + "/" + p.issTenant + "/v2.0"
		claims["tid"] = p.tid
	}
	if p.slash {
		claims["iss"] = p.URL + "/"
	}
	if p.noEmailVerified {
		delete(claims, "email_verified")
	}
	for k, v := range p.extra {
		claims[k] = v
	}
	payload, _ := json.Marshal(claims)
	jws, err := sig.Sign(payload)
	if err != nil {
		t.Error(err)
		return ""
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Error(err)
	}
	return out
}
