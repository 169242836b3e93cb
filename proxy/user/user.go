package user

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TypeName is the service type's name.
const TypeName = "user"

// Options configures the type for every user service it builds.
type Options struct {
	// Mailer delivers reset and confirmation codes through the e-mail
	// service the configuration names; proxy.New hands the platform's
	// one Mailer. Nil: no mail can be sent (a reset is refused as
	// DreamFactory refuses it without an e-mail service).
	Mailer identity.Mailer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Throttle counts failed logins; nil means the one shared by every
	// identity engine on the same store.
	Throttle *identity.Throttle
}

// Type is the `user` service type.
type Type struct {
	opts Options
}

// NewType returns the type.
func NewType(opts Options) *Type { return &Type{opts: opts} }

// Info implements service.Type.
func (t *Type) Info() service.Info {
	return service.Info{Name: TypeName, Label: "User Management", Group: service.GroupUser,
		Description: "Login, registration, passwords and profiles of users.", Singleton: true}
}

// ValidateConfig implements service.Type.
func (t *Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(config)
	return err
}

// New implements service.Type.
func (t *Type) New(ctx context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	if deps.Store == nil {
		return nil, errors.New("the user service needs the system database")
	}
	cfg, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	opts := identity.Options{
		Logger:                  deps.Logger,
		Now:                     t.opts.Now,
		Throttle:                t.opts.Throttle,
		Mailer:                  t.opts.Mailer,
		PasswordEmailServiceID:  cfg.PasswordEmailServiceID,
		PasswordEmailTemplateID: cfg.PasswordEmailTemplateID,
		Registration: identity.Registration{Open: cfg.AllowOpenRegistration, RoleID: cfg.OpenRegRoleID,
			EmailServiceID: cfg.OpenRegEmailServiceID, EmailTemplateID: cfg.OpenRegEmailTemplateID},
	}
	if deps.Registry != nil {
		opts.Snapshot = deps.Registry.Snapshot
		opts.Changed = deps.Registry.Reload
	}
	e, err := identity.New(deps.Store, opts)
	if err != nil {
		return nil, err
	}
	si := NewSignIn(e, false)
	b := &backend{name: svc.Name, signIn: si}
	b.routes = map[string]apierr.HandlerFunc{
		"session":  delegateSignIn(deps.Registry, si.Session()),
		"register": si.Register(),
		"password": si.Password(),
		"profile":  si.Profile(),
	}
	return b, nil
}

// ServiceSignIn is a backend that signs users in through another
// provider (OpenID Connect, OAuth 2.0, LDAP): the user service hands it
// GET and POST /user/session?service=<its name>.
type ServiceSignIn interface {
	// ServeSignIn answers a sign-in request addressed to the service.
	ServeSignIn(w http.ResponseWriter, r *http.Request) error
}

// delegateSignIn passes GET and POST session requests that name a
// service (?service=) to that service's backend, and the rest to next.
func delegateSignIn(reg service.Registry, next apierr.HandlerFunc) apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := strings.TrimSpace(r.URL.Query().Get("service"))
		if name == "" && r.Method == http.MethodPost {
			name = bodyService(r)
		}
		if name == "" || reg == nil || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
			return next(w, r)
		}
		be, ok := reg.Backend(strings.ToLower(name))
		if !ok {
			be, ok = reg.Backend(name)
		}
		si, isSignIn := be.(ServiceSignIn)
		if !ok || !isSignIn {
			return apierr.BadRequest("Service '%s' is not a sign-in service.", name)
		}
		return si.ServeSignIn(w, r)
	}
}

// bodyService returns the `service` field of a POST body (JSON object or
// URL-encoded form), as DreamFactory reads it from the body or the query,
// and puts the body back for the handler.
func bodyService(r *http.Request) string {
	if r.Body == nil || r.Body == http.NoBody {
		return ""
	}
	data, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data), errReader{err}))
	if err != nil {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/x-www-form-urlencoded" {
		v, _ := url.ParseQuery(string(data))
		return strings.TrimSpace(v.Get("service"))
	}
	var body struct {
		Service any `json:"service"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	s, _ := body.Service.(string)
	return strings.TrimSpace(s)
}

// errReader answers err once the body put back is read to its end (nil:
// io.EOF), so a body that failed to read fails the handler too.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// resources lists the backend's resources in the order GET / shows them.
var resources = []struct{ Name, Label string }{
	{"password", "Password"},
	{"profile", "Profile"},
	{"register", "Register"},
	{"session", "Session"},
}

type backend struct {
	name   string
	signIn *SignIn
	routes map[string]apierr.HandlerFunc
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.HandlerFunc(b.serve).ServeHTTP(w, r)
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) error {
	res := ""
	if t := service.TargetFrom(r.Context()); t != nil {
		res = t.Resource
	}
	if res == "" {
		return b.list(w, r)
	}
	if h, ok := b.routes[res]; ok {
		return h(w, r)
	}
	return apierr.NotFound("Resource '%s' not found for service '%s'.", res, b.name)
}

// list answers GET / with the resources: names by default, names and
// labels with fields=*, bare names with as_list=true.
func (b *backend) list(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return apierr.BadRequest("%s requests without a resource are not currently supported by the '%s' service.", r.Method, b.name)
	}
	q := r.URL.Query()
	if v := strings.ToLower(q.Get("as_list")); v == "true" || v == "1" {
		names := make([]string, len(resources))
		for i, res := range resources {
			names[i] = res.Name
		}
		return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": names})
	}
	fields := q.Get("fields")
	out := make([]map[string]string, len(resources))
	for i, res := range resources {
		m := map[string]string{"name": res.Name}
		if fields == "*" || containsField(fields, "label") {
			m["label"] = res.Label
		}
		out[i] = m
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": out})
}

func containsField(list, field string) bool {
	for _, f := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(f), field) {
			return true
		}
	}
	return false
}

// Close implements service.Backend.
func (b *backend) Close() error { return nil }
