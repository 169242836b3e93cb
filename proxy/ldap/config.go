package ldap

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	goldap "github.com/go-ldap/ldap/v3"
)

// TLS modes of Config.TLS.
const (
	// TLSLDAPS speaks TLS from the first byte (ldaps://, port 636).
	TLSLDAPS = "ldaps"
	// TLSStartTLS connects in the clear and upgrades with StartTLS before
	// anything else is sent (ldap://, port 389).
	TLSStartTLS = "starttls"
)

// DefaultTimeout bounds connecting and each request to the directory.
const DefaultTimeout = 10 * time.Second

// Attribute map keys: the user fields a directory attribute can fill.
const (
	FieldFirstName   = "first_name"
	FieldLastName    = "last_name"
	FieldEmail       = "email"
	FieldDisplayName = "display_name"
)

// Config is the configuration of an `ldap` or `adldap` service
// (DreamFactory's ldap_config, plus the keys Portcullis adds for TLS,
// attributes and group mapping).
type Config struct {
	// DefaultRole is the role a user gets through every app when no
	// mapped group applies; nil: none.
	DefaultRole *int64 `json:"default_role"`
	// Host is the directory: ldaps://host[:636], ldap://host[:389]
	// (StartTLS), or host[:port].
	Host string `json:"host"`
	// BaseDN is where users (and, by default, groups) are searched.
	BaseDN string `json:"base_dn"`
	// AccountSuffix (Active Directory) completes a bare user name to the
	// user principal name user@AccountSuffix for the bind.
	AccountSuffix string `json:"account_suffix"`
	// Username and Password are a service account that searches for the
	// user before the user's own bind: a DN (or, for Active Directory, a
	// user name or UPN). Empty: an anonymous search (ldap), or the search
	// runs as the user after the user's bind (adldap).
	Username string `json:"username"`
	Password string `json:"password"`
	// MapGroupToRole turns the group mapping on; it defaults to true when
	// GroupRoles is not empty.
	MapGroupToRole *bool `json:"map_group_to_role"`
	// GroupRoles maps directory groups to roles, first match wins.
	GroupRoles []GroupRole `json:"group_roles"`
	// GroupBaseDN is where groups are searched when the user entry has no
	// memberOf; default BaseDN.
	GroupBaseDN string `json:"group_base_dn"`
	// UsernameAttribute is the attribute the sign-in name is matched
	// against: uid (ldap) or sAMAccountName (adldap) by default.
	UsernameAttribute string `json:"username_attribute"`
	// AttributeMap maps user fields (first_name, last_name, email,
	// display_name) to directory attributes; unset fields take the
	// defaults givenName, sn, mail, displayName (cn for ldap).
	AttributeMap map[string]string `json:"attribute_map"`
	// TLS is ldaps or starttls; default from the host's scheme (ldaps://
	// is ldaps, anything else starttls). Plain LDAP is refused: the
	// user's password would cross the network in clear.
	TLS string `json:"tls"`
	// CACert is PEM: the certificates trusted for the directory's TLS
	// instead of the system's roots (a private CA or a self-signed
	// server certificate).
	CACert string `json:"ca_cert"`
	// Timeout is the connection and request timeout in seconds (10).
	Timeout int `json:"timeout"`

	// Filled by ParseConfig.
	kind     string
	addr     string // host:port
	server   string // host name for certificate verification
	roots    *x509.CertPool
	groupDNs []*goldap.DN
}

// GroupRole maps one directory group to a role.
type GroupRole struct {
	// DN is the group's distinguished name (compared case-insensitively).
	DN string `json:"dn"`
	// RoleID is the role given to members.
	RoleID int64 `json:"role_id"`
	// AppID limits the mapping to one app; nil: every app.
	AppID *int64 `json:"app_id"`
}

// insecureKeys are settings other clients use to turn certificate
// verification off; Portcullis refuses them.
var insecureKeys = []string{"insecure", "insecure_skip_verify", "tls_insecure_skip_verify", "skip_verify", "tls_skip_verify"}

