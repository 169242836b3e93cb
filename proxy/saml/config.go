package saml

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Name ID formats an SP may ask for.
const (
	NameIDEmail       = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
	NameIDUnspecified = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
	NameIDPersistent  = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
	NameIDTransient   = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
)

// Config is the `saml` service's configuration: DreamFactory's
// saml_config keys, plus the IdP metadata URL, attribute mapping and
// allow_new_users.
type Config struct {
	// DefaultRole is the role users created on first sign-in get through
	// every app.
	DefaultRole *int64 `json:"default_role"`
	// SPNameIDFormat is the NameID format asked of the IdP (default
	// e-mail address).
	SPNameIDFormat string `json:"sp_nameIDFormat"`
	// SPCert and SPPrivateKey are the SP's certificate and RSA key (PEM,
	// or base64 DER as php-saml takes them). With them the SP signs its
	// AuthnRequests, publishes the certificate in its metadata and can
	// read encrypted assertions. Optional; both or neither.
	SPCert       string `json:"sp_x509cert"`
	SPPrivateKey string `json:"sp_privateKey"`
	// RelayState is the application URL the browser returns to with the
	// session token after sign-in, when the sign-in request names none
	// (redirect=). "_token_" in it is replaced by the token; otherwise
	// ?session_token= is added.
	RelayState string `json:"relay_state"`
	// IdPEntityID, IdPSSOURL and IdPCert describe the IdP by hand: its
	// entity id (the Issuer of its answers), its single sign-on URL
	// (HTTP-Redirect binding) and its signing certificate.
	IdPEntityID string `json:"idp_entityId"`
	IdPSSOURL   string `json:"idp_singleSignOnService_url"`
	IdPCert     string `json:"idp_x509cert"`
	// IdPMetadataURL is the IdP's metadata document; when set it gives
	// the entity id, SSO URL and signing certificates (values set by hand
	// take precedence for the entity id and SSO URL).
	IdPMetadataURL string `json:"idp_metadata_url"`
	// EmailAttribute, NameAttribute, FirstNameAttribute and
	// LastNameAttribute name the assertion attributes (Name or
	// FriendlyName) read for the user. Empty: the usual names (mail,
	// email, emailaddress and their OIDs; displayName, cn; givenName;
	// sn, surname). The e-mail falls back to the NameID when it is an
	// address.
	EmailAttribute     string `json:"email_attribute"`
	NameAttribute      string `json:"name_attribute"`
	FirstNameAttribute string `json:"first_name_attribute"`
	LastNameAttribute  string `json:"last_name_attribute"`
	// IconClass is shown by clients next to the sign-in button.
	IconClass *string `json:"icon_class"`
	// AllowNewUsers creates users on first sign-in (default true).
	AllowNewUsers *bool `json:"allow_new_users"`

	spCert  *x509.Certificate
	spKey   *rsa.PrivateKey
	idpCert *x509.Certificate
}

// configKeys lists every key Config reads, for config_schema.
var configKeys = []service.ConfigField{
	{Name: "default_role", Label: "Default role", Type: "integer", Description: "Role id a user created on first sign-in gets through every app."},
	{Name: "sp_nameIDFormat", Label: "NameID format", Type: "picklist", Default: NameIDEmail,
		Values:      []string{NameIDEmail, NameIDUnspecified, NameIDPersistent, NameIDTransient},
		Description: "The NameID format asked of the identity provider."},
	{Name: "sp_x509cert", Label: "SP certificate", Type: "text", Description: "The service provider's X.509 certificate (PEM or base64 DER), published in its metadata. Optional; with sp_privateKey."},
	{Name: "sp_privateKey", Label: "SP private key", Type: "password", Description: "The service provider's RSA private key (PEM): signs AuthnRequests and decrypts encrypted assertions. Optional; with sp_x509cert."},
	{Name: "relay_state", Label: "Relay state", Type: "string", Description: "Application URL the browser returns to after sign-in when the request names none (redirect=); _token_ in it is replaced by the session token, else ?session_token= is added. A path on this host or an http(s) URL."},
	{Name: "idp_entityId", Label: "IdP entity id", Type: "string", Description: "The identity provider's entity id (Issuer). Required without idp_metadata_url."},
	{Name: "idp_singleSignOnService_url", Label: "IdP SSO URL", Type: "string", Description: "The identity provider's single sign-on URL (HTTP-Redirect binding). Required without idp_metadata_url."},
	{Name: "idp_x509cert", Label: "IdP certificate", Type: "text", Description: "The identity provider's signing certificate (PEM or base64 DER). Required without idp_metadata_url."},
	{Name: "idp_metadata_url", Label: "IdP metadata URL", Type: "string", Description: "URL of the identity provider's SAML metadata; replaces the three idp_ keys above (which take precedence when also set)."},
	{Name: "email_attribute", Label: "E-mail attribute", Type: "string", Description: "Assertion attribute holding the e-mail address (default: mail, email, emailaddress or their OIDs; else the NameID when it is an address)."},
	{Name: "name_attribute", Label: "Name attribute", Type: "string", Description: "Assertion attribute holding the display name (default: displayName, cn)."},
	{Name: "first_name_attribute", Label: "First name attribute", Type: "string", Description: "Assertion attribute holding the first name (default: givenName)."},
	{Name: "last_name_attribute", Label: "Last name attribute", Type: "string", Description: "Assertion attribute holding the last name (default: sn, surname)."},
	{Name: "icon_class", Label: "Icon class", Type: "string", Description: "CSS class of the sign-in button's icon."},
	{Name: "allow_new_users", Label: "Allow new users", Type: "boolean", Default: true, Description: "Create a user on first sign-in; when false only users seen before may sign in."},
}

