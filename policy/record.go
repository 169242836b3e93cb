package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Verb mask bits of role_service_access.verb_mask, as DreamFactory defines
// them (VerbsMask).
const (
	VerbGet     = 1
	VerbPost    = 2
	VerbPut     = 4
	VerbPatch   = 8
	VerbDelete  = 16
	VerbOptions = 32
	VerbHead    = 64
	VerbCopy    = 128
	VerbTrace   = 256
	VerbConnect = 512

	// VerbAll is what the admin interface and the docs call "all verbs":
	// GET, POST, PUT, PATCH and DELETE.
	VerbAll = VerbGet | VerbPost | VerbPut | VerbPatch | VerbDelete

	// verbAny is every defined bit; masks may not use others.
	verbAny = 1023
)

// Requestor mask bits of role_service_access.requestor_mask.
const (
	RequestorAPI    = int(caller.API)
	RequestorScript = int(caller.Script)
	// RequestorBoth lets an entry serve API clients and scripts.
	RequestorBoth = RequestorAPI | RequestorScript
)

// Filter operators accepted in an access entry: DreamFactory's server-side
// filter operators (DbComparisonOperators::getServerSideFilterOperators).
var filterOperators = map[string]bool{
	"=": true, "!=": true, ">": true, ">=": true, "<": true, "<=": true,
	"IN": true, "NOT IN": true, "STARTS WITH": true, "ENDS WITH": true,
	"CONTAINS": true, "IS NULL": true, "IS NOT NULL": true,
}

// Role is one role record with its access entries, as the system store
// reads them.
type Role struct {
	// ID is the role's id; it must be positive and unique.
	ID int64
	// Name is the role's name, used only in messages and logs.
	Name string
	// Active is role.is_active. An inactive role is refused everything.
	Active bool
	// Accesses are the role's role_service_access entries, in id order.
	Accesses []Access
}

// Access is one role_service_access entry.
type Access struct {
	// ServiceID is service_id; zero stands for null, which means all
	// services when Service is also empty or "*".
	ServiceID int64
	// Service is the name of the service ServiceID refers to. Empty or "*"
	// with ServiceID zero means all services. An entry with a ServiceID but
	// no name (a service that no longer resolves) is invalid rather than
	// silently widened to all services.
	Service string
	// Component is the resource path the entry covers: empty for the
	// service root only, "*" for everything in the service, a path ending
	// in "*" (such as "_table/*" or "_table/contact/*") for everything
	// under that prefix, or an exact path such as "_table/contact".
	// Leading and trailing "/" are ignored; case does not matter.
	Component string
	// VerbMask is verb_mask: GET 1, POST 2, PUT 4, PATCH 8, DELETE 16
	// (see the Verb constants). Zero grants nothing but still makes the
	// entry's class the most specific one for its component.
	VerbMask int
	// RequestorMask is requestor_mask: API 1, script 2, both 3. Zero
	// matches no caller, as in DreamFactory.
	RequestorMask int
	// Filters restrict the rows the caller may read and write.
	Filters []caller.Filter
	// FilterOp joins Filters: "AND" (the default, also for "") or "OR",
	// in any case.
	FilterOp string
	// Fields lists the fields the entry allows; empty means all.
	Fields []string
}

// Validate reports every problem of the entry at once, so the system API
// can refuse it with one message before it is stored.
func (a *Access) Validate() error {
	_, err := compileAccess(a)
	return err
}

// allServices reports whether the entry covers every service.
func (a *Access) allServices() bool {
	return a.ServiceID == 0 && (a.Service == "" || a.Service == "*")
}

// compiled is a validated, normalised access entry.
type compiled struct {
	all       bool   // entry covers all services
	service   string // service name ("" when all)
	component string // normalised component
	class     Class  // class of the entry's pattern
	prefix    int    // length of the literal part of the pattern
	verbs     int
	requestor int
	grant     *caller.Grant // nil when the entry restricts nothing
}

