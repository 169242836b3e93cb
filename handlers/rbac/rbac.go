package rbac

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Messages of the stage that the policy engine does not write.
const (
	// MsgNoCaller answers a request that reached the stage without a caller
	// identity (no API key stage ran, or it let the request through).
	MsgNoCaller = "Unauthorized. No API key or session token identified the caller."
	// MsgNoTarget answers a request that reached the stage without a target
	// service (a stack built without the router and without Options.Target).
	MsgNoTarget = "Access check failed: the request names no service."
	// MsgCheckFailed answers a request whose check failed inside the engine.
	MsgCheckFailed = "Access check failed."
	// MsgNoSession answers, with 401, a caller with neither a role nor a
	// session (an API key whose app has no default role): a session token
	// is what it lacks. DreamFactory answers 403 "Role not found", which
	// its admin UI takes for a dead end instead of showing its login form.
	MsgNoSession = "No session token (JWT) provided. Please provide a valid JWT using X-Platform-Session-Token request header or 'session_token' url query parameter."
	// MsgSpecNotGranted starts the 403 for GET {service}/_spec by a role
	// with no entry for '_spec' or '*' on that service.
	MsgSpecNotGranted = "Access Forbidden: spec endpoint not granted."
)

// TypeSystem, TypeUser and TypeAPIDocs are the service types the stage
// treats specially (see the package documentation).
const (
	TypeSystem  = "system"
	TypeUser    = "user"
	TypeAPIDocs = "swagger"
)

// Options configures the stage.
type Options struct {
	// Policy returns the Authorizer in force; required. It is called once
	// per request that needs a role check and must be cheap (the proxy
	// root returns the Authorizer of its current configuration). A nil
	// Authorizer refuses every such request, as if no role existed.
	Policy func() *policy.Authorizer
	// Lookups returns the named lookups that apply to a caller, already
	// merged with DreamFactory's precedence (global, app, role, user); the
	// built-ins ({user.id}, {role.id}, {app.id}, …) are added by the stage
	// and win. It is called only for a grant whose row filters hold a
	// lookup. Nil means no named lookups. Private lookups must be left out:
	// DreamFactory substitutes them only in service configuration and
	// scripts (SnapshotLookups does so).
	Lookups func(id *caller.Identity) map[string]string
	// Exception reports the requests that need no role; nil means
	// AccessException.
	Exception func(t *service.Target) bool
	// Target returns the target of a request whose context carries none,
	// for stacks without the proxy router (see FixedService). Nil: such a
	// request is refused with 500.
	Target func(r *http.Request) *service.Target
	// Logger receives engine failures; nil means slog.Default().
	Logger *slog.Logger
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Policy == nil {
		return nil, errors.New("rbac: Policy is required")
	}
	return newStage(opts).wrap, nil
}

func newStage(opts Options) *stage {
	s := &stage{opts: opts, log: opts.Logger, exception: opts.Exception}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.exception == nil {
		s.exception = AccessException
	}
	return s
}

// Grant decides, as the stage decides a request, whether id may call t,
// and returns the call's grant with lookups filled in (nil: unrestricted)
// or the refusal as an *apierr.Error. A backend asks it for the writes it
// makes on the caller's behalf beyond the request's own target, such as
// the related records of a nested table write. opts.Policy is required.
func Grant(ctx context.Context, opts Options, id *caller.Identity, t *service.Target) (*caller.Grant, error) {
	if opts.Policy == nil || t == nil || t.Service == nil {
		return nil, apierr.InternalMsg(MsgCheckFailed)
	}
	s := newStage(opts)
	if id != nil && id.Admin || s.exception(t) {
		return nil, nil
	}
	if id == nil {
		return nil, apierr.Unauthorized(MsgNoCaller)
	}
	return s.check(ctx, id, t)
}

type stage struct {
	opts      Options
	log       *slog.Logger
	exception func(t *service.Target) bool
}

func (s *stage) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		t := service.TargetFrom(ctx)
		if t == nil && s.opts.Target != nil {
			if t = s.opts.Target(r); t != nil {
				ctx = service.WithTarget(ctx, t)
			}
		}
		if t == nil || t.Service == nil {
			apierr.Write(w, apierr.InternalMsg(MsgNoTarget))
			return
		}
		id := caller.IdentityFrom(ctx)
		if (id != nil && id.Admin) || s.exception(t) {
			// Unrestricted: no grant, and nothing an enclosing call left
			// in the context (an event script's inner call) carries over.
			if uctx := unrestricted(ctx); uctx != r.Context() {
				r = r.WithContext(uctx)
			}
			next.ServeHTTP(w, r)
			return
		}
		if id == nil {
			apierr.Write(w, apierr.Unauthorized(MsgNoCaller))
			return
		}
		g, err := s.check(ctx, id, t)
		if err != nil {
			apierr.Write(w, err)
			return
		}
		st, fresh := caller.Ensure(ctx)
		// Set even when nil: it hides an enclosing call's grant, and
		// reads the same as none (GrantFrom) without looking for one.
		st.SetGrant(g)
		st.SetRoleGranted(true)
		if fresh || ctx != r.Context() {
			r = r.WithContext(st)
		}
		next.ServeHTTP(w, r)
	})
}