// ParseConfig validates raw and reports every problem at once.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var cfg Config
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	// sp_private_key is accepted as a synonym of DreamFactory's
	// sp_privateKey.
	var alias struct {
		SPPrivateKey string `json:"sp_private_key"`
	}
	if err := json.Unmarshal(trimmed, &cfg); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	if err := json.Unmarshal(trimmed, &alias); err == nil && cfg.SPPrivateKey == "" {
		cfg.SPPrivateKey = alias.SPPrivateKey
	}
	var errs []error
	switch cfg.SPNameIDFormat {
	case "":
		cfg.SPNameIDFormat = NameIDEmail
	case NameIDEmail, NameIDUnspecified, NameIDPersistent, NameIDTransient:
	default:
		errs = append(errs, fmt.Errorf("sp_nameIDFormat %q is not one of %s, %s, %s, %s", cfg.SPNameIDFormat, NameIDEmail, NameIDUnspecified, NameIDPersistent, NameIDTransient))
	}
	if cfg.IdPMetadataURL != "" {
		if err := service.CheckHTTPURL(cfg.IdPMetadataURL); err != nil {
			errs = append(errs, fmt.Errorf("idp_metadata_url: %w", err))
		}
	} else {
		if strings.TrimSpace(cfg.IdPEntityID) == "" {
			errs = append(errs, errors.New("idp_entityId is required without idp_metadata_url"))
		}
		if cfg.IdPSSOURL == "" {
			errs = append(errs, errors.New("idp_singleSignOnService_url is required without idp_metadata_url"))
		}
		if strings.TrimSpace(cfg.IdPCert) == "" {
			errs = append(errs, errors.New("idp_x509cert is required without idp_metadata_url"))
		}
	}
	if cfg.IdPSSOURL != "" {
		if err := service.CheckHTTPURL(cfg.IdPSSOURL); err != nil {
			errs = append(errs, fmt.Errorf("idp_singleSignOnService_url: %w", err))
		}
	}
	if strings.TrimSpace(cfg.IdPCert) != "" {
		c, err := parseCert(cfg.IdPCert)
		if err != nil {
			errs = append(errs, fmt.Errorf("idp_x509cert: %w", err))
		}
		cfg.idpCert = c
	}
	hasCert, hasKey := strings.TrimSpace(cfg.SPCert) != "", strings.TrimSpace(cfg.SPPrivateKey) != ""
	switch {
	case hasCert && !hasKey:
		errs = append(errs, errors.New("sp_privateKey is required with sp_x509cert"))
	case hasKey && !hasCert:
		errs = append(errs, errors.New("sp_x509cert is required with sp_privateKey"))
	}
	if hasCert {
		c, err := parseCert(cfg.SPCert)
		if err != nil {
			errs = append(errs, fmt.Errorf("sp_x509cert: %w", err))
		}
		cfg.spCert = c
	}
	if hasKey {
		k, err := parseKey(cfg.SPPrivateKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("sp_privateKey: %w", err))
		}
		cfg.spKey = k
	}
	if cfg.spCert != nil && cfg.spKey != nil {
		if pub, ok := cfg.spCert.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(&cfg.spKey.PublicKey) {
			errs = append(errs, errors.New("sp_privateKey does not belong to sp_x509cert"))
		}
	}
	if cfg.RelayState != "" {
		if err := appURL(cfg.RelayState); err != nil {
			errs = append(errs, fmt.Errorf("relay_state: %w", err))
		}
	}
	return cfg, errors.Join(errs...)
}

// appURL checks that s is a path on this host or an absolute http(s) URL.
func appURL(s string) error {
	if isLocalPath(s) {
		return nil
	}
	if err := service.CheckHTTPURL(s); err != nil {
		return fmt.Errorf("%q is neither a path on this host nor an http(s) URL", s)
	}
	return nil
}

// isLocalPath reports whether s is a path on this host (not //host or
// /\host, which browsers read as another host).
func isLocalPath(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") &&
		!strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/\\")
}

// parseCert reads a certificate in PEM or as base64 DER.
func parseCert(s string) (*x509.Certificate, error) {
	der, err := pemOrBase64(s, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("not an X.509 certificate: %w", err)
	}
	return c, nil
}

// parseKey reads an RSA private key in PEM (PKCS #1 or PKCS #8) or as
// base64 DER.
func parseKey(s string) (*rsa.PrivateKey, error) {
	der, err := pemOrBase64(s, "")
	if err != nil {
		return nil, err
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("not an RSA private key in PKCS #1 or PKCS #8")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an RSA private key", k)
	}
	return rk, nil
}

// pemOrBase64 returns the DER bytes of s: the first PEM block (of type
// want, unless want is ""), else s as base64 with white space ignored.
func pemOrBase64(s, want string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-----BEGIN") {
		blk, _ := pem.Decode([]byte(s))
		if blk == nil {
			return nil, errors.New("malformed PEM")
		}
		if want != "" && blk.Type != want {
			return nil, fmt.Errorf("a PEM %s, not a %s", blk.Type, want)
		}
		return blk.Bytes, nil
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return nil, errors.New("neither PEM nor base64")
	}
	return der, nil
}
