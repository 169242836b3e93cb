package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Names of the types of this package (DreamFactory's, but for
// oauth_generic, which DreamFactory does not have).
const (
	// TypeName is OpenID Connect with any provider.
	TypeName = "oidc"
	// TypeGoogle is Google (OpenID Connect, built-in discovery).
	TypeGoogle = "oauth_google"
	// TypeAzureAD is Microsoft Entra ID / Azure AD (OpenID Connect,
	// v2.0 endpoints of one tenant).
	TypeAzureAD = "oauth_azure_ad"
	// TypeMicrosoftLive is personal Microsoft accounts (OpenID Connect,
	// the consumers tenant).
	TypeMicrosoftLive = "oauth_microsoft-live"
	// TypeGitHub is GitHub (OAuth 2.0; the user from the REST API).
	TypeGitHub = "oauth_github"
	// TypeLinkedIn is LinkedIn (OpenID Connect, built-in discovery).
	TypeLinkedIn = "oauth_linkedin"
	// TypeBitbucket is Bitbucket Cloud (OAuth 2.0; the user from the
	// REST API).
	TypeBitbucket = "oauth_bitbucket"
	// TypeFacebook is Facebook (OAuth 2.0; the user from the Graph API).
	TypeFacebook = "oauth_facebook"
	// TypeGeneric is any OAuth 2.0 provider with a user-info endpoint
	// that answers JSON.
	TypeGeneric = "oauth_generic"
)

// Names lists the types of this package in the order Types returns them.
var Names = []string{TypeName, TypeGoogle, TypeAzureAD, TypeMicrosoftLive, TypeGitHub, TypeLinkedIn, TypeBitbucket, TypeFacebook, TypeGeneric}

// person is the user a provider vouches for, once its answer is verified.
// Email is set only when the provider says the address is verified;
// Unverified holds an address the provider says it has not verified.
type person struct {
	Subject, Email, Name, FirstName, LastName string
	Unverified                                string
}

// verdict is what a provider says of an e-mail address.
type verdict int

const (
	// unsaid: no word on verification (the address is not used).
	unsaid verdict = iota
	// verifiedEmail: the provider vouches for the address.
	verifiedEmail
	// unverifiedEmail: the provider says it has not verified it.
	unverifiedEmail
)

// claimVerdict reads a verification claim: true (a JSON boolean or the
// string "true", as some providers send) vouches, false refuses, anything
// else says nothing.
func claimVerdict(v any) verdict {
	switch x := v.(type) {
	case bool:
		if x {
			return verifiedEmail
		}
		return unverifiedEmail
	case string:
		switch strings.ToLower(x) {
		case "true":
			return verifiedEmail
		case "false":
			return unverifiedEmail
		}
	}
	return unsaid
}

// withEmail sets the e-mail of p by the provider's verdict.
func (p person) withEmail(email string, v verdict) person {
	email = strings.TrimSpace(email)
	if !strings.Contains(email, "@") {
		return p
	}
	switch v {
	case verifiedEmail:
		p.Email = email
	case unverifiedEmail:
		p.Unverified = email
	}
	return p
}

// profile is what differs between the types: labels, built-in endpoints
// and scopes, and how the user is learnt.
type profile struct {
	name, label, description, icon string
	// oidc: the provider issues ID tokens, verified as OpenID Connect
	// says; else the user comes from fetch.
	oidc bool
	// secretRequired: the type refuses a configuration without
	// client_secret (DreamFactory's oauth_config).
	secretRequired bool
	// issuer returns the discovery address when the configuration gives
	// none ("" when the type has no default).
	issuer func(cfg Config) string
	// microsoft: the discovery document's issuer may differ from its
	// address and may be the template .../{tenantid}/v2.0, which is
	// filled with the token's tid claim.
	microsoft bool
	// authURL, tokenURL and userURL are the plain OAuth endpoints used
	// when the configuration gives none.
	authURL, tokenURL, userURL string
	// scopes are the scopes asked for when the configuration has none.
	scopes []string
	// verified is what an ID token's or user-info answer's claims say
	// of the e-mail (OpenID Connect types).
	verified func(claims map[string]any) verdict
	// fetch learns the user with the access token (plain OAuth types).
	fetch func(ctx context.Context, b *Backend, tok *oauth2.Token) (person, error)
}

// MicrosoftAuthority is the Microsoft identity platform's default
// authority_url.
const MicrosoftAuthority = "https://login.microsoftonline.com"

func microsoftIssuer(tenant string) func(Config) string {
	return func(cfg Config) string {
		base := strings.TrimSuffix(cfg.AuthorityURL, "/")
		if base == "" {
			base = MicrosoftAuthority
		}
		t := tenant
		if t == "" {
			t = strings.TrimSpace(cfg.TenantID)
		}
		return base + "/" + t + "/v2.0"
	}
}

var profiles = map[string]*profile{
	TypeName: {name: TypeName, label: "OpenID Connect", oidc: true, scopes: []string{"email", "profile"}, verified: emailVerified,
		description: "Sign-in through any OpenID Connect provider (authorization code with PKCE, ID token verified)."},
	TypeGoogle: {name: TypeGoogle, label: "Google OAuth", icon: "fa-google", oidc: true, secretRequired: true,
		issuer: func(Config) string { return "https://accounts.google.com" }, scopes: []string{"email", "profile"}, verified: emailVerified,
		description: "Sign-in with Google accounts (OpenID Connect: authorization code with PKCE, ID token verified)."},
	TypeAzureAD: {name: TypeAzureAD, label: "Azure Active Directory OAuth", icon: "fa-windows", oidc: true, secretRequired: true,
		issuer: microsoftIssuer(""), microsoft: true, scopes: []string{"email", "profile"}, verified: microsoftVerified,
		description: "Sign-in with Microsoft Entra ID (Azure AD) accounts of a tenant (OpenID Connect, v2.0 endpoints)."},
	TypeMicrosoftLive: {name: TypeMicrosoftLive, label: "Microsoft Live OAuth", icon: "fa-windows", oidc: true, secretRequired: true,
		issuer: microsoftIssuer("consumers"), microsoft: true, scopes: []string{"email", "profile"}, verified: microsoftVerified,
		description: "Sign-in with personal Microsoft accounts (OpenID Connect, the consumers tenant)."},
	TypeGitHub: {name: TypeGitHub, label: "GitHub OAuth", icon: "fa-github", secretRequired: true,
		authURL: "https://github.com/login/oauth/authorize", tokenURL: "https://github.com/login/oauth/access_token",
		userURL: "https://api.github.com/user", scopes: []string{"read:user", "user:email"}, fetch: fetchGitHub,
		description: "Sign-in with GitHub accounts (OAuth 2.0 with PKCE; the user and its verified primary e-mail from the REST API)."},
	TypeLinkedIn: {name: TypeLinkedIn, label: "LinkedIn OAuth", icon: "fa-linkedin", oidc: true, secretRequired: true,
		issuer: func(Config) string { return "https://www.linkedin.com/oauth" }, scopes: []string{"email", "profile"}, verified: emailVerified,
		description: "Sign-in with LinkedIn accounts (Sign In with LinkedIn using OpenID Connect; ID token verified)."},
	TypeBitbucket: {name: TypeBitbucket, label: "Bitbucket OAuth", icon: "fa-bitbucket", secretRequired: true,
		authURL: "https://bitbucket.org/site/oauth2/authorize", tokenURL: "https://bitbucket.org/site/oauth2/access_token",
		userURL: "https://api.bitbucket.org/2.0/user", scopes: []string{"account", "email"}, fetch: fetchBitbucket,
		description: "Sign-in with Bitbucket Cloud accounts (OAuth 2.0; the user and its confirmed primary e-mail from the REST API)."},
	TypeFacebook: {name: TypeFacebook, label: "Facebook OAuth", icon: "fa-facebook", secretRequired: true,
		authURL: "https://www.facebook.com/v21.0/dialog/oauth", tokenURL: "https://graph.facebook.com/v21.0/oauth/access_token",
		userURL: "https://graph.facebook.com/v21.0/me?fields=id,name,first_name,last_name,email", scopes: []string{"email", "public_profile"}, fetch: fetchFacebook,
		description: "Sign-in with Facebook accounts (OAuth 2.0; the user from the Graph API's /me). Facebook does not say whether the e-mail is verified, so users are keyed by their Facebook id."},
	TypeGeneric: {name: TypeGeneric, label: "Generic OAuth 2.0", icon: "fa-sign-in", secretRequired: true, fetch: fetchGeneric,
		description: "Sign-in through any OAuth 2.0 provider (authorization code with PKCE) whose user-info endpoint answers JSON; the fields are mapped in the configuration."},
}

// emailVerified: OpenID Connect's email_verified.
func emailVerified(c map[string]any) verdict { return claimVerdict(c["email_verified"]) }

// microsoftVerified: Microsoft's tokens carry email_verified only for
// some accounts; xms_edov (the e-mail's domain is verified by the
// tenant's owner, an optional claim) vouches too. Without either the
// address is not used: an Entra ID user's mail attribute can be set to
// anything by the tenant's administrators.
func microsoftVerified(c map[string]any) verdict {
	if claimVerdict(c["xms_edov"]) == verifiedEmail {
		return verifiedEmail
	}
	return claimVerdict(c["email_verified"])
}

// maxUserInfo caps a user-info answer.
const maxUserInfo = 1 << 20

// getJSON fetches u with the access token into v. A non-2xx answer is a
// *statusError.
func (b *Backend) getJSON(ctx context.Context, u string, tok *oauth2.Token, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("user info %s: %w", u, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Accept", "application/json")
	if b.p.name == TypeGitHub {
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return fmt.Errorf("user info: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxUserInfo+1))
	if err != nil {
		return fmt.Errorf("user info %s: %w", u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &statusError{url: u, status: resp.StatusCode}
	}
	if len(data) > maxUserInfo {
		return fmt.Errorf("user info %s: the answer is larger than %d bytes", u, maxUserInfo)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("user info %s: not JSON: %w", u, err)
	}
	return nil
}

// statusError is a user-info answer with a status other than 2xx.
type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("user info %s answered HTTP %d", e.url, e.status)
}

// fetchGitHub reads GET /user (id, login, name) and GET /user/emails
// (the primary address, if GitHub marks it verified). The public e-mail
// of /user is never used: GitHub does not say it is verified.
func fetchGitHub(ctx context.Context, b *Backend, tok *oauth2.Token) (person, error) {
	userURL := b.userURL()
	var u struct {
		ID    json.Number `json:"id"`
		Login string      `json:"login"`
		Name  string      `json:"name"`
	}
	if err := b.getJSON(ctx, userURL, tok, &u); err != nil {
		return person{}, err
	}
	if _, err := strconv.ParseInt(u.ID.String(), 10, 64); err != nil {
		return person{}, fmt.Errorf("user info %s: no numeric id", userURL)
	}
	p := person{Subject: u.ID.String(), Name: u.Name}
	if p.Name == "" {
		p.Name = u.Login
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	found, err := b.getEmails(ctx, userURL, tok, &emails)
	if err != nil {
		return person{}, err
	}
	if !found {
		return p, nil
	}
	for _, e := range emails {
		p = p.withPrimary(e.Email, e.Primary, e.Verified)
	}
	return p, nil
}

// getEmails reads the e-mail list at {userURL}/emails into v. found is
// false, with no error, when the token may not read it (403 or 404: it
// lacks the e-mail scope), which leaves the user without an e-mail rather
// than failing the sign-in.
func (b *Backend) getEmails(ctx context.Context, userURL string, tok *oauth2.Token, v any) (found bool, err error) {
	err = b.getJSON(ctx, strings.TrimSuffix(userURL, "/")+"/emails", tok, v)
	var se *statusError
	if errors.As(err, &se) && (se.status == http.StatusForbidden || se.status == http.StatusNotFound) {
		return false, nil
	}
	return err == nil, err
}

// withPrimary takes email when the provider marks it the primary address,
// as verified or not as the provider says.
func (p person) withPrimary(email string, primary, verified bool) person {
	if !primary {
		return p
	}
	if verified {
		return p.withEmail(email, verifiedEmail)
	}
	return p.withEmail(email, unverifiedEmail)
}

// fetchBitbucket reads GET /2.0/user (uuid, display_name) and GET
// /2.0/user/emails (the primary address, if Bitbucket marks it
// confirmed).
func fetchBitbucket(ctx context.Context, b *Backend, tok *oauth2.Token) (person, error) {
	userURL := b.userURL()
	var u struct {
		UUID        string `json:"uuid"`
		DisplayName string `json:"display_name"`
		Nickname    string `json:"nickname"`
	}
	if err := b.getJSON(ctx, userURL, tok, &u); err != nil {
		return person{}, err
	}
	id := strings.Trim(u.UUID, "{}")
	if id == "" || strings.ContainsAny(id, "@ /") {
		return person{}, fmt.Errorf("user info %s: no uuid", userURL)
	}
	p := person{Subject: id, Name: firstNonEmpty(u.DisplayName, u.Nickname)}
	var emails struct {
		Values []struct {
			Email     string `json:"email"`
			Primary   bool   `json:"is_primary"`
			Confirmed bool   `json:"is_confirmed"`
		} `json:"values"`
	}
	found, err := b.getEmails(ctx, userURL, tok, &emails)
	if err != nil {
		return person{}, err
	}
	if !found {
		return p, nil
	}
	for _, e := range emails.Values {
		p = p.withPrimary(e.Email, e.Primary, e.Confirmed)
	}
	return p, nil
}

// fetchFacebook reads the Graph API's /me. Facebook gives no verification
// flag, so its e-mail is not used (the user is keyed by its id).
func fetchFacebook(ctx context.Context, b *Backend, tok *oauth2.Token) (person, error) {
	var u struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	}
	if err := b.getJSON(ctx, b.userURL(), tok, &u); err != nil {
		return person{}, err
	}
	if _, err := strconv.ParseUint(u.ID, 10, 64); err != nil {
		return person{}, fmt.Errorf("user info %s: no numeric id", b.userURL())
	}
	return person{Subject: u.ID, Name: u.Name, FirstName: u.FirstName, LastName: u.LastName}, nil
}

// fetchGeneric reads the configured user-info endpoint and maps its
// fields.
func fetchGeneric(ctx context.Context, b *Backend, tok *oauth2.Token) (person, error) {
	var doc map[string]any
	if err := b.getJSON(ctx, b.userURL(), tok, &doc); err != nil {
		return person{}, err
	}
	cfg := b.cfg
	var p person
	if cfg.IDField != "" {
		p.Subject = scalar(lookup(doc, cfg.IDField))
	} else if p.Subject = scalar(lookup(doc, "id")); p.Subject == "" {
		p.Subject = scalar(lookup(doc, "sub"))
	}
	if p.Subject == "" {
		return person{}, fmt.Errorf("user info %s: no user id in field %q", b.userURL(), firstNonEmpty(cfg.IDField, "id"))
	}
	v := claimVerdict(lookup(doc, firstNonEmpty(cfg.EmailVerifiedField, "email_verified")))
	if cfg.TrustEmail && v == unsaid {
		v = verifiedEmail
	}
	p = p.withEmail(scalar(lookup(doc, firstNonEmpty(cfg.EmailField, "email"))), v)
	p.Name = scalar(lookup(doc, firstNonEmpty(cfg.NameField, "name")))
	p.FirstName = scalar(lookup(doc, "given_name"))
	p.LastName = scalar(lookup(doc, "family_name"))
	return p, nil
}

// lookup follows a dotted path through nested objects.
func lookup(doc map[string]any, path string) any {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// scalar renders a string or number; "" for anything else.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Types returns every type of this package, each with a nil HTTPClient.
func Types() []service.Type {
	out := make([]service.Type, len(Names))
	for i, n := range Names {
		out[i] = Type{Name: n}
	}
	return out
}
