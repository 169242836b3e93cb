package ldap

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// Type names.
const (
	// TypeLDAP is a standard LDAP directory (OpenLDAP and the like).
	TypeLDAP = "ldap"
	// TypeAD is Active Directory.
	TypeAD = "adldap"
)

// Messages of a sign-in (DreamFactory's texts).
const (
	MsgMissingCredentials = "No username and/or password provided."
	MsgInvalidCredentials = "Invalid username and password provided."
)

// Type is the `ldap` or `adldap` service type: Kind is TypeLDAP or TypeAD.
type Type struct {
	Kind string
}

// Types returns both types.
func Types() []service.Type { return []service.Type{Type{Kind: TypeLDAP}, Type{Kind: TypeAD}} }

// Info implements service.Type.
func (t Type) Info() service.Info {
	if t.Kind == TypeAD {
		return service.Info{Name: TypeAD, Label: "Active Directory", Group: service.GroupLDAP,
			Description: "Sign-in with Active Directory credentials (bind over LDAPS or StartTLS), groups mapped to roles."}
	}
	return service.Info{Name: TypeLDAP, Label: "Standard LDAP", Group: service.GroupLDAP,
		Description: "Sign-in with LDAP directory credentials (bind over LDAPS or StartTLS), groups mapped to roles."}
}

// ValidateConfig implements service.Type.
func (t Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(t.Kind, config)
	return err
}

// ConfigSchema describes the configuration for /system/service_type.
func (t Type) ConfigSchema() []service.ConfigField {
	user, attr := "Service account DN for the user search; empty: anonymous search.", "uid"
	if t.Kind == TypeAD {
		user, attr = "Service account (name, UPN or DN) for the user search; empty: the user's own bind searches.", "sAMAccountName"
	}
	fields := []service.ConfigField{
		{Name: "host", Label: "Host", Type: "string", Required: true, Description: "ldaps://host[:636], or ldap://host[:389] upgraded with StartTLS. Plain LDAP is refused."},
		{Name: "base_dn", Label: "Base DN", Type: "string", Required: true, Description: "Where users (and, by default, groups) are searched, e.g. dc=example,dc=org."},
	}
	if t.Kind == TypeAD {
		fields = append(fields, service.ConfigField{Name: "account_suffix", Label: "Account suffix", Type: "string",
			Description: "Domain appended to a bare user name for the bind (user@example.com); DOMAIN\\user and user@domain are used as typed."})
	}
	return append(fields,
		service.ConfigField{Name: "default_role", Label: "Default role", Type: "integer", Description: "Role id given through every app when no mapped group applies."},
		service.ConfigField{Name: "map_group_to_role", Label: "Map groups to roles", Type: "boolean", Default: false,
			Description: "Set the user's role through each app from group_roles on every sign-in; defaults to true when group_roles is given."},
		service.ConfigField{Name: "group_roles", Label: "Group roles", Type: "array",
			Description: `List of {"dn": group DN, "role_id": id, "app_id": id or null}; the first group the user is in wins, per app.`},
		service.ConfigField{Name: "group_base_dn", Label: "Group base DN", Type: "string", Description: "Where groups naming the user (member, uniqueMember, memberUid) are searched when the entry has no memberOf; default base_dn."},
		service.ConfigField{Name: "username_attribute", Label: "Username attribute", Type: "string", Default: attr, Description: "Attribute the sign-in name is matched against."},
		service.ConfigField{Name: "attribute_map", Label: "Attribute map", Type: "object",
			Description: "Directory attribute of first_name (givenName), last_name (sn), email (mail) and display_name (displayName; cn for ldap)."},
		service.ConfigField{Name: "username", Label: "Service account", Type: "string", Description: user},
		service.ConfigField{Name: "password", Label: "Service account password", Type: "password"},
		service.ConfigField{Name: "tls", Label: "TLS", Type: "picklist", Values: []string{TLSLDAPS, TLSStartTLS},
			Description: "Default from the host: ldaps:// is ldaps, anything else starttls. Certificates are always verified."},
		service.ConfigField{Name: "ca_cert", Label: "CA certificate", Type: "text", Description: "PEM certificates trusted for the server instead of the system's roots."},
		service.ConfigField{Name: "timeout", Label: "Timeout", Type: "integer", Default: int(DefaultTimeout / time.Second), Description: "Seconds for connecting and for each request."},
	)
}

