package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// StateTTL is how long a sign-in may take between the redirect to the
// provider and the callback.
const StateTTL = 10 * time.Minute

// Type is one of the sign-in types of this package (Names).
type Type struct {
	// Name is the type's name; "" means TypeName (oidc).
	Name string
	// HTTPClient reaches the provider; nil means a client with a 15 s
	// timeout that dials only what the upstream allow list admits. Either
	// way redirects are not followed: the code, tokens and user data go to
	// the configured endpoints only.
	HTTPClient *http.Client
}

func (t Type) profile() *profile {
	if p, ok := profiles[t.Name]; ok {
		return p
	}
	return profiles[TypeName]
}

// Info implements service.Type.
func (t Type) Info() service.Info {
	p := t.profile()
	return service.Info{Name: p.name, Label: p.label, Group: service.GroupOAuth, Description: p.description}
}

// ValidateConfig implements service.Type.
func (t Type) ValidateConfig(config json.RawMessage) error {
	_, err := parseConfig(t.profile(), config)
	return err
}

// New implements service.Type.
func (t Type) New(ctx context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	p := t.profile()
	if deps.Store == nil {
		return nil, fmt.Errorf("the %s service needs the system database", p.name)
	}
	cfg, err := parseConfig(p, svc.ConfigJSON())
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
	hc := &http.Client{Timeout: 15 * time.Second}
	if t.HTTPClient != nil {
		c := *t.HTTPClient
		hc = &c
	} else {
		// The provider is an upstream like any other: --upstream-allow
		// applies to discovery, keys, tokens and user info.
		allow, err := upstream.ParseAllowList(deps.UpstreamAllow)
		if err != nil {
			return nil, fmt.Errorf("upstream allow list: %w", err)
		}
		if !allow.Empty() {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.DialContext = allow.Dial(&net.Dialer{Timeout: 10 * time.Second}, nil)
			hc.Transport = tr
		}
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Backend{name: svc.Name, p: p, cfg: cfg, e: e, hc: hc}, nil
}

// Backend signs users in through one provider.
type Backend struct {
	name string
	p    *profile
	cfg  Config
	e    *identity.Engine
	hc   *http.Client

	mu             sync.Mutex
	provider       *gooidc.Provider
	verifier       *gooidc.IDTokenVerifier
	issuerTemplate string
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
	Nonce    string `json:"n,omitempty"`
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
	oc, err := b.oauth(ctx)
	if err != nil {
		return err
	}
	st := sealed{Service: b.name, Verifier: oauth2.GenerateVerifier(), Expires: time.Now().Add(StateTTL).Unix(), Redirect: redirect}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(st.Verifier)}
	if b.p.oidc {
		st.Nonce = oauth2.GenerateVerifier()
		opts = append(opts, gooidc.Nonce(st.Nonce))
	}
	state, err := b.seal(ctx, st)
	if err != nil {
		return err
	}
	u := oc.AuthCodeURL(state, opts...)
	w.Header().Set("Cache-Control", "no-store")
	if r.Header.Get("X-Requested-With") == "XMLHttpRequest" {
		return writeJSON(w, map[string]any{"response": map[string]any{"redirect": true, "url": u}})
	}
	http.Redirect(w, r, u, http.StatusFound)
	return nil
}

// callback finishes a sign-in. Failed callbacks count against the
// client's address in the password sign-in's throttle, and a blocked
// address is refused (429) before the provider is asked anything.
//
// A browser (a GET that is no XMLHttpRequest: it follows the provider's
// redirect) ends at a page, as in DreamFactory: the redirect it asked for
// at the start, else the landing page of the app it came through
// (identity.Engine.LandingURL), with ?session_token= on success and
// ?error= on failure. Without either, and for an API client (XHR, or a
// POST of the provider's answer), the answer is the session response or
// the error as JSON; a redirect asked for at the start is followed on
// success whoever calls.
func (b *Backend) callback(w http.ResponseWriter, r *http.Request) error {
	target := ""
	if browser(r) {
		target = b.e.LandingURL(r.Context())
	}
	keys := identity.Keys{Address: identity.ClientKey(r.RemoteAddr)}
	thr := b.e.Throttle()
	if d := thr.Wait(keys); d > 0 {
		return user.RedirectFailed(w, r, target, throttled(d))
	}
	st, err := b.finish(w, r)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
		thr.Fail(keys)
	}
	if st != nil && st.Redirect != "" && browser(r) {
		target = st.Redirect
	}
	return user.RedirectFailed(w, r, target, err)
}

// browser reports whether a callback comes from a browser following the
// provider's redirect rather than from a script.
func browser(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("X-Requested-With") != "XMLHttpRequest"
}

// throttled is the 429 of an address that must wait d.
func throttled(d time.Duration) error {
	secs := int64((d + time.Second - 1) / time.Second)
	e := apierr.TooManyRequests(identity.MsgThrottled, secs)
	e.Header = http.Header{"Retry-After": []string{strconv.FormatInt(secs, 10)}}
	return e
}

