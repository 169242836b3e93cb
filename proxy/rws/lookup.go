package rws

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// builtins are the lookups the proxy fills from the caller's identity and
// the request; a reference to another name in these namespaces is a
// configuration error rather than a lookup that never resolves.
var builtins = map[string]bool{
	"user.id": true, "user.email": true, "user.name": true, "user.display_name": true, "user.is_sys_admin": true,
	"role.id": true, "role.name": true, "app.id": true, "app.name": true,
	"df.host_url": true, "df.name": true, "df.version": true, "df.api_version": true,
}

// refused are built-in lookups DreamFactory knows that would send a
// platform credential upstream.
var refused = map[string]bool{"session.id": true, "session.token": true, "app.api_key": true}

// checkLookups reports a malformed token, a modifier outside the allowed
// list, a built-in that does not exist, or one that would leak a platform
// credential.
func checkLookups(s string) error {
	var errs []error
	for _, tok := range caller.FindLookups(s) {
		mods, name, err := caller.ParseLookup(tok[1 : len(tok)-1])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range mods {
			if !caller.LookupModifierAllowed(m) {
				errs = append(errs, fmt.Errorf("lookup %s: modifier %q is not allowed", tok, m))
			}
		}
		switch {
		case refused[name]:
			errs = append(errs, fmt.Errorf("lookup %s would forward a platform credential and is not available", tok))
		case builtins[name]:
		case hasBuiltinPrefix(name):
			errs = append(errs, fmt.Errorf("lookup %s is not a known built-in (have %s)", tok, builtinList()))
		}
	}
	return errors.Join(errs...)
}

func hasBuiltinPrefix(name string) bool {
	for _, p := range []string{"user.", "role.", "app.", "df.", "session."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func builtinList() string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, "{"+n+"}")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// substitute replaces every lookup token in s from values, in one pass (a
// value that looks like a lookup is not expanded again; see
// caller.ReplaceLookups). ok is false when a token has no value or cannot
// be applied: the caller then leaves the header or parameter out rather
// than send the token verbatim.
func substitute(s string, values map[string]string) (out string, ok bool) {
	out, err := caller.ReplaceLookups(s, values)
	return out, err == nil
}

// lookupValues builds the values lookups resolve against for r: the named
// lookups, then the built-ins of the caller's identity and the request
// (which win over a named lookup of the same name, as in DreamFactory).
// Absent facts are left out, so a header needing {user.email} on a call
// without a signed-in user is not sent.
func (p *Proxy) lookupValues(r *http.Request) map[string]string {
	var named map[string]string
	if p.cfg.Lookups != nil {
		named = p.cfg.Lookups(r)
	}
	m := make(map[string]string, len(named)+13)
	for k, v := range named {
		// A named lookup never stands in for a built-in the caller lacks.
		if !hasBuiltinPrefix(k) {
			m[k] = v
		}
	}
	if id := caller.IdentityFrom(r.Context()); id != nil {
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
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	m["df.host_url"] = scheme + "://" + r.Host
	m["df.name"] = "Portcullis"
	m["df.version"] = p.cfg.Version
	m["df.api_version"] = "2.0"
	return m
}

// SnapshotLookups returns the named lookups that apply to id from the
// system configuration, with DreamFactory's precedence: global, then the
// app's, then the role's, then the user's, a later level overwriting an
// earlier one. Private lookups are included: like DreamFactory, a service
// configuration may use them (an upstream secret in a header), and their
// values are sent upstream only, never to the client.
func SnapshotLookups(snap *store.Snapshot, id *caller.Identity) map[string]string {
	var appID, roleID, userID int64
	if id != nil {
		appID, roleID, userID = id.AppID, id.RoleID, id.UserID
	}
	return snap.LookupsFor(appID, roleID, userID, true)
}