// compileAccess validates a and returns its normalised form.
func compileAccess(a *Access) (compiled, error) {
	var errs []error
	c := compiled{all: a.allServices(), verbs: a.VerbMask, requestor: a.RequestorMask}
	switch {
	case c.all:
	case a.Service == "":
		errs = append(errs, fmt.Errorf("service_id %d has no service name", a.ServiceID))
	case a.Service == "*":
		errs = append(errs, fmt.Errorf("service_id %d: a service named %q cannot exist", a.ServiceID, a.Service))
	default:
		c.service = a.Service
	}
	if a.ServiceID < 0 {
		errs = append(errs, fmt.Errorf("service_id %d is negative", a.ServiceID))
	}

	comp, err := normalizeEntryComponent(a.Component)
	if err != nil {
		errs = append(errs, err)
	}
	c.component = comp
	switch {
	case comp == "*":
		c.class, c.prefix = ClassService, 0
	case strings.HasSuffix(comp, "*"):
		c.class, c.prefix = ClassComponent, len(comp)-1
	default:
		c.class, c.prefix = ClassExact, len(comp)
	}
	if c.all {
		if comp != "" && comp != "*" {
			errs = append(errs, fmt.Errorf("component %q: an entry for all services must have component \"*\" or none", a.Component))
		}
		c.class = ClassAllServices
	}

	if a.VerbMask < 0 || a.VerbMask&^verbAny != 0 {
		errs = append(errs, fmt.Errorf("verb_mask %d: only bits 1 to 512 (GET to CONNECT) exist", a.VerbMask))
	}
	if a.RequestorMask < 0 || a.RequestorMask&^RequestorBoth != 0 {
		errs = append(errs, fmt.Errorf("requestor_mask %d: only 1 (API), 2 (script) and 3 (both) exist", a.RequestorMask))
	}

	op, err := normalizeFilterOp(a.FilterOp)
	if err != nil {
		errs = append(errs, err)
	}
	filters := make([]caller.Filter, 0, len(a.Filters))
	for i, f := range a.Filters {
		nf, err := normalizeFilter(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("filter %d: %w", i, err))
			continue
		}
		filters = append(filters, nf)
	}
	fields := make([]string, 0, len(a.Fields))
	for i, f := range a.Fields {
		f = strings.TrimSpace(f)
		if f == "" {
			errs = append(errs, fmt.Errorf("field %d is empty", i))
			continue
		}
		fields = append(fields, f)
	}
	if len(errs) > 0 {
		return compiled{}, errors.Join(errs...)
	}
	if len(filters) > 0 || len(fields) > 0 {
		g := &caller.Grant{FilterOp: op}
		if len(filters) > 0 {
			g.Filters = filters
		}
		if len(fields) > 0 {
			g.Fields = fields
		}
		c.grant = g
	}
	return c, nil
}

// depth is how many leading segments of a request's component the entry
// looks at. An exact entry with s slashes compares s+1 segments (and
// matches no longer component); a wildcard whose literal prefix has s
// slashes looks at s segments when the prefix ends in "/" ("_table/*":
// one) and s+1 otherwise ("_table/con*": two); "*", an empty component and
// all-services entries look at none.
func (c *compiled) depth() int {
	lit := c.component[:c.prefix]
	if lit == "" {
		return 0
	}
	s := strings.Count(lit, "/")
	if c.class == ClassComponent && strings.HasSuffix(lit, "/") {
		return s
	}
	return s + 1
}

// normalizeFilterOp returns "AND" or "OR".
func normalizeFilterOp(op string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(op)) {
	case "", "AND":
		return "AND", nil
	case "OR":
		return "OR", nil
	}
	return "", fmt.Errorf("filter_op %q: must be AND or OR", op)
}

// normalizeFilter checks one filter and returns it with its operator in
// canonical form (upper case, single spaces).
func normalizeFilter(f caller.Filter) (caller.Filter, error) {
	name := strings.TrimSpace(f.Name)
	if name == "" {
		return f, errors.New("name is empty")
	}
	op := strings.ToUpper(strings.Join(strings.Fields(f.Operator), " "))
	if !filterOperators[op] {
		return f, fmt.Errorf("operator %q of field %q: must be one of = != > >= < <= IN, NOT IN, STARTS WITH, ENDS WITH, CONTAINS, IS NULL, IS NOT NULL", f.Operator, name)
	}
	return caller.Filter{Name: name, Operator: op, Value: f.Value}, nil
}

// normalizeEntryComponent normalises a stored component: surrounding
// spaces and slashes go, "." and ".." segments are resolved as for
// requests, case is folded, and "*" may appear only as the last character.
func normalizeEntryComponent(comp string) (string, error) {
	c := strings.TrimSpace(comp)
	if i := strings.IndexByte(c, '*'); i >= 0 && i != len(c)-1 {
		return "", fmt.Errorf("component %q: \"*\" may appear only once, at the end", comp)
	}
	if strings.HasSuffix(c, "*") {
		// Clean the literal part, keeping a trailing "/" before the "*".
		lit := c[:len(c)-1]
		slash := strings.HasSuffix(lit, "/")
		lit = cleanComponent(lit)
		if slash && lit != "" {
			lit += "/"
		}
		return strings.ToLower(lit) + "*", nil
	}
	return strings.ToLower(cleanComponent(c)), nil
}