// New implements service.Type.
func (t Type) New(ctx context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	if deps.Store == nil {
		return nil, errors.New("the " + t.Kind + " service needs the system database")
	}
	cfg, err := ParseConfig(t.Kind, svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	allow, err := upstream.ParseAllowList(deps.UpstreamAllow)
	if err != nil {
		return nil, err
	}
	opts := identity.Options{Logger: deps.Logger}
	b := &Backend{name: svc.Name, cfg: cfg, log: deps.Logger}
	if deps.Registry != nil {
		opts.Snapshot = deps.Registry.Snapshot
		opts.Changed = deps.Registry.Reload
		b.snapshot = deps.Registry.Snapshot
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.e, err = identity.New(deps.Store, opts); err != nil {
		return nil, err
	}
	b.dir = &directory{cfg: cfg, dial: allow.Dial(&net.Dialer{Timeout: cfg.timeout()}, nil)}
	return b, nil
}

// Backend signs users in against one directory.
type Backend struct {
	name     string
	cfg      *Config
	e        *identity.Engine
	dir      *directory
	log      *slog.Logger
	snapshot func() *store.Snapshot
}

var _ user.ServiceSignIn = (*Backend)(nil)

// ServeHTTP answers requests to the service itself: it has no resources;
// sign-in is POST /api/v2/user/session with service=<name>.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if t := service.TargetFrom(r.Context()); t != nil && t.Resource != "" {
			return apierr.NotFound("Resource '%s' not found for service '%s'.", t.Resource, b.name)
		}
		if r.Method != http.MethodGet {
			return apierr.BadRequest("%s requests without a resource are not currently supported by the '%s' service.", r.Method, b.name)
		}
		return writeJSON(w, map[string]any{"resource": []string{}})
	}).ServeHTTP(w, r)
}

// Close implements service.Backend.
func (b *Backend) Close() error { return nil }

// answer is the session response plus the user's groups, as DreamFactory
// answers an LDAP sign-in.
type answer struct {
	identity.Response
	GroupMembership []string `json:"groupMembership"`
}

// ServeSignIn signs a user in with the fields username (or email),
// password and duration (minutes, as for a password login) of a POST to
// /user/session.
func (b *Backend) ServeSignIn(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return apierr.BadRequest("Sign-in through the LDAP service '%s' is a POST with username and password.", b.name)
	}
	ctx := r.Context()
	p, err := user.ReadFields(r)
	if err != nil {
		return err
	}
	username := strings.TrimSpace(field(p, "username"))
	if username == "" {
		username = strings.TrimSpace(field(p, "email"))
	}
	password := field(p, "password")
	if username == "" || password == "" {
		return apierr.BadRequest(MsgMissingCredentials)
	}
	if len(username) > 256 || len(password) > 1024 {
		return apierr.BadRequest("The username or password is too long.")
	}
	lifetime, browser, err := b.e.LoginDuration(p)
	if err != nil {
		return user.APIError(err)
	}
	// DOMAIN\user, user@domain and user are one account for the throttle.
	keys := identity.AttemptKeys(b.name, bareName(username), identity.ClientKey(r.RemoteAddr))
	if err := b.e.CheckAttempt(ctx, keys); err != nil {
		return user.APIError(err)
	}
	ent, err := b.dir.authenticate(ctx, username, password)
	if err != nil {
		return b.failed(ctx, keys, username, err)
	}
	b.e.SucceedAttempt(keys)
	x := identity.External{Service: b.name, Subject: ent.Username, Email: ent.Email, Name: ent.DisplayName,
		FirstName: ent.FirstName, LastName: ent.LastName, RoleID: b.cfg.DefaultRole, Lifetime: lifetime, Browser: browser}
	if *b.cfg.MapGroupToRole {
		roles, err := b.appRoles(ent.Groups)
		if err != nil {
			return err
		}
		x.AppRoles = roles
	}
	in, err := b.e.SignInExternal(ctx, x)
	if err != nil {
		return user.APIError(err)
	}
	groups := ent.Groups
	if groups == nil {
		groups = []string{}
	}
	if in.Browser {
		w.Header().Set(user.HeaderSessionLifetime, "browser")
	} else {
		w.Header().Set(user.HeaderSessionLifetime, strconv.FormatInt(int64(in.Lifetime/time.Minute), 10))
	}
	return writeJSON(w, answer{Response: in.Response, GroupMembership: groups})
}

