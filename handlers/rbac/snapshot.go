package rbac

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// RoleFromRecord converts a system role record with its access entries
// (store.Snapshot.Roles carries them) into the engine's form. Service ids
// are resolved to names in snap; a null service id means all services.
// Filters and Fields are read from their stored JSON (Fields may also be a
// comma-separated list, as other tools write it). The error reports every
// entry that cannot be read; the role returned alongside it is still
// complete but for those entries, and must not be used as is (dropping an
// entry can widen access: an entry with verb mask 0 fences its component
// off from broader entries).
func RoleFromRecord(snap *store.Snapshot, r *store.Role) (policy.Role, error) {
	out := policy.Role{ID: r.ID, Name: r.Name, Active: r.IsActive, Accesses: make([]policy.Access, 0, len(r.Accesses))}
	var errs []error
	for _, rec := range r.Accesses {
		a, err := accessFromRecord(snap, rec)
		if err != nil {
			errs = append(errs, fmt.Errorf("access %d: %w", rec.ID, err))
			continue
		}
		out.Accesses = append(out.Accesses, a)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("role %d (%q): %w", r.ID, r.Name, errors.Join(errs...))
	}
	return out, nil
}

func accessFromRecord(snap *store.Snapshot, rec *store.RoleServiceAccess) (policy.Access, error) {
	a := policy.Access{
		Component:     rec.Component,
		VerbMask:      rec.VerbMask,
		RequestorMask: rec.RequestorMask,
		FilterOp:      rec.FilterOp,
	}
	if rec.ServiceID != nil {
		a.ServiceID = *rec.ServiceID
		svc := snap.ServiceByID(*rec.ServiceID)
		if svc == nil {
			return a, fmt.Errorf("service %d does not exist", *rec.ServiceID)
		}
		a.Service = svc.Name
	}
	if s := strings.TrimSpace(rec.Filters); s != "" && s != "null" {
		if err := json.Unmarshal([]byte(s), &a.Filters); err != nil {
			return a, fmt.Errorf("filters are not a JSON array of {name, operator, value}: %w", err)
		}
	}
	fields, err := parseFields(rec.Fields)
	if err != nil {
		return a, err
	}
	a.Fields = fields
	if err := a.Validate(); err != nil {
		return a, err
	}
	return a, nil
}

// parseFields reads a stored field list: a JSON array of names, or a
// comma-separated string.
func parseFields(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return nil, nil
	}
	var list []string
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("fields are not a JSON array of names: %w", err)
		}
	} else {
		list = strings.Split(s, ",")
	}
	out := list[:0]
	for _, f := range list {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Policy builds the Authorizer of snap's roles. It fails closed: a role
// with an entry that cannot be read or is invalid (records edited behind
// the system API's back) keeps its id and active flag but grants nothing,
// and the problems are returned, joined, for the caller to log; the
// Authorizer is still usable. Only invalid options make it nil.
func Policy(snap *store.Snapshot, opts ...policy.Option) (*policy.Authorizer, error) {
	roles := make([]policy.Role, 0, len(snap.Roles))
	var errs []error
	for _, r := range snap.Roles {
		pr, err := RoleFromRecord(snap, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w (the role grants nothing until it is fixed)", err))
			pr.Accesses = nil
		}
		roles = append(roles, pr)
	}
	a, err := policy.New(roles, opts...)
	if err != nil {
		// The entries passed Validate one by one; what is left is the
		// options, or a role id the store would not hold. Grant nothing.
		errs = append(errs, err)
		bare := make([]policy.Role, 0, len(roles))
		for _, r := range roles {
			if r.ID > 0 {
				bare = append(bare, policy.Role{ID: r.ID, Name: r.Name, Active: r.Active})
			}
		}
		if a, err = policy.New(bare, opts...); err != nil {
			return nil, errors.Join(errs...)
		}
	}
	return a, errors.Join(errs...)
}

// SnapshotLookups returns the named lookups that apply to id from snap,
// with DreamFactory's precedence: global, then the app's, then the role's,
// then the user's, a later level overwriting an earlier one. Private
// lookups are left out after the merge: DreamFactory substitutes them in
// service configuration and scripts only, never in role filters, so a
// private lookup also hides a public one of the same name at a lower
// level (the filter then fails rather than use the wrong value).
func SnapshotLookups(snap *store.Snapshot, id *caller.Identity) map[string]string {
	var appID, roleID, userID int64
	if id != nil {
		appID, roleID, userID = id.AppID, id.RoleID, id.UserID
	}
	return snap.LookupsFor(appID, roleID, userID, false)
}
