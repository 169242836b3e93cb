package oidc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// opUsers is the user store of the in-process OpenID provider.
type opUsers map[string]*storage.User

func (u opUsers) GetUserByID(id string) *storage.User { return u[id] }
func (u opUsers) GetUserByUsername(name string) *storage.User {
	for _, x := range u {
		if x.Username == name {
			return x
		}
	}
	return nil
}
func (u opUsers) ExampleClientID() string { return "service" }

// opStore is zitadel's example storage with knobs on the client: the ID
// token's lifetime (negative: born expired) and whether the ID token
// carries the user-info claims (as Google's do) or not (then the relying
// party asks the user-info endpoint, as for Microsoft's v2.0 tokens
// without optional claims).
type opStore struct {
	*storage.Storage
	mu       sync.Mutex
	lifetime time.Duration
	inToken  bool
}

func (s *opStore) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return opClient{Client: c, lifetime: s.lifetime, inToken: s.inToken}, nil
}

type opClient struct {
	op.Client
	lifetime time.Duration
	inToken  bool
}

func (c opClient) IDTokenLifetime() time.Duration       { return c.lifetime }
func (c opClient) IDTokenUserinfoClaimsAssertion() bool { return c.inToken }

// zitadelOP is github.com/zitadel/oidc/v3's OpenID provider (op package)
// served in process with its example storage, at issuer <URL><prefix>,
// with a login step that signs in the user named by login at once. forge
// alters the payload of the ID tokens it answers (a forged token: the
// signature no longer matches).
type zitadelOP struct {
	*httptest.Server
	issuer string
	store  *opStore

	mu    sync.Mutex
	login string
	forge bool
}

