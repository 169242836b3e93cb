package policy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"
	"github.com/casbin/casbin/v2/util"
)

// modelText is the Casbin model every enforcer is built from.
//
// A request is (service, component, component+"/", requestor bit, verb
// bit). A policy line is (priority, class, service, pattern, requestor
// mask, verb mask, effect, entry index):
//
//   - the pattern is "=" and a component that must equal the request's,
//     or "~" and a keyMatch pattern tested against component+"/", so that
//     "~_table/*" covers "_table" too and "~*" covers everything;
//   - service "*" stands for all services;
//   - bitAny tests a request bit against a mask;
//   - a deny line (a class's fence) matches whatever the verb.
//
// The component test comes first because it rules out most lines. The
// priority effect lets the first matching line in priority order decide;
// see the package documentation for how lines are ordered.
const modelText = `
[request_definition]
r = svc, comp, cslash, req, verb

[policy_definition]
p = priority, class, svc, pattern, req, verbs, eft, entry

[policy_effect]
e = priority(p.eft) || deny

[matchers]
m = compMatch(r.comp, r.cslash, p.pattern) && (p.svc == r.svc || p.svc == "*") && bitAny(r.req, p.req) && (p.eft == "deny" || bitAny(r.verb, p.verbs))
`

// Positions of the fields of a policy line, after the "p" type.
const (
	fieldClass = 1
	fieldEft   = 6
	fieldEntry = 7
	lineFields = 8
)

// compMatch is the Casbin function compMatch(comp, comp+"/", pattern): see
// modelText. The wildcard test is Casbin's own keyMatch.
func compMatch(args ...any) (any, error) {
	if len(args) != 3 {
		return false, fmt.Errorf("compMatch: want 3 arguments, got %d", len(args))
	}
	comp, ok1 := args[0].(string)
	cslash, ok2 := args[1].(string)
	pattern, ok3 := args[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return false, fmt.Errorf("compMatch: arguments %T, %T, %T, want strings", args...)
	}
	switch {
	case pattern == "":
		// Casbin evaluates the matcher once with empty policy values when
		// an enforcer has no lines.
		return false, nil
	case pattern[0] == '=':
		return comp == pattern[1:], nil
	case pattern[0] == '~':
		return util.KeyMatch(cslash, pattern[1:]), nil
	}
	return false, fmt.Errorf("compMatch: pattern %q has no kind", pattern)
}

// bitAny is the Casbin function bitAny(bit, mask): true when the request
// bit (a number) is set in the policy mask (a decimal string).
func bitAny(args ...any) (any, error) {
	if len(args) != 2 {
		return false, fmt.Errorf("bitAny: want 2 arguments, got %d", len(args))
	}
	var bit int
	switch v := args[0].(type) {
	case int:
		bit = v
	case float64: // govaluate hands numbers over as float64
		bit = int(v)
	default:
		return false, fmt.Errorf("bitAny: first argument is %T, want a number", args[0])
	}
	s, ok := args[1].(string)
	if !ok {
		return false, fmt.Errorf("bitAny: second argument is %T, want string", args[1])
	}
	mask, err := strconv.Atoi(s)
	if err != nil {
		return false, fmt.Errorf("bitAny: mask %q: %w", s, err)
	}
	return bit&mask != 0, nil
}

// lineAdapter is a read-only persist.Adapter that hands Casbin the policy
// lines built for one role. Loading through an adapter makes Casbin sort
// the lines by priority.
type lineAdapter struct{ lines [][]string }

var errReadOnly = errors.New("policy: enforcer policy is read-only")

func (a lineAdapter) LoadPolicy(m model.Model) error {
	for _, l := range a.lines {
		if err := persist.LoadPolicyArray(l, m); err != nil {
			return fmt.Errorf("load policy line %v: %w", l, err)
		}
	}
	return nil
}

func (lineAdapter) SavePolicy(model.Model) error                { return errReadOnly }
func (lineAdapter) AddPolicy(string, string, []string) error    { return errReadOnly }
func (lineAdapter) RemovePolicy(string, string, []string) error { return errReadOnly }
func (lineAdapter) RemoveFilteredPolicy(string, string, int, ...string) error {
	return errReadOnly
}

// policyLines orders a role's entries into Casbin policy lines: for each
// class from the most specific, first the allow lines (most specific
// pattern first, then the entry listed last first), then one fence per
// distinct pattern.
//
// Only entries for which include is true are used; entry indexes in the
// lines still refer to entries.
func policyLines(entries []compiled, include func(*compiled) bool) [][]string {
	var lines [][]string
	prio := 0
	for class := ClassExact; class <= ClassAllServices; class++ {
		var idx []int
		for i := range entries {
			if entries[i].class == class && entries[i].requestor != 0 && include(&entries[i]) {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			if d := entries[b].prefix - entries[a].prefix; d != 0 {
				return d
			}
			return b - a
		})
		for _, i := range idx {
			e := &entries[i]
			if e.verbs == 0 {
				continue // grants nothing; its fence still counts
			}
			prio++
			lines = append(lines, line(prio, e, strconv.Itoa(e.verbs), "allow", strconv.Itoa(i)))
		}
		prio++
		seen := make(map[[3]string]bool)
		for _, i := range idx {
			e := &entries[i]
			k := [3]string{svcField(e), e.component, strconv.Itoa(e.requestor)}
			if seen[k] {
				continue
			}
			seen[k] = true
			lines = append(lines, line(prio, e, "0", "deny", "-"))
		}
	}
	return lines
}

func svcField(e *compiled) string {
	if e.all {
		return "*"
	}
	return e.service
}

func line(prio int, e *compiled, verbs, eft, entry string) []string {
	pattern := "=" + e.component
	if e.class != ClassExact && !(e.class == ClassAllServices && e.component == "") {
		pattern = "~" + e.component
	}
	return []string{"p", strconv.Itoa(prio), strconv.Itoa(int(e.class)), svcField(e), pattern,
		strconv.Itoa(e.requestor), verbs, eft, entry}
}

// newEnforcer builds an enforcer from a fresh model (a model.Model holds
// policy, so enforcers must never share one) and the lines of the entries
// include selects.
// parsedModel is modelText parsed once: each enforcer gets a copy, so
// building thousands of roles does not parse the text thousands of times.
var parsedModel = sync.OnceValues(func() (model.Model, error) { return model.NewModelFromString(modelText) })

func newEnforcer(entries []compiled, include func(*compiled) bool) (*casbin.Enforcer, error) {
	base, err := parsedModel()
	if err != nil {
		return nil, fmt.Errorf("policy model: %w", err)
	}
	e, err := casbin.NewEnforcer(base.Copy(), lineAdapter{lines: policyLines(entries, include)})
	if err != nil {
		return nil, fmt.Errorf("casbin enforcer: %w", err)
	}
	e.AddFunction("bitAny", bitAny)
	e.AddFunction("compMatch", compMatch)
	return e, nil
}
