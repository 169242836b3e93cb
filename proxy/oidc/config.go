package oidc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Config is the `oidc` service's configuration (DreamFactory's
// oidc_config).
type Config struct {
	// DefaultRole is the role users created on first sign-in get through
	// every app.
	DefaultRole *int64 `json:"default_role"`
	// DiscoveryDocument is the provider's issuer URL or its
	// /.well-known/openid-configuration URL.
	DiscoveryDocument string `json:"discovery_document"`
	// Issuer, AuthEndpoint, TokenEndpoint, UserEndpoint and JWKSURI give
	// the provider by hand when there is no discovery document.
	Issuer        string `json:"issuer"`
	AuthEndpoint  string `json:"auth_endpoint"`
	TokenEndpoint string `json:"token_endpoint"`
	UserEndpoint  string `json:"user_endpoint"`
	JWKSURI       string `json:"jwks_uri"`
	// Scopes is comma-separated; openid is always asked for.
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
}

// ParseConfig validates raw and reports every problem at once.
func ParseConfig(raw json.RawMessage) (Config, error) {
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
	if cfg.RedirectURL == "" {
		errs = append(errs, errors.New("redirect_url is required"))
	} else if err := httpURL(cfg.RedirectURL); err != nil {
		errs = append(errs, fmt.Errorf("redirect_url: %w", err))
	}
	if cfg.DiscoveryDocument != "" {
		if err := httpURL(cfg.DiscoveryDocument); err != nil {
			errs = append(errs, fmt.Errorf("discovery_document: %w", err))
		}
	} else {
		for _, f := range []struct{ name, v string }{
			{"issuer", cfg.Issuer}, {"auth_endpoint", cfg.AuthEndpoint}, {"token_endpoint", cfg.TokenEndpoint}, {"jwks_uri", cfg.JWKSURI},
		} {
			if f.v == "" {
				errs = append(errs, fmt.Errorf("%s is required without discovery_document", f.name))
			} else if err := httpURL(f.v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
			}
		}
	}
	if cfg.UserEndpoint != "" {
		if err := httpURL(cfg.UserEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("user_endpoint: %w", err))
		}
	}
	return cfg, errors.Join(errs...)
}

// httpURL checks that s is an absolute http(s) URL.
func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	return nil
}

// scopes returns the scopes to ask for, openid first.
func (c Config) scopes() []string {
	out := []string{"openid"}
	for _, s := range strings.FieldsFunc(c.Scopes, func(r rune) bool { return r == ',' || r == ' ' }) {
		if s != "openid" {
			out = append(out, s)
		}
	}
	if len(out) == 1 {
		out = append(out, "email", "profile")
	}
	return out
}
