package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Messages of refusals, in DreamFactory's words (AccessCheck).
const (
	// MsgRoleNotFound is the message for a call without a role, or with a
	// role id that does not exist.
	MsgRoleNotFound = "Role not found. A role may not be assigned to you or your application."
	// MsgRoleInactive is the message for a call under an inactive role.
	MsgRoleInactive = "Access Forbidden. The role assigned to you or your application or the default role of your application is not active."
)

// DefaultCacheSize is the number of decisions an Authorizer caches unless
// WithCacheSize says otherwise.
const DefaultCacheSize = 10000

// maxCachedKey is the longest service+component that is cached; longer
// ones are decided every time, so one hostile path cannot pin much memory.
const maxCachedKey = 1024

// Class is the specificity class of the entries that decided a call, most
// specific first.
type Class int

// The classes, from most to least specific.
const (
	// ClassNone: no entry matched.
	ClassNone Class = iota
	// ClassExact: an entry for the service with exactly this component.
	ClassExact
	// ClassComponent: an entry for the service whose component ends in
	// "*" and covers this one, such as "_table/*".
	ClassComponent
	// ClassService: an entry for the service with component "*".
	ClassService
	// ClassAllServices: an entry for all services.
	ClassAllServices
)

// String returns the class's name.
func (c Class) String() string {
	switch c {
	case ClassNone:
		return "none"
	case ClassExact:
		return "exact"
	case ClassComponent:
		return "component"
	case ClassService:
		return "service"
	case ClassAllServices:
		return "all-services"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Reason says why a call was allowed or refused.
type Reason int

// The reasons.
const (
	// ReasonAllowed: the role grants the verb.
	ReasonAllowed Reason = iota
	// ReasonNoRole: no role id, or a role id that does not exist.
	ReasonNoRole
	// ReasonRoleInactive: the role exists but is not active.
	ReasonRoleInactive
	// ReasonDenied: the role does not grant the verb on the component, or
	// the verb or requestor is not one the engine knows.
	ReasonDenied
	// ReasonError: the engine failed; the call is refused (Decision.Err).
	ReasonError
)

// String returns the reason's name.
func (r Reason) String() string {
	switch r {
	case ReasonAllowed:
		return "allowed"
	case ReasonNoRole:
		return "no role"
	case ReasonRoleInactive:
		return "role inactive"
	case ReasonDenied:
		return "denied"
	case ReasonError:
		return "error"
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Decision is the answer to one Authorize call.
type Decision struct {
	// Allowed is true when the call may proceed.
	Allowed bool
	// Reason says why.
	Reason Reason
	// Class is the class of the entries that decided, ClassNone when none
	// matched or the role was missing or inactive.
	Class Class
	// Grant holds the matched entry's fields and row filters when Allowed,
	// nil when that entry restricts nothing (and always when refused). It
	// is shared between decisions: treat it as read-only, and use
	// SubstituteLookups to get a copy with lookups filled in.
	Grant *caller.Grant
	// Message is the refusal in DreamFactory's words; empty when Allowed.
	Message string
	// Err is set when the engine itself failed (ReasonError).
	Err error
}

// Option tunes New.
type Option func(*options)

type options struct {
	cacheSize int
}

// WithCacheSize sets how many decisions are cached (DefaultCacheSize
// without this option). Zero turns the cache off; a negative size is an
// error.
func WithCacheSize(n int) Option {
	return func(o *options) { o.cacheSize = n }
}

// Authorizer decides role access. It is immutable and safe for concurrent
// use; to apply changed records, build a new one with New and swap it.
type Authorizer struct {
	roles map[int64]*role
	cache *lru // nil when caching is off
}

// role is one role with its compiled entries and enforcers.
type role struct {
	active  bool
	entries []compiled
	// enf holds one enforcer per service the role's entries name, with
	// that service's lines and the all-services lines, so a decision scans
	// only lines that can match. rest, with the all-services lines only,
	// answers for every other service. Each is built on its first
	// decision (see lazyEnforcer); the map itself is fixed by New.
	enf  map[string]*lazyEnforcer
	rest *lazyEnforcer
	// depth is how many leading segments of a component any entry looks
	// at; see cacheComponent.
	depth int
}

// lazyEnforcer is a Casbin enforcer built when a decision first needs it.
// Building every (role, service) enforcer up front made start-up and every
// reload cost time and memory in proportion to roles × services (about 6
// KB and tens of microseconds each), most of which no request ever uses.
type lazyEnforcer struct {
	once    sync.Once
	entries []compiled
	include func(*compiled) bool
	enf     *casbin.Enforcer
	err     error
}

// get builds the enforcer on the first call and returns it.
func (l *lazyEnforcer) get() (*casbin.Enforcer, error) {
	l.once.Do(func() {
		l.enf, l.err = newEnforcer(l.entries, l.include)
		l.entries, l.include = nil, nil
	})
	return l.enf, l.err
}

// planEnforcers gives r its (not yet built) enforcers.
func (r *role) planEnforcers() {
	r.enf = make(map[string]*lazyEnforcer)
	for i := range r.entries {
		e := &r.entries[i]
		r.depth = max(r.depth, e.depth())
		if e.all || r.enf[e.service] != nil {
			continue
		}
		svc := e.service
		r.enf[svc] = &lazyEnforcer{entries: r.entries, include: func(c *compiled) bool { return c.all || c.service == svc }}
	}
	r.rest = &lazyEnforcer{entries: r.entries, include: func(c *compiled) bool { return c.all }}
}

// New validates roles and builds an Authorizer with one Casbin enforcer per
// role and service, each built when a decision first needs it. It reports
// every invalid record at once; nothing is built when any record is
// invalid.
func New(roles []Role, opts ...Option) (*Authorizer, error) {
	o := options{cacheSize: DefaultCacheSize}
	for _, opt := range opts {
		opt(&o)
	}
	var errs []error
	if o.cacheSize < 0 {
		errs = append(errs, fmt.Errorf("cache size %d is negative", o.cacheSize))
	}
	a := &Authorizer{roles: make(map[int64]*role, len(roles))}
	for i := range roles {
		r := &roles[i]
		if r.ID <= 0 {
			errs = append(errs, fmt.Errorf("role %q: id %d is not positive", r.Name, r.ID))
			continue
		}
		if _, dup := a.roles[r.ID]; dup {
			errs = append(errs, fmt.Errorf("role %d (%q): id listed twice", r.ID, r.Name))
			continue
		}
		cr := &role{active: r.Active, entries: make([]compiled, 0, len(r.Accesses))}
		bad := false
		for j := range r.Accesses {
			c, err := compileAccess(&r.Accesses[j])
			if err != nil {
				errs = append(errs, fmt.Errorf("role %d (%q) access %d: %w", r.ID, r.Name, j, err))
				bad = true
				continue
			}
			cr.entries = append(cr.entries, c)
		}
		if bad {
			continue
		}
		cr.planEnforcers()
		a.roles[r.ID] = cr
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("policy: %w", errors.Join(errs...))
	}
	if o.cacheSize > 0 {
		a.cache = newLRU(o.cacheSize)
	}
	return a, nil
}

// Authorize decides whether the role may call verb on component of
// service, for an API client or a script (requestor; zero counts as API).
// component is the resource path after the service name ("" for the
// service root); it is normalised with NormalizeComponent. verb is an HTTP
// method in any case, or a DreamFactory synonym (READ, CREATE, UPDATE).
//
// A refusal carries DreamFactory's message, for example
// "Access Forbidden. DELETE access to component '_table/contact' of
// service 'db' is not allowed by this user's role."
func (a *Authorizer) Authorize(roleID int64, service, component, verb string, requestor caller.Requestor) Decision {
	r := a.roles[roleID]
	if r == nil {
		return Decision{Reason: ReasonNoRole, Message: MsgRoleNotFound}
	}
	if !r.active {
		return Decision{Reason: ReasonRoleInactive, Message: MsgRoleInactive}
	}
	comp := NormalizeComponent(component)
	bit := VerbBit(verb)
	req := requestorBit(requestor)
	if bit == 0 || req == 0 {
		return Decision{Reason: ReasonDenied, Message: denyMessage(verb, service, comp)}
	}

	var key cacheKey
	cacheable := false
	if a.cache != nil {
		kc, deep := r.cacheComponent(comp)
		key = cacheKey{role: roleID, service: service, component: kc, deep: deep, verb: uint16(bit), requestor: uint8(req)}
		if cacheable = len(service)+len(kc) <= maxCachedKey; cacheable {
			if out, ok := a.cache.get(key); ok {
				return out.decision(verb, service, comp)
			}
		}
	}
	out, err := r.decide(service, comp, req, bit)
	if err != nil {
		return Decision{Reason: ReasonError, Message: denyMessage(verb, service, comp),
			Err: fmt.Errorf("policy: role %d: %w", roleID, err)}
	}
	if cacheable {
		key.service = strings.Clone(service)
		key.component = strings.Clone(key.component)
		a.cache.add(key, out)
	}
	return out.decision(verb, service, comp)
}

// Reachable reports whether the role may call verb on component of service
// (see Authorize). It also answers for path templates as API documents
// write them: when component holds "{...}" segments, such as
// "_table/{table_name}", it reports whether some path of that shape is
// reachable, given the role's wildcard entries and its exact entries
// (DreamFactory matches such templates against entry components too).
func (a *Authorizer) Reachable(roleID int64, service, component, verb string, requestor caller.Requestor) bool {
	if a.Authorize(roleID, service, component, verb, requestor).Allowed {
		return true
	}
	if !strings.Contains(component, "{") {
		return false
	}
	r := a.roles[roleID]
	if r == nil || !r.active {
		return false
	}
	tmpl := strings.Split(NormalizeComponent(component), "/")
	for i := range r.entries {
		e := &r.entries[i]
		if e.all || e.service != service {
			continue
		}
		var inst string
		var ok bool
		switch e.class {
		case ClassExact:
			inst, ok = e.component, templateMatches(tmpl, e.component)
		case ClassComponent:
			inst, ok = instantiate(tmpl, e.component[:e.prefix])
		}
		if ok && a.Authorize(roleID, service, inst, verb, requestor).Allowed {
			return true
		}
	}
	return false
}

// ServiceReachable reports whether the role grants verb on any component
// of service: true when an entry for that service has the verb, or, when
// the role has no entry for that service at all, an all-services entry
// has it (DreamFactory's allowsServiceAccess, per verb). API documents and
// service lists use it; so does the schema fallback, where GET on
// "_schema" is allowed to a role with GET on any component.
func (a *Authorizer) ServiceReachable(roleID int64, service, verb string, requestor caller.Requestor) bool {
	r := a.roles[roleID]
	if r == nil || !r.active {
		return false
	}
	bit, req := VerbBit(verb), requestorBit(requestor)
	if bit == 0 || req == 0 {
		return false
	}
	found, all := false, false
	for i := range r.entries {
		e := &r.entries[i]
		if e.requestor&req == 0 {
			continue
		}
		switch {
		case !e.all && e.service == service:
			found = true
			if e.verbs&bit != 0 {
				return true
			}
		case e.all && e.verbs&bit != 0:
			all = true
		}
	}
	return !found && all
}

// cacheComponent returns the part of comp that can change r's decision,
// and whether comp was cut. No entry looks past the first r.depth
// segments of a component (compiled.depth), and an exact entry never
// matches a component with more segments than it has, so all components
// with more than r.depth segments that share their first r.depth segments
// get the same decision: "_table/contact/5" and "_table/contact/6" share
// one cache entry when no entry names a record. The cut form is kept apart
// from the uncut component it equals by cacheKey.deep.
func (r *role) cacheComponent(comp string) (string, bool) {
	if comp == "" {
		return comp, false
	}
	if r.depth == 0 {
		return "", true
	}
	slashes := 0
	for i := 0; i < len(comp); i++ {
		if comp[i] == '/' {
			if slashes++; slashes == r.depth {
				return comp[:i], true
			}
		}
	}
	return comp, false
}

// decide asks the enforcer for service.
func (r *role) decide(service, comp string, req, bit int) (outcome, error) {
	lazy := r.enf[service]
	if lazy == nil {
		lazy = r.rest
	}
	enf, err := lazy.get()
	if err != nil {
		return outcome{}, fmt.Errorf("service %q: %w", service, err)
	}
	ok, explain, err := enf.EnforceEx(service, comp, comp+"/", req, bit)
	if err != nil {
		return outcome{}, fmt.Errorf("casbin: %w", err)
	}
	if len(explain) == 0 {
		if ok {
			return outcome{}, errors.New("casbin allowed without a matching line")
		}
		return outcome{class: ClassNone}, nil
	}
	if len(explain) != lineFields {
		return outcome{}, fmt.Errorf("casbin matched a line of %d fields: %v", len(explain), explain)
	}
	class, err := strconv.Atoi(explain[fieldClass])
	if err != nil {
		return outcome{}, fmt.Errorf("casbin line class %q: %w", explain[fieldClass], err)
	}
	out := outcome{class: Class(class)}
	if !ok {
		return out, nil
	}
	i, err := strconv.Atoi(explain[fieldEntry])
	if err != nil || i < 0 || i >= len(r.entries) || explain[fieldEft] != "allow" {
		return outcome{}, fmt.Errorf("casbin allowed by line %v", explain)
	}
	out.allowed = true
	out.grant = r.entries[i].grant
	return out, nil
}

// outcome is what the cache keeps for one key.
type outcome struct {
	allowed bool
	class   Class
	grant   *caller.Grant
}

func (o outcome) decision(verb, service, comp string) Decision {
	if o.allowed {
		return Decision{Allowed: true, Reason: ReasonAllowed, Class: o.class, Grant: o.grant}
	}
	return Decision{Reason: ReasonDenied, Class: o.class, Message: denyMessage(verb, service, comp)}
}

// denyMessage is DreamFactory's refusal (Session::checkServicePermission
// behind AccessCheck's "Access Forbidden. ").
func denyMessage(verb, service, comp string) string {
	var b strings.Builder
	b.Grow(80 + len(verb) + len(service) + len(comp))
	b.WriteString("Access Forbidden. ")
	b.WriteString(strings.ToUpper(verb))
	b.WriteString(" access to ")
	if comp != "" {
		b.WriteString("component '")
		b.WriteString(comp)
		b.WriteString("' of ")
	}
	b.WriteString("service '")
	b.WriteString(service)
	b.WriteString("' is not allowed by this user's role.")
	return b.String()
}

// requestorBit maps a requestor to its mask bit; zero (unset) counts as an
// API call, anything other than API or Script has no bit.
func requestorBit(r caller.Requestor) int {
	switch r {
	case 0, caller.API:
		return RequestorAPI
	case caller.Script:
		return RequestorScript
	}
	return 0
}

// isPlaceholder reports whether a template segment is "{...}".
func isPlaceholder(seg string) bool {
	return len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}'
}

// isIdent reports whether s is a non-empty run of [a-z0-9_] (components
// are lower case here), the values DreamFactory lets a placeholder take.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// templateMatches reports whether comp is an instance of the template.
func templateMatches(tmpl []string, comp string) bool {
	segs := strings.Split(comp, "/")
	if len(segs) != len(tmpl) {
		return false
	}
	for i, t := range tmpl {
		if isPlaceholder(t) {
			if !isIdent(segs[i]) {
				return false
			}
		} else if t != segs[i] {
			return false
		}
	}
	return true
}

// instantiate builds an instance of the template that a wildcard entry
// with literal prefix covers, if there is one: placeholders take the
// prefix's segment where it has one and "x" past its end.
func instantiate(tmpl []string, prefix string) (string, bool) {
	p := strings.Split(prefix, "/") // the last piece may be partial or ""
	last := len(p) - 1
	if len(tmpl) < last || len(tmpl) == last && p[last] != "" {
		return "", false
	}
	out := make([]string, len(tmpl))
	for i, t := range tmpl {
		switch {
		case i < last:
			if isPlaceholder(t) && isIdent(p[i]) || t == p[i] {
				out[i] = p[i]
				continue
			}
			return "", false
		case i == last:
			switch {
			case isPlaceholder(t) && p[i] == "":
				out[i] = "x"
			case isPlaceholder(t) && isIdent(p[i]):
				out[i] = p[i]
			case !isPlaceholder(t) && strings.HasPrefix(t, p[i]):
				out[i] = t
			default:
				return "", false
			}
		default:
			if isPlaceholder(t) {
				out[i] = "x"
			} else {
				out[i] = t
			}
		}
	}
	return strings.Join(out, "/"), true
}

// ServiceNamed reports whether an entry of the role that names service
// (not an entry for all services) grants verb on some component of it.
// The system service is reached only through such entries.
func (a *Authorizer) ServiceNamed(roleID int64, service, verb string, requestor caller.Requestor) bool {
	r := a.roles[roleID]
	if r == nil || !r.active {
		return false
	}
	bit, req := VerbBit(verb), requestorBit(requestor)
	if bit == 0 || req == 0 {
		return false
	}
	for i := range r.entries {
		e := &r.entries[i]
		if !e.all && e.service == service && e.requestor&req != 0 && e.verbs&bit != 0 {
			return true
		}
	}
	return false
}
