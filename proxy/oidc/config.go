package oidc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Config is the configuration of every type of this package: the `oidc`
// type's keys (DreamFactory's oidc_config), the OAuth 2.0 providers' keys
// (oauth_config) and the few a provider adds. Which keys a type reads and
// requires is in its config_schema.
type Config struct {
	// DefaultRole is the role users created on first sign-in get through
	// every app.
	DefaultRole *int64 `json:"default_role"`
	// DiscoveryDocument is the provider's issuer URL or its
	// /.well-known/openid-configuration URL (oidc; Google and Microsoft
	// have theirs built in).
	DiscoveryDocument string `json:"discovery_document"`
	// Issuer, AuthEndpoint, TokenEndpoint, UserEndpoint and JWKSURI give
	// the provider by hand when there is no discovery document. The OAuth
	// providers without ID tokens (GitHub, generic) read AuthEndpoint,
	// TokenEndpoint and UserEndpoint only.
	Issuer        string `json:"issuer"`
	AuthEndpoint  string `json:"auth_endpoint"`
	TokenEndpoint string `json:"token_endpoint"`
	UserEndpoint  string `json:"user_endpoint"`
	JWKSURI       string `json:"jwks_uri"`
	// Scopes is comma- or space-separated; empty means the provider's
	// defaults. OpenID Connect types always ask for openid.
	Scopes string `json:"scopes"`
	// ClientID and ClientSecret are the client's credentials.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// RedirectURL is where the provider sends the browser back.
	RedirectURL string `json:"redirect_url"`
	// IconClass is shown by clients next to the sign-in button.
	IconClass *string `json:"icon_class"`
	// AllowNewUsers creates users on first sign-in (default true).
	AllowNewUsers *bool `json:"allow_new_users"`

	// TenantID is the Azure AD tenant: a directory id or domain, or
	// common, organizations or consumers (oauth_azure_ad).
	TenantID string `json:"tenant_id"`
	// AuthorityURL is the Microsoft identity platform's address
	// (default https://login.microsoftonline.com).
	AuthorityURL string `json:"authority_url"`

	// IDField, EmailField, EmailVerifiedField and NameField name the
	// fields of the generic provider's user-info answer (defaults id or
	// sub, email, email_verified, name). Dotted names reach into objects.
	IDField            string `json:"id_field"`
	EmailField         string `json:"email_field"`
	EmailVerifiedField string `json:"email_verified_field"`
	NameField          string `json:"name_field"`
	// TrustEmail uses the generic provider's e-mail without a
	// verification field: set it only for a provider that gives verified
	// addresses alone.
	TrustEmail bool `json:"trust_email"`
}

// ParseConfig validates raw as an `oidc` configuration and reports every
// problem at once.
func ParseConfig(raw json.RawMessage) (Config, error) {
	return parseConfig(profiles[TypeName], raw)
}

// ParseConfigFor validates raw as the configuration of the type typ (one
// of Names) and reports every problem at once.
func ParseConfigFor(typ string, raw json.RawMessage) (Config, error) {
	p, ok := profiles[typ]
	if !ok {
		return Config{}, fmt.Errorf("unknown sign-in type %q", typ)
	}
	return parseConfig(p, raw)
}

func parseConfig(p *profile, raw json.RawMessage) (Config, error) {
	var cfg Config
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	var errs []error
	if strings.TrimSpace(cfg.ClientID) == "" {
		errs = append(errs, errors.New("client_id is required"))
	}
	if p.secretRequired && cfg.ClientSecret == "" {
		errs = append(errs, errors.New("client_secret is required"))
	}
	if cfg.RedirectURL == "" {
		errs = append(errs, errors.New("redirect_url is required"))
	} else if err := service.CheckHTTPURL(cfg.RedirectURL); err != nil {
		errs = append(errs, fmt.Errorf("redirect_url: %w", err))
	}
	// endpoint checks an optional provider address: https, or http on a
	// loopback host.
	endpoint := func(name, v string, required bool) {
		switch {
		case v == "" && required:
			errs = append(errs, fmt.Errorf("%s is required", name))
		case v != "":
			if err := providerURL(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	switch p.name {
	case TypeName:
		if cfg.DiscoveryDocument != "" {
			endpoint("discovery_document", cfg.DiscoveryDocument, true)
		} else {
			for _, f := range []struct{ name, v string }{
				{"issuer", cfg.Issuer}, {"auth_endpoint", cfg.AuthEndpoint}, {"token_endpoint", cfg.TokenEndpoint}, {"jwks_uri", cfg.JWKSURI},
			} {
				if f.v == "" {
					errs = append(errs, fmt.Errorf("%s is required without discovery_document", f.name))
				} else if err := providerURL(f.v); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
				}
			}
		}
		endpoint("user_endpoint", cfg.UserEndpoint, false)
	case TypeAzureAD:
		if t := strings.TrimSpace(cfg.TenantID); t == "" {
			errs = append(errs, errors.New("tenant_id is required (a directory id or domain, or common, organizations or consumers)"))
		} else if strings.ContainsAny(t, "/?#% ") {
			errs = append(errs, fmt.Errorf("tenant_id: %q is not a directory id or domain", t))
		}
		endpoint("authority_url", cfg.AuthorityURL, false)
		endpoint("discovery_document", cfg.DiscoveryDocument, false)
	case TypeGeneric:
		endpoint("auth_endpoint", cfg.AuthEndpoint, true)
		endpoint("token_endpoint", cfg.TokenEndpoint, true)
		endpoint("user_endpoint", cfg.UserEndpoint, true)
	default:
		if p.oidc {
			endpoint("discovery_document", cfg.DiscoveryDocument, false)
		} else {
			endpoint("auth_endpoint", cfg.AuthEndpoint, false)
			endpoint("token_endpoint", cfg.TokenEndpoint, false)
			endpoint("user_endpoint", cfg.UserEndpoint, false)
		}
	}
	return cfg, errors.Join(errs...)
}

// providerURL checks an address of the provider: the code, tokens and
// user data travel to and from it, so it must be https; plain http is
// admitted for a provider on this machine only (localhost, 127.0.0.0/8,
// ::1), for development.
func providerURL(s string) error {
	if err := service.CheckHTTPURL(s); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if u.Scheme == "https" || loopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%q must be an https URL (plain http is admitted for a provider on localhost only)", s)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// scopeList splits a scopes setting on commas and spaces.
func scopeList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// scopes returns the scopes to ask for: the configured ones, else the
// provider's defaults; openid first for OpenID Connect providers.
func (c Config) scopes(p *profile) []string {
	list := scopeList(c.Scopes)
	if len(list) == 0 {
		list = p.scopes
	}
	if !p.oidc {
		return append([]string(nil), list...)
	}
	out := []string{"openid"}
	for _, s := range list {
		if s != "openid" {
			out = append(out, s)
		}
	}
	return out
}
