package system

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Verb mask bits of role_service_access.verb_mask and cors_config.method
// (DreamFactory's VerbsMask).
var verbBits = []struct {
	Verb string
	Bit  int
}{
	{"GET", 1}, {"POST", 2}, {"PUT", 4}, {"PATCH", 8}, {"DELETE", 16},
	{"OPTIONS", 32}, {"HEAD", 64}, {"COPY", 128}, {"TRACE", 256}, {"CONNECT", 512},
}

// verbMaskAll is every defined verb bit.
const verbMaskAll = 1023

// Requestor mask bits.
const (
	requestorAPI    = int(caller.API)
	requestorScript = int(caller.Script)
)

// filterOperators are the server-side filter operators an access entry may
// use (DreamFactory's DbComparisonOperators::getServerSideFilterOperators).
var filterOperators = []string{"=", "!=", ">", ">=", "<", "<=", "IN", "NOT IN",
	"STARTS WITH", "ENDS WITH", "CONTAINS", "IS NULL", "IS NOT NULL"}

func (b *Backend) roleTable() *table[store.Role] {
	return &table[store.Role]{
		name: "role",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("name", filter.KindString, readWrite),
			col("description", filter.KindString, readWrite),
			col("is_active", filter.KindBoolean, readWrite),
		}, auditFields()...),
		relations: []*relation{
			{name: "role_service_access_by_role_id", target: b.model("role_service_access"), many: true, fk: "role_id", writable: true},
			{name: "lookup_by_role_id", target: b.model("lookup_child"), many: true, fk: "role_id", writable: true},
			{name: "app_by_role_id", target: b.model("app"), many: true, fk: "role_id"},
			{name: "user_to_app_to_role_by_role_id", target: b.model("user_to_app_to_role"), many: true, fk: "role_id"},
			{name: "limits_by_role_id", target: b.model("limit"), many: true, fk: "role_id"},
		},
		defaults: func(_ *writer, r *store.Role) { r.IsActive = true },
		validate: func(c *check, r, old *store.Role, p *problems) error {
			text(p, "name", &r.Name, true, 64)
			text(p, "description", &r.Description, false, 255)
			if !p.empty() || old != nil && r.Name == old.Name {
				return nil
			}
			taken, err := exists[store.Role](c.w, "name = ? AND id <> ?", r.Name, r.ID)
			if err != nil {
				return err
			}
			if taken {
				return conflict("A role named '%s' already exists.", r.Name)
			}
			return nil
		},
	}
}

// filtersCodec shows an access entry's filters as an array of
// {name, operator, value} and accepts the same.
func filtersCodec() fieldOpt {
	return withCodec(func(v reflect.Value) (any, error) {
		s := strings.TrimSpace(v.String())
		if s == "" {
			return []caller.Filter{}, nil
		}
		var fs []caller.Filter
		if err := json.Unmarshal([]byte(s), &fs); err != nil {
			return nil, fmt.Errorf("stored filters are not an array of filters: %w", err)
		}
		if fs == nil {
			fs = []caller.Filter{}
		}
		return fs, nil
	}, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("must be an array of {name, operator, value} objects")
		}
		fs := make([]caller.Filter, 0, len(items))
		for i, it := range items {
			var f caller.Filter
			for k, dst := range map[string]*string{"name": &f.Name, "operator": &f.Operator, "value": &f.Value} {
				raw, ok := it[k]
				if !ok || isNullJSON(raw) {
					continue
				}
				s, ok := scalarText(raw)
				if !ok {
					return fmt.Errorf("filter %d: %s must be a string", i, k)
				}
				*dst = s
			}
			fs = append(fs, f)
		}
		if len(fs) == 0 {
			v.SetString("")
			return nil
		}
		out, _ := json.Marshal(fs)
		v.SetString(string(out))
		return nil
	})
}

func (b *Backend) accessTable() *table[store.RoleServiceAccess] {
	return &table[store.RoleServiceAccess]{
		name: "role_service_access",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("role_id", filter.KindInteger, readWrite),
			col("service_id", filter.KindInteger, readWrite),
			col("component", filter.KindString, readWrite),
			col("verb_mask", filter.KindInteger, readWrite),
			col("requestor_mask", filter.KindInteger, readWrite),
			col("filters", filter.KindString, readWrite, filtersCodec()),
			col("filter_op", filter.KindString, readWrite),
			col("fields", filter.KindString, readWrite, stringListCodec()),
		}, auditFields()...),
		relations: []*relation{
			{name: "role_by_role_id", target: b.model("role"), fk: "role_id"},
			{name: "service_by_service_id", target: b.model("service"), fk: "service_id"},
		},
		defaults: func(_ *writer, a *store.RoleServiceAccess) {
			a.RequestorMask, a.FilterOp = requestorAPI, "AND"
		},
		validate: validateAccess,
	}
}

