package ldap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// failure classifies why a sign-in through the directory did not succeed;
// the backend maps each to one status.
type failure int

const (
	// failCredentials: the directory refused the user name or password,
	// or has no such user (401, counted by the throttle).
	failCredentials failure = iota
	// failAccount: the password was right but the account may not sign
	// in (disabled, locked, expired; 401 with the reason, counted).
	failAccount
	// failNoEntry: the bind worked but the user's entry cannot be found
	// under base_dn (401 with the reason).
	failNoEntry
	// failUnavailable: the directory cannot be reached or is busy (503).
	failUnavailable
	// failTLS: the TLS handshake or StartTLS failed (502).
	failTLS
	// failDirectory: the directory refused the service account, a search
	// or the address is not allowed (502).
	failDirectory
)

// dirError is a failed sign-in: Msg is safe to show; Err is the cause
// (never holds the password).
type dirError struct {
	Kind failure
	Msg  string
	Err  error
}

func (e *dirError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *dirError) Unwrap() error { return e.Err }

// entry is what the directory says about a user who signed in.
type entry struct {
	DN                                      string
	Username                                string
	FirstName, LastName, Email, DisplayName string
	Groups                                  []string
}

// directory signs users in against one configured server.
type directory struct {
	cfg  *Config
	dial upstream.DialFunc
}

// authenticate binds as the user with password and reads the user's
// entry and groups.
func (d *directory) authenticate(ctx context.Context, username, password string) (*entry, error) {
	conn, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var e *goldap.Entry
	if d.cfg.kind == TypeAD {
		e, err = d.bindAD(conn, username, password)
	} else {
		e, err = d.bindLDAP(conn, username, password)
	}
	if err != nil {
		return nil, err
	}
	name := e.GetEqualFoldAttributeValue(d.cfg.UsernameAttribute)
	if name == "" {
		name = bareName(username)
	}
	out := &entry{DN: e.DN, Username: name,
		FirstName:   e.GetEqualFoldAttributeValue(d.cfg.AttributeMap[FieldFirstName]),
		LastName:    e.GetEqualFoldAttributeValue(d.cfg.AttributeMap[FieldLastName]),
		Email:       e.GetEqualFoldAttributeValue(d.cfg.AttributeMap[FieldEmail]),
		DisplayName: e.GetEqualFoldAttributeValue(d.cfg.AttributeMap[FieldDisplayName]),
	}
	if out.Groups, err = d.groups(conn, e, name); err != nil {
		return nil, err
	}
	return out, nil
}

// connect dials the server and secures the connection (LDAPS or
// StartTLS) before anything is sent.
func (d *directory) connect(ctx context.Context) (*goldap.Conn, error) {
	timeout := d.cfg.timeout()
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := d.dial(dctx, "tcp", d.cfg.addr)
	if err != nil {
		if errors.As(err, new(*upstream.NotAllowedError)) {
			return nil, &dirError{failDirectory, fmt.Sprintf("The upstream allow list does not permit the LDAP server %s.", d.cfg.addr), err}
		}
		return nil, &dirError{failUnavailable, fmt.Sprintf("The LDAP server %s cannot be reached; try again later.", d.cfg.addr), err}
	}
	tc := &tls.Config{ServerName: d.cfg.server, RootCAs: d.cfg.roots, MinVersion: tls.VersionTLS12}
	var conn *goldap.Conn
	if d.cfg.TLS == TLSLDAPS {
		sc := tls.Client(raw, tc)
		if err := sc.HandshakeContext(dctx); err != nil {
			raw.Close()
			return nil, tlsFailure(d.cfg.addr, err)
		}
		conn = goldap.NewConn(sc, true)
		conn.Start()
		conn.SetTimeout(timeout)
		return conn, nil
	}
	conn = goldap.NewConn(raw, false)
	conn.Start()
	conn.SetTimeout(timeout)
	// StartTLS has no context: closing the connection ends it.
	stop := context.AfterFunc(dctx, func() { conn.Close() })
	err = conn.StartTLS(tc)
	stop()
	if err != nil {
		conn.Close()
		var le *goldap.Error
		switch {
		case errors.As(err, &le) && le.ResultCode == goldap.ErrorNetwork && strings.Contains(err.Error(), "TLS handshake failed"):
			return nil, tlsFailure(d.cfg.addr, err)
		case errors.As(err, &le) && le.ResultCode < goldap.ErrorNetwork:
			return nil, &dirError{failTLS, fmt.Sprintf("The LDAP server %s refused StartTLS (%s); it needs TLS configured, or use ldaps://.", d.cfg.addr, diagnostic(err)), err}
		}
		return nil, &dirError{failUnavailable, fmt.Sprintf("The LDAP server %s did not complete StartTLS; try again later.", d.cfg.addr), err}
	}
	return conn, nil
}

