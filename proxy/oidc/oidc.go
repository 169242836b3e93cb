package oidc

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// TypeName is the service type's name.
const TypeName = "oidc"

// StateTTL is how long a sign-in may take between the redirect to the
// provider and the callback.
const StateTTL = 10 * time.Minute

// Type is the `oidc` service type.
type Type struct {
	// HTTPClient reaches the provider; nil means a client with a 15 s
	// timeout.
	HTTPClient *http.Client
}

// Info implements service.Type.
func (Type) Info() service.Info {
	return service.Info{Name: TypeName, Label: "OpenID Connect", Group: service.GroupOAuth,
		Description: "Sign-in through an OpenID Connect provider (authorization code with PKCE)."}
}

// ValidateConfig implements service.Type.
func (Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(config)
	return err
}

// New implements service.Type.
func (t Type) New(ctx context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	if deps.Store == nil {
		return nil, errors.New("the oidc service needs the system database")
	}
	cfg, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	opts := identity.Options{Logger: deps.Logger}
	if deps.Registry != nil {
		opts.Snapshot = deps.Registry.Snapshot
		opts.Changed = deps.Registry.Reload
	}
	e, err := identity.New(deps.Store, opts)
	if err != nil {
		return nil, err
	}
	hc := t.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	return &Backend{name: svc.Name, cfg: cfg, e: e, hc: hc}, nil
}

// Backend signs users in through one provider.
type Backend struct {
	name string
	cfg  Config
	e    *identity.Engine
	hc   *http.Client

	mu       sync.Mutex
	provider *gooidc.Provider
}

var _ user.ServiceSignIn = (*Backend)(nil)

// ServeHTTP serves GET /{svc}/sso (start or callback).
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.HandlerFunc(b.serve).ServeHTTP(w, r)
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) error {
	res := ""
	if t := service.TargetFrom(r.Context()); t != nil {
		res = t.Resource
	}
	switch res {
	case "":
		return writeJSON(w, map[string]any{"resource": []string{"sso"}})
	case "sso":
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			return apierr.BadRequest("%s requests for resource 'sso' are not currently supported.", r.Method)
		}
		return b.ServeSignIn(w, r)
	}
	return apierr.NotFound("Resource '%s' not found for service '%s'.", res, b.name)
}

// Close implements service.Backend.
func (b *Backend) Close() error { return nil }

// ServeSignIn starts a sign-in, or finishes it when the request carries
// the provider's answer (code or error, and state).
func (b *Backend) ServeSignIn(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Get("code") != "" || q.Get("error") != "" || q.Get("state") != "" {
		return b.callback(w, r)
	}
	return b.start(w, r)
}

// sealed is what the state parameter carries, encrypted.
type sealed struct {
	Service  string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Expires  int64  `json:"e"`
	Redirect string `json:"r,omitempty"`
}

func (b *Backend) start(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	redirect := r.URL.Query().Get("redirect")
	if redirect != "" && !b.allowedRedirect(redirect) {
		return apierr.BadRequest("The redirect %q is neither a path on this host nor on the host of the service's redirect_url.", redirect)
	}
	oc, _, err := b.oauth(ctx)
	if err != nil {
		return err
	}
	st := sealed{Service: b.name, Nonce: oauth2.GenerateVerifier(), Verifier: oauth2.GenerateVerifier(),
		Expires: time.Now().Add(StateTTL).Unix(), Redirect: redirect}
	state, err := b.seal(ctx, st)
	if err != nil {
		return err
	}
	u := oc.AuthCodeURL(state, oauth2.S256ChallengeOption(st.Verifier), gooidc.Nonce(st.Nonce))
	w.Header().Set("Cache-Control", "no-store")
	if r.Header.Get("X-Requested-With") == "XMLHttpRequest" {
		return writeJSON(w, map[string]any{"response": map[string]any{"redirect": true, "url": u}})
	}
	http.Redirect(w, r, u, http.StatusFound)
	return nil
}