func validateAccess(c *check, a, _ *store.RoleServiceAccess, p *problems) error {
	if c.nestedFK != "role_id" {
		if a.RoleID <= 0 {
			p.add("role_id", "role_id is required")
		} else if err := reference[store.Role](c.w, p, "role_id", "role", &a.RoleID); err != nil {
			return err
		}
	}
	if err := reference[store.Service](c.w, p, "service_id", "service", a.ServiceID); err != nil {
		return err
	}
	text(p, "component", &a.Component, false, 255)
	a.Component = strings.Trim(a.Component, "/")
	if i := strings.IndexByte(a.Component, '*'); i >= 0 && i != len(a.Component)-1 {
		p.add("component", "'*' may appear only once, at the end of the component")
	}
	if a.ServiceID == nil && a.Component != "" && a.Component != "*" {
		p.add("component", "an entry for all services (no service_id) must have component '*' or none")
	}
	if a.VerbMask < 0 || a.VerbMask&^verbMaskAll != 0 {
		p.add("verb_mask", "verb_mask %d uses undefined bits: GET 1, POST 2, PUT 4, PATCH 8, DELETE 16 (up to CONNECT 512)", a.VerbMask)
	}
	if a.RequestorMask < 0 || a.RequestorMask&^(requestorAPI|requestorScript) != 0 {
		p.add("requestor_mask", "requestor_mask must be 1 (API), 2 (script) or 3 (both)")
	}
	switch op := strings.ToUpper(strings.TrimSpace(a.FilterOp)); op {
	case "", "AND":
		a.FilterOp = "AND"
	case "OR":
		a.FilterOp = "OR"
	default:
		p.add("filter_op", "filter_op must be AND or OR")
	}
	if a.Filters != "" {
		var fs []caller.Filter
		_ = json.Unmarshal([]byte(a.Filters), &fs)
		for i := range fs {
			f := &fs[i]
			f.Name = strings.TrimSpace(f.Name)
			if f.Name == "" {
				p.add("filters", "filter %d has no field name", i)
			}
			op := strings.ToUpper(strings.Join(strings.Fields(f.Operator), " "))
			if !contains(filterOperators, op) {
				p.add("filters", "filter %d: operator '%s' is not one of %s", i, f.Operator, strings.Join(filterOperators, ", "))
			}
			f.Operator = op
		}
		out, _ := json.Marshal(fs)
		a.Filters = string(out)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// stringOr returns the string value of member name, "" when absent or not
// a string.
func (f fields) stringOr(name string) string {
	raw, ok := f[name]
	if !ok {
		return ""
	}
	s, _ := scalarText(raw)
	return s
}

func (b *Backend) userAppRoleTable() *table[store.UserAppRole] {
	return &table[store.UserAppRole]{
		name: "user_to_app_to_role",
		key:  "id",
		fields: []*field{
			col("id", filter.KindInteger, readOnly),
			col("user_id", filter.KindInteger, readWrite),
			col("app_id", filter.KindInteger, readWrite),
			col("role_id", filter.KindInteger, readWrite),
		},
		relations: []*relation{
			{name: "user_by_user_id", target: b.model("any_user"), fk: "user_id"},
			{name: "app_by_app_id", target: b.model("app"), fk: "app_id"},
			{name: "role_by_role_id", target: b.model("role"), fk: "role_id"},
		},
		validate: func(c *check, u, old *store.UserAppRole, p *problems) error {
			refs := []struct {
				name, what string
				id         int64
				check      func(*writer, *problems, string, string, *int64) error
			}{
				{"user_id", "user", u.UserID, reference[store.User]},
				{"app_id", "app", u.AppID, reference[store.App]},
				{"role_id", "role", u.RoleID, reference[store.Role]},
			}
			for _, r := range refs {
				if r.name == c.nestedFK {
					continue
				}
				if r.id <= 0 {
					p.add(r.name, "%s is required", r.name)
					continue
				}
				id := r.id
				if err := r.check(c.w, p, r.name, r.what, &id); err != nil {
					return err
				}
			}
			if !p.empty() || u.UserID == 0 || old != nil && old.UserID == u.UserID && old.AppID == u.AppID {
				return nil
			}
			taken, err := exists[store.UserAppRole](c.w, "user_id = ? AND app_id = ? AND id <> ?", u.UserID, u.AppID, u.ID)
			if err != nil {
				return err
			}
			if taken {
				p.add("app_id", "Multiple user-to-app-to-role assignment. You can only have a single user-to-app-to-role assignment.")
			}
			return nil
		},
	}
}