// unrestricted returns ctx without a grant and without the role-granted
// mark (in its caller.State, or in a new one when ctx carries either and
// is not a State).
func unrestricted(ctx context.Context) context.Context {
	hasGrant, granted := caller.GrantFrom(ctx) != nil, caller.RoleGranted(ctx)
	if !hasGrant && !granted {
		return ctx
	}
	st, _ := caller.Ensure(ctx)
	if hasGrant {
		st.SetGrant(nil)
	}
	if granted {
		st.SetRoleGranted(false)
	}
	return st
}

// check decides a call under the caller's role and returns its grant with
// lookups filled in, or the refusal.
func (s *stage) check(ctx context.Context, id *caller.Identity, t *service.Target) (*caller.Grant, error) {
	a := s.opts.Policy()
	if id.RoleID == 0 && id.UserID == 0 && !id.FromScript() {
		return nil, apierr.Unauthorized(MsgNoSession)
	}
	if a == nil || id.RoleID == 0 {
		return nil, apierr.Forbidden(policy.MsgRoleNotFound)
	}
	svc := t.Service.Name
	d := a.Authorize(id.RoleID, svc, t.Resource, t.Verb, id.Requestor)
	if !d.Allowed && d.Reason == policy.ReasonDenied && t.Verb == http.MethodHead {
		// HEAD shows what GET shows, without the body: a role that may GET
		// may HEAD, under the same grant.
		if g := a.Authorize(id.RoleID, svc, t.Resource, http.MethodGet, id.Requestor); g.Allowed {
			d = g
		}
	}
	switch d.Reason {
	case policy.ReasonAllowed:
	case policy.ReasonDenied:
		if fallback(a, id, t) {
			return nil, nil
		}
		if t.Verb == http.MethodGet && policy.NormalizeComponent(t.Resource) == "_spec" {
			return nil, apierr.Forbidden("%s GET access to component '_spec' of service '%s' needs a role entry for '_spec' or '*' on that service.",
				MsgSpecNotGranted, svc)
		}
		return nil, apierr.Forbidden("%s", d.Message)
	case policy.ReasonError:
		s.log.ErrorContext(ctx, "access check failed", "role_id", id.RoleID, "service", svc,
			"component", t.Resource, "verb", t.Verb, "error", d.Err)
		return nil, apierr.InternalMsg(MsgCheckFailed).WithCause(d.Err)
	default: // no role, inactive role
		return nil, apierr.Forbidden("%s", d.Message)
	}
	// The system service's records (API keys, service credentials, users)
	// are reached only through entries that name it.
	if systemByAllServices(t, d) {
		return nil, apierr.Forbidden("%s System resources are granted only by role entries for the '%s' service, never by an entry for all services.",
			denyMessage(t.Verb, svc, t.Resource), svc)
	}
	// An API document only of a service the role reaches.
	if t.Service.Type == TypeAPIDocs && t.Resource != "" {
		doc, _, _ := strings.Cut(t.Resource, "/")
		if !reachesAny(a, id, doc) {
			return nil, apierr.Forbidden("%s The role grants no access to service '%s'.",
				denyMessage(t.Verb, svc, t.Resource), doc)
		}
	}
	g := d.Grant
	if g == nil || !hasLookup(g) {
		return g, nil
	}
	var named map[string]string
	if s.opts.Lookups != nil {
		named = withoutBuiltins(s.opts.Lookups(id))
	}
	g, err := policy.SubstituteLookups(g, policy.IdentityLookups(id, named))
	if err != nil {
		return nil, apierr.Forbidden("Access Forbidden. The role's record filter for %s access to %s cannot be applied to this caller: %s.",
			strings.ToUpper(t.Verb), what(svc, t.Resource), lookupProblem(err)).WithCause(err)
	}
	return g, nil
}

// fallback reports the refused calls DreamFactory still lets through: GET
// of a service's _schema list by a role that may GET any of its
// components. It carries no grant and does not apply to the system
// service. GET of a service's _spec document has no fallback: the spec
// wants a grant of '_spec' (or '*') on that service.
func fallback(a *policy.Authorizer, id *caller.Identity, t *service.Target) bool {
	// Reachability counts entries for all services, which never reach
	// the system service.
	if t.Verb != http.MethodGet || t.Service.Type == TypeSystem {
		return false
	}
	if policy.NormalizeComponent(t.Resource) == "_schema" {
		return a.ServiceReachable(id.RoleID, t.Service.Name, http.MethodGet, id.Requestor)
	}
	return false
}

