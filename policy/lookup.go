package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// ErrUnknownLookup is wrapped by the error of a lookup that has no value,
// such as {user.id} in a call made with an API key only.
var ErrUnknownLookup = caller.ErrUnknownLookup

// ErrBadLookup is wrapped by the error of a malformed lookup or one that
// uses a modifier outside DreamFactory's allowed list.
var ErrBadLookup = caller.ErrBadLookup

// SubstituteLookups returns a copy of g whose filter values have their
// lookups replaced from values (see ReplaceLookups). It returns g itself
// when no filter value holds a "{", and nil for a nil g; grants are
// read-only, so sharing is safe. The error names the filter and wraps
// ErrUnknownLookup or ErrBadLookup; a caller should refuse the request
// rather than run it without its row filter.
func SubstituteLookups(g *caller.Grant, values map[string]string) (*caller.Grant, error) {
	if g == nil {
		return nil, nil
	}
	needed := false
	for _, f := range g.Filters {
		if strings.Contains(f.Value, "{") {
			needed = true
			break
		}
	}
	if !needed {
		return g, nil
	}
	out := &caller.Grant{Fields: g.Fields, FilterOp: g.FilterOp, Filters: make([]caller.Filter, len(g.Filters))}
	for i, f := range g.Filters {
		v, err := ReplaceLookups(f.Value, values)
		if err != nil {
			return nil, fmt.Errorf("policy: filter %d on %q: %w", i, f.Name, err)
		}
		f.Value = v
		out.Filters[i] = f
	}
	return out, nil
}

// ReplaceLookups replaces every lookup token in s; it is
// caller.ReplaceLookups (DreamFactory's syntax and modifiers, one pass, an
// unknown lookup is an error).
func ReplaceLookups(s string, values map[string]string) (string, error) {
	return caller.ReplaceLookups(s, values)
}

// IdentityLookups returns the built-in lookups an identity provides, merged
// over named (the system lookups after global, app, role and user
// precedence have been applied, which the caller does): user.id,
// user.email, user.name, user.display_name, user.is_sys_admin (only for a
// signed-in user), role.id, role.name (with a role), app.id, app.name
// (with an app) and session.id (with a session). Built-ins win over a
// named lookup of the same name, as in DreamFactory. Absent facts are
// left out, so a filter that needs them fails with ErrUnknownLookup.
func IdentityLookups(id *caller.Identity, named map[string]string) map[string]string {
	m := make(map[string]string, len(named)+10)
	for k, v := range named {
		m[k] = v
	}
	if id == nil {
		return m
	}
	if id.UserID != 0 {
		m["user.id"] = strconv.FormatInt(id.UserID, 10)
		m["user.email"] = id.UserEmail
		m["user.name"] = id.UserName
		m["user.display_name"] = id.UserName
		m["user.is_sys_admin"] = strconv.FormatBool(id.Admin)
	}
	if id.RoleID != 0 {
		m["role.id"] = strconv.FormatInt(id.RoleID, 10)
		m["role.name"] = id.RoleName
	}
	if id.AppID != 0 {
		m["app.id"] = strconv.FormatInt(id.AppID, 10)
		m["app.name"] = id.AppName
	}
	if id.SessionID != "" {
		m["session.id"] = id.SessionID
	}
	return m
}