var attrName = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)$`)

// ParseConfig validates raw as the configuration of a service of type kind
// (ldap or adldap) and reports every problem at once.
func ParseConfig(kind string, raw json.RawMessage) (*Config, error) {
	cfg := &Config{kind: kind}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, errors.New("config must be a JSON object")
	}
	var errs []error
	// DreamFactory stores booleans as 0/1; accept both before decoding.
	if v, ok := m["map_group_to_role"]; ok {
		switch strings.TrimSpace(string(v)) {
		case "0", `"0"`, `"false"`:
			m["map_group_to_role"] = json.RawMessage("false")
		case "1", `"1"`, `"true"`:
			m["map_group_to_role"] = json.RawMessage("true")
		}
	}
	for _, k := range insecureKeys {
		if v, ok := m[k]; ok && !isFalse(v) {
			errs = append(errs, fmt.Errorf("%s: certificate verification cannot be turned off; give the directory's CA in ca_cert", k))
		}
		delete(m, k)
	}
	norm, _ := json.Marshal(m)
	if err := json.Unmarshal(norm, cfg); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: must be a %s", te.Field, jsonKind(te.Type.String()))
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg.kind = kind

	errs = append(errs, cfg.parseHost()...)
	if strings.TrimSpace(cfg.BaseDN) == "" {
		errs = append(errs, errors.New("base_dn is required"))
	} else if _, err := goldap.ParseDN(cfg.BaseDN); err != nil {
		errs = append(errs, fmt.Errorf("base_dn: %q is not a distinguished name", cfg.BaseDN))
	}
	if cfg.GroupBaseDN != "" {
		if _, err := goldap.ParseDN(cfg.GroupBaseDN); err != nil {
			errs = append(errs, fmt.Errorf("group_base_dn: %q is not a distinguished name", cfg.GroupBaseDN))
		}
	}
	if cfg.DefaultRole != nil && *cfg.DefaultRole <= 0 {
		errs = append(errs, errors.New("default_role must be a role id or null"))
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		errs = append(errs, errors.New("username and password (the service account) go together"))
	}
	cfg.AccountSuffix = strings.TrimPrefix(strings.TrimSpace(cfg.AccountSuffix), "@")
	if strings.ContainsAny(cfg.AccountSuffix, "@ \\/,=") {
		errs = append(errs, fmt.Errorf("account_suffix: %q is not a domain such as example.com", cfg.AccountSuffix))
	}
	if cfg.UsernameAttribute == "" {
		cfg.UsernameAttribute = "uid"
		if kind == TypeAD {
			cfg.UsernameAttribute = "sAMAccountName"
		}
	} else if !attrName.MatchString(cfg.UsernameAttribute) {
		errs = append(errs, fmt.Errorf("username_attribute: %q is not an attribute name", cfg.UsernameAttribute))
	}
	errs = append(errs, cfg.parseAttributeMap()...)
	errs = append(errs, cfg.parseGroupRoles()...)
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = int(DefaultTimeout / time.Second)
	case cfg.Timeout < 1 || cfg.Timeout > 300:
		errs = append(errs, errors.New("timeout must be from 1 to 300 seconds"))
	}
	if strings.TrimSpace(cfg.CACert) != "" {
		cfg.roots = x509.NewCertPool()
		if !cfg.roots.AppendCertsFromPEM([]byte(cfg.CACert)) {
			errs = append(errs, errors.New("ca_cert: no PEM certificate found"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseHost reads host and tls into addr, server and TLS.
func (c *Config) parseHost() []error {
	h := strings.TrimSpace(c.Host)
	if h == "" {
		return []error{errors.New("host is required (ldaps://host, ldap://host with StartTLS, or host)")}
	}
	scheme := ""
	if i := strings.Index(h, "://"); i >= 0 {
		u, err := url.Parse(h)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return []error{fmt.Errorf("host: %q is not ldaps://host[:port] or ldap://host[:port]", c.Host)}
		}
		scheme = strings.ToLower(u.Scheme)
		h = u.Host
	}
	var errs []error
	mode := strings.ToLower(strings.TrimSpace(c.TLS))
	switch mode {
	case "", TLSLDAPS, TLSStartTLS:
	case "none", "off", "false", "plain", "0":
		errs = append(errs, errors.New("tls: plain LDAP would send the users' passwords in clear; use ldaps or starttls"))
	default:
		errs = append(errs, fmt.Errorf("tls: %q is not ldaps or starttls", c.TLS))
	}
	switch scheme {
	case "":
	case "ldaps":
		if mode == TLSStartTLS {
			errs = append(errs, errors.New("tls: starttls contradicts the host's ldaps:// scheme"))
		}
		mode = TLSLDAPS
	case "ldap":
		if mode == TLSLDAPS {
			errs = append(errs, errors.New("tls: ldaps contradicts the host's ldap:// scheme; use ldaps://"))
		}
	case "ldapi":
		errs = append(errs, errors.New("host: ldapi:// (a local socket) is not supported; use ldaps:// or ldap:// with StartTLS"))
	default:
		errs = append(errs, fmt.Errorf("host: scheme %q is not ldaps or ldap", scheme))
	}
	if mode == "" {
		mode = TLSStartTLS
	}
	c.TLS = mode
	port := "389"
	if mode == TLSLDAPS {
		port = "636"
	}
	host, p, err := net.SplitHostPort(h)
	if err != nil {
		host = strings.Trim(h, "[]")
	} else {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			errs = append(errs, fmt.Errorf("host: port %q is not a port number", p))
		}
		port = p
	}
	if host == "" || strings.ContainsAny(host, "/ @") {
		errs = append(errs, fmt.Errorf("host: %q has no valid host name", c.Host))
	}
	c.server = host
	c.addr = net.JoinHostPort(host, port)
	return errs
}

// parseAttributeMap checks attribute_map and fills in the defaults.
func (c *Config) parseAttributeMap() []error {
	defaults := map[string]string{FieldFirstName: "givenName", FieldLastName: "sn", FieldEmail: "mail", FieldDisplayName: "displayName"}
	if c.kind == TypeLDAP {
		defaults[FieldDisplayName] = "cn"
	}
	var errs []error
	keys := make([]string, 0, len(c.AttributeMap))
	for k := range c.AttributeMap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := c.AttributeMap[k]
		if _, known := defaults[k]; !known {
			errs = append(errs, fmt.Errorf("attribute_map: %q is not one of first_name, last_name, email, display_name", k))
			continue
		}
		if !attrName.MatchString(v) {
			errs = append(errs, fmt.Errorf("attribute_map.%s: %q is not an attribute name", k, v))
		}
	}
	out := make(map[string]string, len(defaults))
	for k, v := range defaults {
		out[k] = v
		if w := c.AttributeMap[k]; w != "" {
			out[k] = w
		}
	}
	c.AttributeMap = out
	return errs
}

// parseGroupRoles checks group_roles and parses its DNs.
func (c *Config) parseGroupRoles() []error {
	var errs []error
	c.groupDNs = make([]*goldap.DN, len(c.GroupRoles))
	for i, g := range c.GroupRoles {
		dn, err := goldap.ParseDN(g.DN)
		if err != nil || strings.TrimSpace(g.DN) == "" {
			errs = append(errs, fmt.Errorf("group_roles[%d].dn: %q is not a distinguished name", i, g.DN))
		}
		c.groupDNs[i] = dn
		if g.RoleID <= 0 {
			errs = append(errs, fmt.Errorf("group_roles[%d].role_id must be a role id", i))
		}
		if g.AppID != nil && *g.AppID <= 0 {
			errs = append(errs, fmt.Errorf("group_roles[%d].app_id must be an app id or null", i))
		}
	}
	if c.MapGroupToRole == nil {
		on := len(c.GroupRoles) > 0
		c.MapGroupToRole = &on
	}
	return errs
}

// timeout is Timeout as a duration.
func (c *Config) timeout() time.Duration { return time.Duration(c.Timeout) * time.Second }

// isFalse reports whether a JSON value is false, 0, "" or null.
func isFalse(v json.RawMessage) bool {
	switch strings.TrimSpace(string(v)) {
	case "false", "0", `""`, "null", `"false"`, `"0"`:
		return true
	}
	return false
}

// jsonKind names a Go type for an error message.
func jsonKind(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "whole number"
	case t == "bool" || t == "*bool":
		return "boolean"
	case strings.HasPrefix(t, "[]"):
		return "list"
	case strings.HasPrefix(t, "map"):
		return "object"
	}
	return "string"
}