// tlsFailure is the 502 of a TLS handshake that failed.
func tlsFailure(addr string, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &dirError{failUnavailable, fmt.Sprintf("The LDAP server %s did not complete the TLS handshake in time; try again later.", addr), err}
	}
	reason := err.Error()
	// StartTLS's error carries the handshake's as text only.
	switch {
	case errors.As(err, new(x509.UnknownAuthorityError)) || strings.Contains(reason, "certificate signed by unknown authority"):
		reason = "its certificate is not signed by a trusted CA (give it in ca_cert)"
	case errors.As(err, new(x509.HostnameError)) || strings.Contains(reason, "certificate is valid for") || strings.Contains(reason, "doesn't contain any IP SANs"):
		reason = "its certificate does not name the host"
	case strings.Contains(reason, "expired or is not yet valid"):
		reason = "its certificate has expired or is not yet valid"
	}
	return &dirError{failTLS, fmt.Sprintf("TLS with the LDAP server %s failed: %s.", addr, reason), err}
}

// bindLDAP finds the user's entry (as the service account, or
// anonymously) and binds as it.
func (d *directory) bindLDAP(conn *goldap.Conn, username, password string) (*goldap.Entry, error) {
	if d.cfg.Username != "" {
		if err := d.bindService(conn, d.cfg.Username); err != nil {
			return nil, err
		}
	}
	e, err := d.find(conn, d.userFilter(d.cfg.UsernameAttribute, username), username)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, &dirError{failCredentials, "no such user", nil}
	}
	if err := d.bindUser(conn, e.DN, password); err != nil {
		return nil, err
	}
	return d.reread(conn, e), nil
}

