package oidc_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// ghAccount is one user of the GitHub-shaped API.
type ghAccount struct {
	id       int64
	login    string
	email    string
	verified bool
}

// github is an in-process server shaped like GitHub's OAuth endpoints
// (form-encoded token answers, errors with HTTP 200 as GitHub sends them)
// and REST API (/user, /user/emails), with a plain /userinfo for the
// generic type. The authorization endpoint approves the current account
// at once.
type github struct {
	*httptest.Server
	clientID, secret string

	mu      sync.Mutex
	codes   map[string]ghGrant
	tokens  map[string]ghAccount
	account ghAccount
	// userStatus, when set, is the status /user and /userinfo answer.
	userStatus int
	// noEmailScope answers /user/emails with 404, as for a token without
	// user:email.
	noEmailScope bool
}

type ghGrant struct {
	challenge, redirect string
	account             ghAccount
}

func newGitHub(t *testing.T, clientID, secret string) *github {
	t.Helper()
	g := &github{clientID: clientID, secret: secret, codes: map[string]ghGrant{}, tokens: map[string]ghAccount{},
		account: ghAccount{id: 4242, login: "ann", email: "ann@example.org", verified: true}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != g.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || q.Get("state") == "" {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		code := rand.Text()
		g.mu.Lock()
		g.codes[code] = ghGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), account: g.account}
		g.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		v := back.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f := r.PostForm
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		if f.Get("client_id") != g.clientID || f.Get("client_secret") != g.secret {
			_, _ = w.Write([]byte("error=incorrect_client_credentials&error_description=The+client_id+and%2For+client_secret+passed+are+incorrect."))
			return
		}
		g.mu.Lock()
		gr, ok := g.codes[f.Get("code")]
		delete(g.codes, f.Get("code"))
		g.mu.Unlock()
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != gr.challenge || f.Get("redirect_uri") != gr.redirect {
			_, _ = w.Write([]byte("error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired."))
			return
		}
		tok := rand.Text()
		g.mu.Lock()
		g.tokens[tok] = gr.account
		g.mu.Unlock()
		_, _ = w.Write([]byte("access_token=" + tok + "&scope=read%3Auser%2Cuser%3Aemail&token_type=bearer"))
	})
	// who answers the account of the request's token, or false after
	// writing the error.
	who := func(w http.ResponseWriter, r *http.Request) (ghAccount, bool) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.userStatus != 0 {
			http.Error(w, `{"message":"Server Error"}`, g.userStatus)
			return ghAccount{}, false
		}
		a, ok := g.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		}
		return a, ok
	}
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		a, ok := who(w, r)
		if !ok {
			return
		}
		// The public e-mail is whatever the user typed: never used.
		_ = json.NewEncoder(w).Encode(map[string]any{"id": a.id, "login": a.login, "name": "Ann Example", "email": "public-" + a.email})
	})
	mux.HandleFunc("GET /user/emails", func(w http.ResponseWriter, r *http.Request) {
		a, ok := who(w, r)
		if !ok {
			return
		}
		g.mu.Lock()
		noScope := g.noEmailScope
		g.mu.Unlock()
		if noScope {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode([]map[string]any{
			{"email": "other@example.net", "primary": false, "verified": true, "visibility": nil},
			{"email": a.email, "primary": true, "verified": a.verified, "visibility": "private"},
		})
	})
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		a, ok := who(w, r)
		if !ok {
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"uid": a.login, "mail": a.email, "confirmed": a.verified,
			"profile": map[string]any{"display": "Ann Example"}}})
	})
	// Bitbucket Cloud's shapes.
	mux.HandleFunc("GET /2.0/user", func(w http.ResponseWriter, r *http.Request) {
		a, ok := who(w, r)
		if !ok {
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"uuid": fmt.Sprintf("{0000-%d}", a.id), "display_name": "Ann Example", "nickname": a.login})
	})
	mux.HandleFunc("GET /2.0/user/emails", func(w http.ResponseWriter, r *http.Request) {
		a, ok := who(w, r)
		if !ok {
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"pagelen": 10, "values": []map[string]any{
			{"email": a.email, "is_primary": true, "is_confirmed": a.verified, "type": "email"},
			{"email": "other@example.net", "is_primary": false, "is_confirmed": true, "type": "email"},
		}})
	})
	// Facebook's Graph API /me.
	mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		a, ok := who(w, r)
		if !ok {
			return
		}
		if r.URL.Query().Get("fields") == "" {
			http.Error(w, "no fields", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprint(a.id), "name": "Ann Example", "first_name": "Ann", "last_name": "Example", "email": a.email})
	})
	g.Server = httptest.NewServer(mux)
	t.Cleanup(g.Close)
	return g
}

// set changes the server's knobs under its lock.
func (g *github) set(f func(g *github)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(g)
}