// systemByAllServices reports a decision that would reach the system
// service through an entry for all services, which never grants it.
func systemByAllServices(t *service.Target, d policy.Decision) bool {
	return t.Service.Type == TypeSystem && d.Class == policy.ClassAllServices
}

// Documented reports whether an API document shows id verb on component
// t.Resource of t.Service (possibly a template such as
// "_table/{table_name}"), as the stage decides calls: administrators and
// access exceptions always, others by their role, where the system
// service is reached only through entries that name it. a may be nil (no
// roles: only administrators and exceptions).
func Documented(a *policy.Authorizer, id *caller.Identity, t *service.Target) bool {
	if id != nil && id.Admin {
		return true
	}
	if AccessException(t) {
		return true
	}
	if id == nil || id.RoleID == 0 || a == nil {
		return false
	}
	svc := t.Service.Name
	if t.Service.Type == TypeSystem {
		d := a.Authorize(id.RoleID, svc, t.Resource, t.Verb, id.Requestor)
		if d.Allowed {
			return !systemByAllServices(t, d)
		}
		// Reachable looks past a refused template only through the
		// service's own entries.
		return strings.Contains(t.Resource, "{") && a.Reachable(id.RoleID, svc, t.Resource, t.Verb, id.Requestor)
	}
	return a.Reachable(id.RoleID, svc, t.Resource, t.Verb, id.Requestor)
}

// Reaches reports whether id's role grants some verb on service, the
// condition for reading the service's API document (administrators
// always). a may be nil.
func Reaches(a *policy.Authorizer, id *caller.Identity, service string) bool {
	if id != nil && id.Admin {
		return true
	}
	if id == nil || id.RoleID == 0 || a == nil {
		return false
	}
	return reachesAny(a, id, service)
}

// docVerbs are the verbs for which a role "reaches" a service.
var docVerbs = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// reachesAny reports whether the role grants any verb on any component of
// service.
func reachesAny(a *policy.Authorizer, id *caller.Identity, service string) bool {
	for _, v := range docVerbs {
		if a.ServiceReachable(id.RoleID, service, v, id.Requestor) {
			return true
		}
	}
	return false
}

// ReachesService reports whether id may call some verb on some component
// of a service (its record's Name and Type): administrators reach every service;
// a role reaches a service when an entry grants it any verb, and the
// system service only through entries that name it. Access exceptions
// (login, registration) do not count. Service lists (GET /api/v2) use it.
func ReachesService(a *policy.Authorizer, id *caller.Identity, name, typ string) bool {
	if id != nil && id.Admin {
		return true
	}
	if a == nil || id == nil || id.RoleID == 0 {
		return false
	}
	for _, v := range docVerbs {
		if typ == TypeSystem {
			if a.ServiceNamed(id.RoleID, name, v, id.Requestor) {
				return true
			}
		} else if a.ServiceReachable(id.RoleID, name, v, id.Requestor) {
			return true
		}
	}
	return false
}

// hasLookup reports whether a filter value of g holds a lookup token.
func hasLookup(g *caller.Grant) bool {
	for i := range g.Filters {
		if strings.IndexByte(g.Filters[i].Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// builtinPrefixes are the namespaces of DreamFactory's built-in lookups.
var builtinPrefixes = []string{"user.", "role.", "app.", "session.", "df."}

// withoutBuiltins drops named lookups in a built-in namespace, so that a
// lookup record called "user.id" never stands in for the user a call made
// with an API key alone does not have. It copies only when it drops one.
func withoutBuiltins(named map[string]string) map[string]string {
	var out map[string]string
	for k := range named {
		for _, p := range builtinPrefixes {
			if strings.HasPrefix(k, p) {
				if out == nil {
					out = make(map[string]string, len(named))
					for k2, v2 := range named {
						out[k2] = v2
					}
				}
				delete(out, k)
				break
			}
		}
	}
	if out == nil {
		return named
	}
	return out
}

// lookupProblem words a substitution error for the client: which filter
// and which lookup, without the engine's prefix.
func lookupProblem(err error) string {
	msg := strings.TrimPrefix(err.Error(), "policy: ")
	if errors.Is(err, policy.ErrUnknownLookup) && strings.Contains(msg, "{user.") {
		msg += " ({user.*} lookups need a signed-in user)"
	}
	return msg
}

// what names component of service as the messages do.
func what(service, comp string) string {
	if comp = policy.NormalizeComponent(comp); comp != "" {
		return "component '" + comp + "' of service '" + service + "'"
	}
	return "service '" + service + "'"
}

// denyMessage is the policy engine's refusal for verb on component of
// service, for refusals the stage adds.
func denyMessage(verb, service, comp string) string {
	return "Access Forbidden. " + strings.ToUpper(verb) + " access to " + what(service, comp) + " is not allowed by this user's role."
}