// finish checks the provider's answer and signs the user in. It returns
// the opened state (nil when it could not be opened) with the error.
func (b *Backend) finish(w http.ResponseWriter, r *http.Request) (*sealed, error) {
	ctx := r.Context()
	q := r.URL.Query()
	st, err := b.open(ctx, q.Get("state"))
	if e := q.Get("error"); e != "" {
		msg := "The provider refused the sign-in: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		return st, apierr.Unauthorized("%s", msg)
	}
	if err != nil {
		return nil, err
	}
	code := q.Get("code")
	if code == "" {
		return st, apierr.Unauthorized("The provider's answer has no authorization code.")
	}
	oc, err := b.oauth(ctx)
	if err != nil {
		return st, err
	}
	tok, err := oc.Exchange(b.clientCtx(ctx), code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return st, exchangeError(err)
	}
	var who person
	if b.p.oidc {
		if who, err = b.fromIDToken(ctx, tok, st.Nonce); err != nil {
			return st, err
		}
	} else {
		if who, err = b.p.fetch(ctx, b, tok); err != nil {
			return st, badGateway(err, "The provider's user-info endpoint failed")
		}
	}
	if who.Unverified != "" {
		return st, apierr.Unauthorized("The provider has not verified the e-mail address %s of this account; verify it with the provider and sign in again.", who.Unverified)
	}
	in, err := b.e.SignInExternal(ctx, identity.External{Service: b.name, Subject: who.Subject, Email: who.Email,
		Name: who.Name, FirstName: who.FirstName, LastName: who.LastName, RoleID: b.cfg.DefaultRole,
		RefuseNew: b.cfg.AllowNewUsers != nil && !*b.cfg.AllowNewUsers})
	if err != nil {
		return st, user.APIError(err)
	}
	target := st.Redirect
	if target == "" && browser(r) {
		target = b.e.LandingURL(ctx)
	}
	if target != "" {
		user.RedirectSignedIn(w, r, target, in.Response.SessionToken)
		return st, nil
	}
	return st, writeJSON(w, in.Response)
}

// exchangeError classifies a failed code exchange: the provider refusing
// the code (wrong, replayed, expired, PKCE mismatch) is the user's 401;
// the provider refusing this service's client or redirect URL, or failing,
// is a 502.
func exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		switch {
		case re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" ||
			re.ErrorCode == "incorrect_client_credentials" || re.ErrorCode == "redirect_uri_mismatch":
			return badGateway(err, "The provider refused this service's client credentials or redirect_url ("+providerReason(re)+"); check the service's configuration")
		case status >= 500:
		case re.ErrorCode != "" || status >= 400:
			return apierr.Unauthorized("The provider refused the authorization code: %s", providerReason(re))
		}
	}
	return badGateway(err, "The provider's token endpoint failed")
}

// fromIDToken verifies the ID token of tok (signature against the
// provider's keys, issuer, audience, expiry, nonce) and reads the user
// from it, or from the user-info endpoint when the token carries no
// e-mail (the answer must be about the same subject).
func (b *Backend) fromIDToken(ctx context.Context, tok *oauth2.Token, nonce string) (person, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return person{}, badGateway(errors.New("no id_token"), "The provider's token answer has no ID token")
	}
	prov, verifier, tmpl, err := b.discover(ctx)
	if err != nil {
		return person{}, err
	}
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		return person{}, apierr.Unauthorized("The provider's ID token is not valid: %s", err.Error())
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return person{}, apierr.Unauthorized("The provider's ID token has unreadable claims.")
	}
	if tmpl != "" {
		// A multi-tenant Microsoft authority: the issuer must be the
		// template filled with the token's own tenant.
		tid, _ := claims["tid"].(string)
		if tid == "" || strings.ContainsAny(tid, "/?#") || idt.Issuer != strings.Replace(tmpl, "{tenantid}", tid, 1) {
			return person{}, apierr.Unauthorized("The provider's ID token is not valid: its issuer %q is not the one of its tenant %q.", idt.Issuer, tid)
		}
	}
	if idt.Nonce != nonce {
		return person{}, apierr.Unauthorized("The provider's ID token does not carry the nonce of this sign-in.")
	}
	if _, has := claims["email"]; !has && prov.UserInfoEndpoint() != "" {
		ui, err := prov.UserInfo(b.clientCtx(ctx), oauth2.StaticTokenSource(tok))
		if err != nil {
			return person{}, badGateway(err, "The provider's user-info endpoint failed")
		}
		if ui.Subject != idt.Subject {
			return person{}, badGateway(fmt.Errorf("user info is about %q, the ID token about %q", ui.Subject, idt.Subject), "The provider's user-info answer is about another user")
		}
		var more map[string]any
		if err := ui.Claims(&more); err != nil {
			return person{}, badGateway(err, "The provider's user-info answer is unreadable")
		}
		for k, v := range more {
			if _, ok := claims[k]; !ok && k != "sub" {
				claims[k] = v
			}
		}
	}
	p := person{Subject: idt.Subject, Name: scalar(claims["name"]), FirstName: scalar(claims["given_name"]), LastName: scalar(claims["family_name"])}
	return p.withEmail(scalar(claims["email"]), b.p.verified(claims)), nil
}

