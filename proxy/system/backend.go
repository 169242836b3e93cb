package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/julienschmidt/httprouter"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Options wires the system type to the engines it fronts.
type Options struct {
	// LimitStore holds the rate-limit counters: the store the rate-limit
	// stage counts in. system/limit_cache reads and resets them, and a
	// deleted limit's counters are cleared. Nil: limit_cache answers 501.
	LimitStore *limiter.Store
	// Mailer delivers administrators' password-reset codes; proxy.New
	// hands the platform's one Mailer. Nil: no mail can be sent.
	Mailer identity.Mailer
	// Now is the clock of session tokens; nil means time.Now.
	Now func() time.Time
	// Throttle counts failed administrator logins; nil means the one
	// shared by every identity engine on the same store.
	Throttle *identity.Throttle
	// SignIn puts the administrator's own resources (admin/session,
	// admin/password, admin/profile) on the wire over the identity engine
	// the backend builds; proxy.New sets it to the user package's
	// administrators' variant (user.NewSignIn(e, true)). Nil: those
	// resources answer 501 and are not documented.
	SignIn func(e *identity.Engine) SignIn
	// Extensions are more resources served under /system/{name} and
	// everything below it (schema contracts, say), with the same access
	// rule as the built-in ones. A name may not shadow a built-in resource.
	Extensions map[string]http.Handler
}

// SignIn serves and documents the administrator's own resources.
type SignIn interface {
	// Resource returns the handler of session, password or profile.
	Resource(name string) (apierr.HandlerFunc, bool)
	// Document adds the resources to the service's document.
	Document(doc *openapi3.T)
}

// Type is the `system` service type.
type Type struct {
	opts Options
}

// NewType returns the system service type.
func NewType(opts Options) *Type { return &Type{opts: opts} }

// Info describes the type (the spec's "system", a singleton).
func (t *Type) Info() service.Info {
	for _, info := range service.Generic {
		if info.Name == "system" {
			return info
		}
	}
	return service.Info{Name: "system", Label: "System Management", Group: service.GroupSystem, Singleton: true}
}

// ValidateConfig accepts an empty configuration object: the system service
// has no settings of its own.
func (t *Type) ValidateConfig(config json.RawMessage) error {
	if len(strings.TrimSpace(string(config))) == 0 || string(config) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(config, &m); err != nil || m == nil {
		return errors.New("config must be a JSON object")
	}
	return nil
}