func newZitadelOP(t *testing.T, prefix, clientID, secret string, redirectURIs ...string) *zitadelOP {
	t.Helper()
	z := &zitadelOP{login: "ann"}
	users := opUsers{
		"u-ann": {ID: "u-ann", Username: "ann", Password: "pw", FirstName: "Ann", LastName: "Example", Email: "ann@example.org",
			EmailVerified: true, PreferredLanguage: language.English},
		"u-eve": {ID: "u-eve", Username: "eve", Password: "pw", FirstName: "Eve", LastName: "Evil", Email: "ann@example.org",
			EmailVerified: false, PreferredLanguage: language.English},
	}
	z.store = &opStore{Storage: storage.NewStorageWithClients(users, map[string]*storage.Client{
		clientID: storage.WebClient(clientID, secret, redirectURIs...)}), lifetime: time.Hour, inToken: true}
	var handler http.Handler
	z.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(z.Close)
	z.issuer = z.URL + prefix
	key := sha256.Sum256([]byte("portcullis test op"))
	provider, err := op.NewProvider(&op.Config{CryptoKey: key, CodeMethodS256: true}, z.store, op.StaticIssuer(z.issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	callback := op.AuthCallbackURL(provider)
	mux := http.NewServeMux()
	mux.Handle("GET /login/username", op.NewIssuerInterceptor(provider.IssuerFromRequest).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("authRequestID")
		z.mu.Lock()
		login := z.login
		z.mu.Unlock()
		if err := z.store.CheckUsernamePassword(login, "pw", id); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	}))
	var opHandler http.Handler = provider
	if prefix != "" {
		opHandler = http.StripPrefix(prefix, provider)
	}
	mux.Handle(prefix+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		z.mu.Lock()
		forge := z.forge
		z.mu.Unlock()
		if !forge || !strings.HasSuffix(r.URL.Path, "/oauth/token") {
			opHandler.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		opHandler.ServeHTTP(rec, r)
		var body map[string]any
		if json.Unmarshal(rec.Body.Bytes(), &body) == nil {
			if idt, ok := body["id_token"].(string); ok {
				parts := strings.Split(idt, ".")
				payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
				payload = bytes.Replace(payload, []byte(`"u-ann"`), []byte(`"u-admin"`), 1)
				parts[1] = base64.RawURLEncoding.EncodeToString(payload)
				body["id_token"] = strings.Join(parts, ".")
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_ = json.NewEncoder(w).Encode(body)
	}))
	handler = mux
	return z
}

func (z *zitadelOP) set(f func(z *zitadelOP)) {
	z.mu.Lock()
	defer z.mu.Unlock()
	f(z)
}

// followProvider runs start → the provider's hops (relative Locations
// resolved) → the callback, and returns the callback's answer.
func followProvider(t *testing.T, in *proxytest.Instance, start, providerPrefix string, tamper func(cb *url.URL)) answer {
	t.Helper()
	a := get(t, start, nil)
	if a.status != http.StatusFound || !strings.HasPrefix(a.loc, providerPrefix) {
		t.Fatalf("start: %d %q %v", a.status, a.loc, a.body)
	}
	loc := a.loc
	for range 6 {
		cur, _ := url.Parse(loc)
		b := get(t, loc, nil)
		if b.status != http.StatusFound {
			t.Fatalf("provider at %s: %d %v", loc, b.status, b.body)
		}
		next, err := cur.Parse(b.loc)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(next.String(), in.URL+"/api/v2/") {
			if tamper != nil {
				tamper(next)
			}
			return get(t, next.String(), nil)
		}
		loc = next.String()
	}
	t.Fatalf("the provider never sent the browser back")
	return answer{}
}

// TestZitadelProvider signs in through zitadel's OpenID provider as
// oauth_google (ID token with the user's claims, issuer at the root) and
// as oauth_azure_ad (issuer <authority>/<tenant>/v2.0, claims from the
// user-info endpoint).
func TestZitadelProvider(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	roleID := roleNamed(t, admin, "sso")
	cases := []struct {
		name, typ, prefix string
		inToken           bool
		config            func(z *zitadelOP) map[string]any
	}{
		{"google", "oauth_google", "", true, func(z *zitadelOP) map[string]any {
			return map[string]any{"discovery_document": z.issuer + "/.well-known/openid-configuration"}
		}},
		{"linkedin", "oauth_linkedin", "/oauth", true, func(z *zitadelOP) map[string]any {
			return map[string]any{"discovery_document": z.issuer}
		}},
		{"azure", "oauth_azure_ad", "/contoso.example/v2.0", false, func(z *zitadelOP) map[string]any {
			return map[string]any{"authority_url": z.URL, "tenant_id": "contoso.example"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			callback := in.URL + "/api/v2/user/session?oauth_callback=true&service=" + tc.name + "&api_key=" + in.AdminKey
			z := newZitadelOP(t, tc.prefix, tc.name+"-client", "s3cret", callback)
			z.store.inToken = tc.inToken
			cfg := tc.config(z)
			for k, v := range map[string]any{"client_id": tc.name + "-client", "client_secret": "s3cret", "redirect_url": callback, "default_role": roleID} {
				cfg[k] = v
			}
			createService(t, admin, map[string]any{"name": tc.name, "label": tc.name, "type": tc.typ, "is_active": true, "config": cfg})
			start := in.URL + "/api/v2/user/session?service=" + tc.name + "&api_key=" + in.AdminKey
			authorize := z.issuer + "/authorize?"

			a := followProvider(t, in, start, authorize, nil)
			if a.status != 200 || a.body["email"] != "ann+"+tc.name+"@example.org" || a.body["first_name"] != "Ann" {
				t.Fatalf("first sign-in: %d %v", a.status, a.body)
			}
			if s := sessionOf(t, in, a); s["role"] != "sso" {
				t.Fatalf("session: %v", s)
			}
			if b := followProvider(t, in, start, authorize, nil); b.status != 200 || b.body["id"] != a.body["id"] {
				t.Fatalf("second sign-in: %d %v (first %v)", b.status, b.body, a.body["id"])
			}
			t.Run("an e-mail the provider does not vouch for links nothing", func(t *testing.T) {
				z.set(func(z *zitadelOP) { z.login = "eve" })
				defer z.set(func(z *zitadelOP) { z.login = "ann" })
				e := followProvider(t, in, start, authorize, nil)
				if e.status != 200 || e.body["id"] == a.body["id"] || e.body["email"] != "u-eve+"+tc.name+"@"+tc.name+".com" {
					t.Fatalf("%d %v", e.status, e.body)
				}
			})
			t.Run("forged ID token", func(t *testing.T) {
				z.set(func(z *zitadelOP) { z.forge = true })
				defer z.set(func(z *zitadelOP) { z.forge = false })
				f := followProvider(t, in, start, authorize, nil)
				if f.status != 401 || !strings.Contains(errMsg(f), "ID token is not valid") {
					t.Fatalf("%d %v", f.status, f.body)
				}
			})
			t.Run("expired ID token", func(t *testing.T) {
				z.store.mu.Lock()
				z.store.lifetime = -time.Hour
				z.store.mu.Unlock()
				defer func() { z.store.mu.Lock(); z.store.lifetime = time.Hour; z.store.mu.Unlock() }()
				f := followProvider(t, in, start, authorize, nil)
				if f.status != 401 || !strings.Contains(errMsg(f), "expired") {
					t.Fatalf("%d %v", f.status, f.body)
				}
			})
			t.Run("wrong code", func(t *testing.T) {
				f := followProvider(t, in, start, authorize, func(cb *url.URL) { q := cb.Query(); q.Set("code", "made-up"); cb.RawQuery = q.Encode() })
				if f.status != 401 || !strings.Contains(errMsg(f), "refused the authorization code") {
					t.Fatalf("%d %v", f.status, f.body)
				}
			})
			t.Run("forged state", func(t *testing.T) {
				f := followProvider(t, in, start, authorize, func(cb *url.URL) { q := cb.Query(); q.Set("state", "x"+q.Get("state")); cb.RawQuery = q.Encode() })
				if f.status != 401 || !strings.Contains(errMsg(f), "state") {
					t.Fatalf("%d %v", f.status, f.body)
				}
			})
		})
	}
}