// failed turns a directory failure into the answer, counting wrong
// credentials for the throttle. The password is never logged.
func (b *Backend) failed(ctx context.Context, keys identity.Keys, username string, err error) error {
	var de *dirError
	if !errors.As(err, &de) {
		return apierr.Internal(err)
	}
	switch de.Kind {
	case failCredentials:
		b.log.InfoContext(ctx, "ldap sign-in refused", "service", b.name, "username", username, "reason", de.Msg)
		return user.APIError(b.e.FailAttempt(ctx, keys, MsgInvalidCredentials))
	case failAccount:
		b.log.InfoContext(ctx, "ldap sign-in refused", "service", b.name, "username", username, "reason", de.Msg)
		return user.APIError(b.e.FailAttempt(ctx, keys, de.Msg))
	case failNoEntry:
		return apierr.Unauthorized("%s", de.Msg)
	case failUnavailable:
		b.log.WarnContext(ctx, "ldap server unavailable", "service", b.name, "error", de.Error())
		return apierr.Unavailable("%s", de.Msg).WithCause(err)
	}
	b.log.WarnContext(ctx, "ldap sign-in failed", "service", b.name, "error", de.Error())
	return apierr.BadGateway("%s", de.Msg).WithCause(err)
}

// appRoles returns the role of the user through each app from the
// group mapping (first group the user is in, for that app), else
// default_role. A mapped role that does not exist is a 500 that names it.
func (b *Backend) appRoles(groups []string) (func(int64) (int64, bool), error) {
	dns := make([]*goldap.DN, 0, len(groups))
	for _, g := range groups {
		if dn, err := goldap.ParseDN(g); err == nil {
			dns = append(dns, dn)
		}
	}
	var matched []GroupRole
	for i, gr := range b.cfg.GroupRoles {
		for _, dn := range dns {
			if dn.EqualFold(b.cfg.groupDNs[i]) {
				matched = append(matched, gr)
				break
			}
		}
	}
	var snap *store.Snapshot
	if b.snapshot != nil {
		snap = b.snapshot()
	}
	check := func(id int64) error {
		if snap != nil && snap.Role(id) == nil {
			return apierr.InternalMsg("The service '%s' gives role %d, which does not exist; fix its group_roles or default_role.", b.name, id)
		}
		return nil
	}
	for _, gr := range matched {
		if err := check(gr.RoleID); err != nil {
			return nil, err
		}
	}
	if b.cfg.DefaultRole != nil {
		if err := check(*b.cfg.DefaultRole); err != nil {
			return nil, err
		}
	}
	def := b.cfg.DefaultRole
	return func(app int64) (int64, bool) {
		for _, gr := range matched {
			if gr.AppID == nil || *gr.AppID == app {
				return gr.RoleID, true
			}
		}
		if def != nil {
			return *def, true
		}
		return 0, false
	}, nil
}

// field returns p[name] when it is a string.
func field(p identity.Fields, name string) string {
	s, _ := p[name].(string)
	return s
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	_ = apierr.WriteJSON(w, http.StatusOK, v)
	return nil
}