// New builds the backend. It needs the system store.
func (t *Type) New(ctx context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	if deps.Store == nil {
		return nil, errors.New("the system service needs a system database")
	}
	if deps.Registry == nil {
		return nil, errors.New("the system service needs the service registry")
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	aopts := identity.Options{
		Logger:   log,
		Now:      t.opts.Now,
		Throttle: t.opts.Throttle,
		Mailer:   t.opts.Mailer,
		Snapshot: deps.Registry.Snapshot,
	}
	if aopts.Mailer != nil {
		aopts.Mailer = adminMailer{Mailer: aopts.Mailer, snapshot: deps.Registry.Snapshot}
	}
	a, err := identity.New(deps.Store, aopts)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	for name := range t.opts.Extensions {
		if name == "" || strings.ContainsAny(name, "/:*") || contains(builtinResources, name) {
			return nil, fmt.Errorf("system: extension %q: not a resource name, or the name of a built-in resource", name)
		}
	}
	b := &Backend{
		identity: a,
		svc:      svc,
		deps:     deps,
		st:       deps.Store,
		db:       deps.Store.DB,
		log:      log.With("service", svc.Name),
		opts:     t.opts,
		models:   map[string]model{},
	}
	if t.opts.SignIn != nil {
		b.signIn = t.opts.SignIn(a)
	}
	b.build()
	return b, nil
}

// Backend serves /api/v2/system/.
type Backend struct {
	identity *identity.Engine
	// signIn serves admin/session, admin/password and admin/profile (nil:
	// 501).
	signIn SignIn
	svc    *store.Service
	deps   service.Deps
	st     *store.Store
	db     *bun.DB
	log    *slog.Logger
	opts   Options

	models    map[string]model
	endpoints []string // resource names served as tables, in listing order
	router    *httprouter.Router

	serviceT *table[store.Service]
	appT     *table[store.App]
	roleT    *table[store.Role]
	accessT  *table[store.RoleServiceAccess]
	uarT     *table[store.UserAppRole]
	adminT   *table[store.User]
	userT    *table[store.User]
	anyUserT *table[store.User]
	corsT    *table[store.CORS]
	limitT   *table[store.Limit]
	lookupT  *table[store.Lookup]
	childLT  *table[store.Lookup]
	customT  *table[store.Custom]
	emailT   *table[store.EmailTemplate]
	scriptT  *table[store.EventScript]
}

// model returns a lazy reference to the resource named name, for
// relations between resources defined in any order.
func (b *Backend) model(name string) func() model {
	return func() model {
		m, ok := b.models[name]
		if !ok {
			panic("system: unknown model " + name)
		}
		return m
	}
}

// register binds t and records it under its name.
func register[T any](b *Backend, t *table[T]) *table[T] {
	t.bind(b.db)
	b.models[t.name] = t
	return t
}

// build defines the resources and the routes.
func (b *Backend) build() {
	b.models["limit_cache"] = limitCacheModel{b}
	b.serviceT = register(b, b.serviceTable())
	b.appT = register(b, b.appTable())
	b.roleT = register(b, b.roleTable())
	b.accessT = register(b, b.accessTable())
	b.uarT = register(b, b.userAppRoleTable())
	b.adminT = register(b, b.userTable("admin", true, true))
	b.userT = register(b, b.userTable("user", false, true))
	b.anyUserT = register(b, b.userTable("any_user", false, false))
	b.corsT = register(b, b.corsTable())
	b.limitT = register(b, b.limitTable())
	b.lookupT = register(b, b.lookupTable(true))
	b.childLT = register(b, b.lookupTable(false))
	b.customT = register(b, b.customTable())
	b.emailT = register(b, b.emailTemplateTable())
	b.scriptT = register(b, b.eventScriptTable())

	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NotFound = apierr.HandlerFunc(func(w http.ResponseWriter, req *http.Request) error {
		if err := requireAdmin(req); err != nil {
			return err
		}
		return apierr.NotFound("Resource '%s' not found for service '%s'.", strings.Trim(req.URL.Path, "/"), b.svc.Name)
	})
	r.MethodNotAllowed = apierr.HandlerFunc(func(w http.ResponseWriter, req *http.Request) error {
		if err := requireAdmin(req); err != nil {
			return err
		}
		return apierr.MethodNotAllowed(req.Method)
	})
	b.router = r

	b.handle("/", b.serveRoot, http.MethodGet)
	tables := []endpoint{b.adminT, b.userT, b.appT, b.serviceT, b.roleT, b.corsT, b.limitT,
		b.lookupT, b.customT, b.emailT, b.scriptT}
	for _, t := range tables {
		t := t
		name := t.resourceName()
		b.endpoints = append(b.endpoints, name)
		b.handle("/"+name, func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
			return t.collection(b, w, r)
		}, allVerbs...)
		if name == "admin" {
			continue // admin/{id} shares its level with session, password and profile
		}
		b.handle("/"+name+"/:key", func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
			return t.record(b, w, r, ps.ByName("key"))
		}, allVerbs...)
	}
	for _, m := range append(allVerbs, http.MethodHead) {
		b.router.Handle(m, "/admin/:key", b.adminSub)
	}
	b.handle("/service_type", b.serveServiceTypes, http.MethodGet)
	b.handle("/service_type/:name", b.serveServiceTypes, http.MethodGet)
	b.handle("/script_type", b.serveScriptTypes, http.MethodGet)
	b.handle("/script_type/:name", b.serveScriptTypes, http.MethodGet)
	b.router.Handle(http.MethodGet, "/environment", b.open(b.serveEnvironment))
	b.router.Handle(http.MethodHead, "/environment", b.open(b.serveEnvironment))
	b.handle("/constant", b.serveConstants, http.MethodGet)
	b.handle("/constant/:name", b.serveConstants, http.MethodGet)
	b.handle("/event", b.serveEvents, http.MethodGet)
	b.handle("/cache", b.serveCache, http.MethodGet, http.MethodDelete)
	b.handle("/cache/*rest", b.serveCache, http.MethodDelete)
	b.handle("/package", b.servePackage, http.MethodGet, http.MethodPost)
	b.handle("/limit_cache", b.serveLimitCache, http.MethodGet, http.MethodDelete)
	b.handle("/limit_cache/:id", b.serveLimitCache, http.MethodGet, http.MethodDelete)
	b.routeContracts()
	for name, h := range b.opts.Extensions {
		h := h
		serve := func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
			h.ServeHTTP(w, r)
			return nil
		}
		b.handle("/"+name, serve, append(allVerbs, http.MethodHead)...)
		b.handle("/"+name+"/*rest", serve, append(allVerbs, http.MethodHead)...)
	}
}

// builtinResources are the names the backend serves itself.
var builtinResources = []string{"admin", "user", "app", "service", "role", "cors", "limit", "lookup", "custom",
	"email_template", "event_script", "service_type", "script_type", "environment", "constant", "event", "cache", "package", "limit_cache",
	"schema_contract"}

var allVerbs = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// handler is a route's handler; it returns its error.
type handler func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error

// handle registers an administrators-only route; a GET route answers HEAD
// too.
func (b *Backend) handle(path string, h handler, methods ...string) {
	if contains(methods, http.MethodGet) && !contains(methods, http.MethodHead) {
		methods = append(methods[:len(methods):len(methods)], http.MethodHead)
	}
	for _, m := range methods {
		b.router.Handle(m, path, func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
			if err := requireAdmin(r); err != nil {
				apierr.Write(w, err)
				return
			}
			if err := h(w, r, ps); err != nil {
				apierr.Write(w, err)
			}
		})
	}
}