// bindAD binds as the user by user principal name (user@account_suffix)
// or DOMAIN\user and finds the user's entry; with a service account, it
// finds the entry first and binds as its DN, as DreamFactory does.
func (d *directory) bindAD(conn *goldap.Conn, username, password string) (*goldap.Entry, error) {
	var filter, bindName string
	switch {
	case strings.Contains(username, `\`):
		filter = d.userFilter("sAMAccountName", bareName(username))
		bindName = username
	case strings.Contains(username, "@"):
		filter = d.userFilter("userPrincipalName", username)
		bindName = username
	default:
		filter = d.userFilter(d.cfg.UsernameAttribute, username)
		bindName = username
		if d.cfg.AccountSuffix != "" {
			bindName = username + "@" + d.cfg.AccountSuffix
		}
	}
	if d.cfg.Username != "" {
		svc := d.cfg.Username
		if !strings.ContainsAny(svc, `@\=`) && d.cfg.AccountSuffix != "" {
			svc += "@" + d.cfg.AccountSuffix
		}
		if err := d.bindService(conn, svc); err != nil {
			return nil, err
		}
		e, err := d.find(conn, filter, username)
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, &dirError{failCredentials, "no such user", nil}
		}
		if err := d.bindUser(conn, e.DN, password); err != nil {
			return nil, err
		}
		return d.reread(conn, e), nil
	}
	if err := d.bindUser(conn, bindName, password); err != nil {
		return nil, err
	}
	e, err := d.find(conn, filter, username)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, &dirError{failNoEntry, fmt.Sprintf("The directory accepted the credentials but has no entry for %q under %s.", username, d.cfg.BaseDN), nil}
	}
	return e, nil
}

// bindService binds as the configured service account.
func (d *directory) bindService(conn *goldap.Conn, name string) error {
	err := conn.Bind(name, d.cfg.Password)
	switch {
	case err == nil:
		return nil
	case goldap.IsErrorWithCode(err, goldap.LDAPResultInvalidCredentials):
		return &dirError{failDirectory, "The LDAP server refused the service's own account (username and password of the service's config).", err}
	}
	return ldapFailure(err, "bind as the service account")
}

// bindUser binds as the user: a refusal is failCredentials, or
// failAccount with Active Directory's reason when the password was right.
func (d *directory) bindUser(conn *goldap.Conn, name, password string) error {
	err := conn.Bind(name, password)
	switch {
	case err == nil:
		return nil
	case goldap.IsErrorWithCode(err, goldap.LDAPResultInvalidCredentials):
		if reason := adReason(diagnostic(err)); reason != "" {
			return &dirError{failAccount, reason, err}
		}
		return &dirError{failCredentials, "wrong password", err}
	case goldap.IsErrorWithCode(err, goldap.LDAPResultInvalidDNSyntax):
		return &dirError{failCredentials, "the name is not a DN the server accepts", err}
	}
	return ldapFailure(err, "bind as the user")
}

// userAttributes are the attributes read from a user's entry.
func (d *directory) userAttributes() []string {
	attrs := []string{d.cfg.UsernameAttribute, "memberOf"}
	for _, k := range []string{FieldFirstName, FieldLastName, FieldEmail, FieldDisplayName} {
		attrs = append(attrs, d.cfg.AttributeMap[k])
	}
	return attrs
}

// userFilter matches attr = value, value escaped.
func (d *directory) userFilter(attr, value string) string {
	return "(" + attr + "=" + goldap.EscapeFilter(value) + ")"
}

// find searches base_dn for the one entry filter matches; nil when none.
func (d *directory) find(conn *goldap.Conn, filter, username string) (*goldap.Entry, error) {
	req := goldap.NewSearchRequest(d.cfg.BaseDN, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 2, d.cfg.Timeout, false,
		filter, d.userAttributes(), nil)
	res, err := conn.Search(req)
	if err != nil && !goldap.IsErrorWithCode(err, goldap.LDAPResultSizeLimitExceeded) {
		if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
			return nil, &dirError{failDirectory, fmt.Sprintf("The LDAP server has no entry %s (the service's base_dn).", d.cfg.BaseDN), err}
		}
		return nil, ldapFailure(err, "search for the user")
	}
	if res == nil || len(res.Entries) == 0 {
		return nil, nil
	}
	if len(res.Entries) > 1 {
		return nil, &dirError{failNoEntry, fmt.Sprintf("More than one directory entry matches %q; sign-in needs exactly one.", username), nil}
	}
	return res.Entries[0], nil
}

// reread reads the user's entry again as the user (who may see more of
// it than the service account); the first read when that fails.
func (d *directory) reread(conn *goldap.Conn, e *goldap.Entry) *goldap.Entry {
	req := goldap.NewSearchRequest(e.DN, goldap.ScopeBaseObject, goldap.NeverDerefAliases, 1, d.cfg.Timeout, false,
		"(objectClass=*)", d.userAttributes(), nil)
	res, err := conn.Search(req)
	if err != nil || len(res.Entries) != 1 {
		return e
	}
	return res.Entries[0]
}

// groups returns the DNs of the user's groups: memberOf when the entry
// has it (Active Directory, OpenLDAP's memberof overlay), else (ldap) the
// groupOfNames, groupOfUniqueNames and posixGroup entries naming the user
// under group_base_dn.
func (d *directory) groups(conn *goldap.Conn, e *goldap.Entry, username string) ([]string, error) {
	if vs := e.GetEqualFoldAttributeValues("memberOf"); len(vs) > 0 || d.cfg.kind == TypeAD {
		return vs, nil
	}
	base := d.cfg.GroupBaseDN
	if base == "" {
		base = d.cfg.BaseDN
	}
	dn := goldap.EscapeFilter(e.DN)
	filter := "(|(&(objectClass=groupOfNames)(member=" + dn + "))(&(objectClass=groupOfUniqueNames)(uniqueMember=" + dn +
		"))(&(objectClass=posixGroup)(memberUid=" + goldap.EscapeFilter(username) + ")))"
	req := goldap.NewSearchRequest(base, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, d.cfg.Timeout, false,
		filter, []string{"1.1"}, nil)
	res, err := conn.SearchWithPaging(req, 500)
	if err != nil {
		return nil, ldapFailure(err, "search for the user's groups")
	}
	out := make([]string, 0, len(res.Entries))
	for _, g := range res.Entries {
		out = append(out, g.DN)
	}
	return out, nil
}

// ldapFailure classifies an LDAP error of step: the network, a busy or
// unavailable server is 503; anything else the server refused is 502.
func ldapFailure(err error, step string) error {
	var le *goldap.Error
	if errors.As(err, &le) {
		switch le.ResultCode {
		case goldap.ErrorNetwork, goldap.LDAPResultTimeout, goldap.LDAPResultBusy, goldap.LDAPResultUnavailable,
			goldap.LDAPResultTimeLimitExceeded, goldap.LDAPResultUnwillingToPerform:
			return &dirError{failUnavailable, "The LDAP server did not answer (" + step + "); try again later.", err}
		case goldap.LDAPResultInsufficientAccessRights:
			return &dirError{failDirectory, "The LDAP server does not allow the " + step + "; give the service an account that may (username and password).", err}
		}
		return &dirError{failDirectory, fmt.Sprintf("The LDAP server refused the %s: %s.", step, diagnostic(err)), err}
	}
	return &dirError{failUnavailable, "The LDAP server did not answer (" + step + "); try again later.", err}
}

// diagnostic is the result name and server message of an LDAP error.
func diagnostic(err error) string {
	var le *goldap.Error
	if !errors.As(err, &le) {
		return err.Error()
	}
	msg := goldap.LDAPResultCodeMap[le.ResultCode]
	if le.Err != nil && le.Err.Error() != "" {
		msg += ": " + le.Err.Error()
	}
	return msg
}

// adSubCode finds Active Directory's reason in a bind refusal's message
// ("80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext
// error, data 533, v4563").
var adSubCode = regexp.MustCompile(`(?i)\bdata ([0-9a-f]{3}),`)

// adReason returns the reason Active Directory gives for refusing a
// bind whose password may have been right; "" for a wrong user name or
// password (525, 52e) or another server.
func adReason(msg string) string {
	m := adSubCode.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	switch strings.ToLower(m[1]) {
	case "530":
		return "The account may not sign in at this time."
	case "531":
		return "The account may not sign in from this workstation."
	case "532":
		return "The account's password has expired."
	case "533":
		return "The account is disabled in the directory."
	case "701":
		return "The account has expired."
	case "773":
		return "The account's password must be changed before signing in."
	case "775":
		return "The account is locked in the directory."
	}
	return ""
}

// bareName is the account name of DOMAIN\user or user@domain, else name.
func bareName(name string) string {
	if i := strings.LastIndex(name, `\`); i >= 0 {
		return name[i+1:]
	}
	if i := strings.LastIndex(name, "@"); i > 0 {
		return name[:i]
	}
	return name
}