// oauth returns the client configuration, running discovery the first
// time for OpenID Connect types.
func (b *Backend) oauth(ctx context.Context) (*oauth2.Config, error) {
	oc := &oauth2.Config{ClientID: b.cfg.ClientID, ClientSecret: b.cfg.ClientSecret,
		RedirectURL: b.cfg.RedirectURL, Scopes: b.cfg.scopes(b.p)}
	if b.p.oidc {
		p, _, _, err := b.discover(ctx)
		if err != nil {
			return nil, err
		}
		oc.Endpoint = p.Endpoint()
		return oc, nil
	}
	oc.Endpoint = oauth2.Endpoint{AuthURL: firstNonEmpty(b.cfg.AuthEndpoint, b.p.authURL), TokenURL: firstNonEmpty(b.cfg.TokenEndpoint, b.p.tokenURL)}
	if b.p.name == TypeGitHub {
		oc.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	return oc, nil
}

// userURL is the plain OAuth types' user-info endpoint.
func (b *Backend) userURL() string { return firstNonEmpty(b.cfg.UserEndpoint, b.p.userURL) }

// discover returns the provider, the ID token verifier and, for a
// multi-tenant Microsoft authority, the issuer template; it reads the
// discovery document the first time (and again after a failure).
func (b *Backend) discover(ctx context.Context) (*gooidc.Provider, *gooidc.IDTokenVerifier, string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.provider != nil {
		return b.provider, b.verifier, b.issuerTemplate, nil
	}
	cctx := gooidc.ClientContext(context.WithoutCancel(ctx), b.hc)
	vc := &gooidc.Config{ClientID: b.cfg.ClientID}
	doc := b.cfg.DiscoveryDocument
	if doc == "" && b.p.issuer != nil {
		doc = b.p.issuer(b.cfg)
	}
	if doc == "" {
		pc := gooidc.ProviderConfig{IssuerURL: b.cfg.Issuer, AuthURL: b.cfg.AuthEndpoint, TokenURL: b.cfg.TokenEndpoint,
			UserInfoURL: b.cfg.UserEndpoint, JWKSURL: b.cfg.JWKSURI}
		b.provider = pc.NewProvider(cctx)
		b.verifier = b.provider.Verifier(vc)
		return b.provider, b.verifier, "", nil
	}
	issuer := strings.TrimSuffix(strings.TrimSuffix(doc, "/.well-known/openid-configuration"), "/")
	dctx, cancel := context.WithTimeout(cctx, 15*time.Second)
	defer cancel()
	if b.p.microsoft {
		// Microsoft's documents name an issuer other than their address
		// (a domain tenant's directory id, or the {tenantid} template).
		dctx = gooidc.InsecureIssuerURLContext(dctx, "")
	}
	p, err := gooidc.NewProvider(dctx, issuer)
	var mismatch *gooidc.IssuerMismatchError
	if errors.As(err, &mismatch) && strings.TrimSuffix(mismatch.Discovered, "/") == issuer {
		// The issuer ends in "/" (zitadel, Auth0, Okta's default): the
		// document's address is the same either way.
		p, err = gooidc.NewProvider(dctx, mismatch.Discovered)
	}
	if err != nil {
		return nil, nil, "", badGateway(err, "The provider's discovery document could not be read")
	}
	tmpl, v := "", p.Verifier(vc)
	if b.p.microsoft {
		// Tokens are checked against the issuer the document names
		// (fetched over TLS from the configured authority).
		var d struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.Claims(&d); err != nil || d.Issuer == "" || d.JWKSURI == "" {
			return nil, nil, "", badGateway(fmt.Errorf("discovery document of %s: no issuer or jwks_uri", issuer), "The provider's discovery document is unusable")
		}
		if strings.Contains(d.Issuer, "{tenantid}") {
			tmpl = d.Issuer
			vc.SkipIssuerCheck = true
		}
		v = gooidc.NewVerifier(d.Issuer, gooidc.NewRemoteKeySet(cctx, d.JWKSURI), vc)
	}
	b.provider, b.verifier, b.issuerTemplate = p, v, tmpl
	return p, v, tmpl, nil
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

// seal encrypts st into a state parameter, bound to the service.
func (b *Backend) seal(ctx context.Context, st sealed) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", apierr.Internal(err)
	}
	out, err := b.e.Seal(ctx, "oidc state "+b.name, plain)
	if err != nil {
		return "", user.APIError(err)
	}
	return out, nil
}

// open decrypts and checks a state parameter.
func (b *Backend) open(ctx context.Context, state string) (*sealed, error) {
	bad := apierr.Unauthorized("The sign-in state is missing, forged or expired; start the sign-in again.")
	plain, err := b.e.Open(ctx, "oidc state "+b.name, state)
	switch {
	case errors.Is(err, identity.ErrSealBroken):
		return nil, bad
	case err != nil:
		return nil, user.APIError(err)
	}
	var st sealed
	if json.Unmarshal(plain, &st) != nil || st.Service != b.name || time.Now().Unix() > st.Expires {
		return nil, bad
	}
	return &st, nil
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