func (b *Backend) callback(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		msg := "The provider refused the sign-in: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		return apierr.Unauthorized("%s", msg)
	}
	st, err := b.open(ctx, q.Get("state"))
	if err != nil {
		return err
	}
	code := q.Get("code")
	if code == "" {
		return apierr.Unauthorized("The provider's answer has no authorization code.")
	}
	oc, verifier, err := b.oauth(ctx)
	if err != nil {
		return err
	}
	tok, err := oc.Exchange(b.clientCtx(ctx), code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return apierr.Unauthorized("The provider refused the authorization code: %s", providerReason(re))
		}
		return badGateway(err, "The provider's token endpoint failed")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return badGateway(errors.New("no id_token"), "The provider's token answer has no ID token")
	}
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		return apierr.Unauthorized("The provider's ID token is not valid: %s", err.Error())
	}
	if idt.Nonce != st.Nonce {
		return apierr.Unauthorized("The provider's ID token does not carry the nonce of this sign-in.")
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
		GivenName     string `json:"given_name"`
		FamilyName    string `json:"family_name"`
	}
	if err := idt.Claims(&claims); err != nil {
		return apierr.Unauthorized("The provider's ID token has unreadable claims.")
	}
	email := claims.Email
	if claims.EmailVerified != nil && !*claims.EmailVerified {
		email = ""
	}
	in, err := b.e.SignInExternal(ctx, identity.External{Service: b.name, Subject: idt.Subject, Email: email,
		Name: claims.Name, FirstName: claims.GivenName, LastName: claims.FamilyName, RoleID: b.cfg.DefaultRole,
		RefuseNew: b.cfg.AllowNewUsers != nil && !*b.cfg.AllowNewUsers})
	if err != nil {
		return user.APIError(err)
	}
	w.Header().Set("Cache-Control", "no-store")
	if st.Redirect != "" {
		target, err := url.Parse(st.Redirect)
		if err == nil {
			v := target.Query()
			v.Set("session_token", in.Response.SessionToken)
			target.RawQuery = v.Encode()
			http.Redirect(w, r, target.String(), http.StatusFound)
			return nil
		}
	}
	return writeJSON(w, in.Response)
}

// oauth returns the client configuration and ID token verifier, running
// discovery the first time.
func (b *Backend) oauth(ctx context.Context) (*oauth2.Config, *gooidc.IDTokenVerifier, error) {
	p, err := b.discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	oc := &oauth2.Config{ClientID: b.cfg.ClientID, ClientSecret: b.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: b.cfg.RedirectURL, Scopes: b.cfg.scopes()}
	return oc, p.Verifier(&gooidc.Config{ClientID: b.cfg.ClientID}), nil
}

func (b *Backend) discover(ctx context.Context) (*gooidc.Provider, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.provider != nil {
		return b.provider, nil
	}
	cctx := gooidc.ClientContext(context.WithoutCancel(ctx), b.hc)
	if b.cfg.DiscoveryDocument == "" {
		pc := gooidc.ProviderConfig{IssuerURL: b.cfg.Issuer, AuthURL: b.cfg.AuthEndpoint, TokenURL: b.cfg.TokenEndpoint,
			UserInfoURL: b.cfg.UserEndpoint, JWKSURL: b.cfg.JWKSURI}
		b.provider = pc.NewProvider(cctx)
		return b.provider, nil
	}
	issuer := strings.TrimSuffix(strings.TrimSuffix(b.cfg.DiscoveryDocument, "/.well-known/openid-configuration"), "/")
	dctx, cancel := context.WithTimeout(cctx, 15*time.Second)
	defer cancel()
	p, err := gooidc.NewProvider(dctx, issuer)
	if err != nil {
		return nil, badGateway(err, "The provider's discovery document could not be read")
	}
	b.provider = p
	return p, nil
}

func (b *Backend) clientCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, b.hc)
}

// allowedRedirect admits a path on this host or a URL on the host of
// redirect_url.
func (b *Backend) allowedRedirect(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	if u.Scheme == "" && u.Host == "" {
		return strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/\\")
	}
	ru, err := url.Parse(b.cfg.RedirectURL)
	return err == nil && (u.Scheme == "https" || u.Scheme == ru.Scheme) && strings.EqualFold(u.Host, ru.Host)
}

// seal encrypts st into a state parameter.
func (b *Backend) seal(ctx context.Context, st sealed) (string, error) {
	aead, err := b.aead(ctx)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(st)
	if err != nil {
		return "", apierr.Internal(err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", apierr.Internal(err)
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(b.name))), nil
}

// open decrypts and checks a state parameter.
func (b *Backend) open(ctx context.Context, state string) (*sealed, error) {
	bad := apierr.Unauthorized("The sign-in state is missing, forged or expired; start the sign-in again.")
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || state == "" {
		return nil, bad
	}
	aead, err := b.aead(ctx)
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize() {
		return nil, bad
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(b.name))
	if err != nil {
		return nil, bad
	}
	var st sealed
	if json.Unmarshal(plain, &st) != nil || st.Service != b.name || time.Now().Unix() > st.Expires {
		return nil, bad
	}
	return &st, nil
}

func (b *Backend) aead(ctx context.Context) (cipher.AEAD, error) {
	key, err := b.e.StateKey(ctx)
	if err != nil {
		return nil, user.APIError(err)
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	return cipher.NewGCM(blk)
}

// providerReason is the provider's error code and description.
func providerReason(re *oauth2.RetrieveError) string {
	if re.ErrorCode == "" {
		return fmt.Sprintf("HTTP %d", re.Response.StatusCode)
	}
	if re.ErrorDescription != "" {
		return re.ErrorCode + " (" + re.ErrorDescription + ")"
	}
	return re.ErrorCode
}

// badGateway is the 502 for a provider that failed.
func badGateway(err error, msg string) error {
	e := apierr.BadGateway("%s: %s", msg, err.Error())
	e.Err = err
	return e
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	_ = apierr.WriteJSON(w, http.StatusOK, v)
	return nil
}