// open adapts a route that needs no administrator.
func (b *Backend) open(h handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if err := h(w, r, ps); err != nil {
			apierr.Write(w, err)
		}
	}
}

// requireAdmin refuses callers that are neither signed-in administrators
// nor allowed by their role: the RBAC stage marks calls a role entry for
// this service granted (caller.RoleGranted), as DreamFactory lets roles
// delegate system components such as user/* to users who are not
// administrators.
func requireAdmin(r *http.Request) error {
	id := caller.IdentityFrom(r.Context())
	if id != nil && id.Admin || caller.RoleGranted(r.Context()) {
		return nil
	}
	return apierr.Forbidden("Access Forbidden. Admin endpoint used by non-admin: only system administrators may use this resource.")
}

// ServeHTTP routes a request below /api/v2/system/.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := ""
	if t := service.TargetFrom(r.Context()); t != nil {
		res = t.Resource
	} else {
		res = strings.Trim(r.URL.Path, "/")
	}
	// A query that does not parse (a raw ';') would lose parameters
	// silently, a filter among them.
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		apierr.Write(w, apierr.BadRequest("Invalid query string: %v", err))
		return
	}
	inner := new(http.Request)
	*inner = *withSecrets(r)
	u := *r.URL
	u.Path, u.RawPath = "/"+res, ""
	inner.URL = &u
	b.router.ServeHTTP(w, inner)
}

// Close releases nothing: the backend shares the store's pool.
func (b *Backend) Close() error { return nil }

// serveRoot lists the system resources, as GET /api/v2/system does in
// DreamFactory.
func (b *Backend) serveRoot(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	names := append([]string{}, b.endpoints...)
	names = append(names, "service_type", "script_type", "environment", "constant", "event", "cache", "package", "limit_cache", "schema_contract")
	if boolParam(r.URL.Query().Get("as_list")) {
		return apierr.WriteJSON(w, http.StatusOK, object{{"resource", names}})
	}
	list := make([]object, len(names))
	for i, n := range names {
		list[i] = object{{"name", n}}
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", list}})
}

// adminSub serves /admin/{key}: the session, password and profile
// resources of the signed-in administrator, or the admin record with that
// id.
func (b *Backend) adminSub(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	key := ps.ByName("key")
	var err error
	switch key {
	case "session", "password", "profile":
		err = b.serveAdminSelf(w, r, key)
	default:
		if err = requireAdmin(r); err == nil {
			err = b.adminT.record(b, w, r, key)
		}
	}
	if err != nil {
		apierr.Write(w, err)
	}
}

// serveAdminSelf serves the administrator's own resources through
// Options.SignIn. session (sign-in, session info, refresh, logout) and the
// POST of password (reset request and reset, or a change with a session)
// need no administrator, as in DreamFactory; profile and the other verbs
// of password do.
func (b *Backend) serveAdminSelf(w http.ResponseWriter, r *http.Request, what string) error {
	switch what {
	case "password":
		if r.Method != http.MethodPost {
			if err := requireAdmin(r); err != nil {
				return err
			}
		}
	case "profile":
		if err := requireAdmin(r); err != nil {
			return err
		}
	}
	var h apierr.HandlerFunc
	if b.signIn != nil {
		h, _ = b.signIn.Resource(what)
	}
	if h == nil {
		return apierr.NotImplemented("The administrator's %s is not served by this stack.", what)
	}
	return h(w, r)
}

// adminMailer sends administrators' reset mail as the user service's
// configuration says now (password_email_service_id and
// password_email_template_id), as DreamFactory does: the system service is
// not rebuilt when the user service changes.
type adminMailer struct {
	identity.Mailer
	snapshot func() *store.Snapshot
}

// passwordMail reads the user service's reset-mail settings.
func (m adminMailer) passwordMail() (serviceID, templateID int64) {
	snap := m.snapshot()
	if snap == nil {
		return 0, 0
	}
	for _, s := range snap.Services {
		if s.Type != "user" {
			continue
		}
		var cfg struct {
			ID         *int64 `json:"password_email_service_id"`
			TemplateID *int64 `json:"password_email_template_id"`
		}
		if json.Unmarshal(s.ConfigJSON(), &cfg) == nil {
			if cfg.ID != nil {
				serviceID = *cfg.ID
			}
			if cfg.TemplateID != nil {
				templateID = *cfg.TemplateID
			}
		}
		break
	}
	return serviceID, templateID
}

// CanSend implements identity.MailerAvailability.
func (m adminMailer) CanSend(serviceID int64) bool {
	if serviceID == 0 {
		serviceID, _ = m.passwordMail()
	}
	if c, ok := m.Mailer.(identity.MailerAvailability); ok {
		return c.CanSend(serviceID)
	}
	return true
}

// SendMail implements identity.Mailer.
func (m adminMailer) SendMail(ctx context.Context, msg identity.Mail) error {
	if msg.ServiceID == 0 && msg.TemplateID == 0 {
		msg.ServiceID, msg.TemplateID = m.passwordMail()
	}
	return m.Mailer.SendMail(ctx, msg)
}
