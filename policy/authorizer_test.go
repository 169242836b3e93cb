package policy

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// acc builds an API-requestor access entry for a named service.
func acc(service, component string, verbs int) Access {
	id := int64(0)
	if service != "" && service != "*" {
		id = int64(len(service)) // any non-zero id
	}
	return Access{ServiceID: id, Service: service, Component: component, VerbMask: verbs, RequestorMask: RequestorAPI}
}

func withReq(a Access, req int) Access { a.RequestorMask = req; return a }

type call struct {
	service, component, verb string
	requestor                caller.Requestor
}

func TestAuthorizeMatching(t *testing.T) {
	tests := []struct {
		name    string
		entries []Access
		call    call
		allowed bool
		class   Class
	}{
		// exact
		{"exact allows", []Access{acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact", "GET", caller.API}, true, ClassExact},
		{"exact other verb refused", []Access{acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact", "DELETE", caller.API}, false, ClassExact},
		{"exact is case-insensitive on component", []Access{acc("db", "_Table/Contact", VerbGet)},
			call{"db", "_table/CONTACT", "get", caller.API}, true, ClassExact},
		{"exact does not cover sub-path", []Access{acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact/5", "GET", caller.API}, false, ClassNone},
		{"exact with trailing slash in request", []Access{acc("db", "_table/contact", VerbGet), acc("db", "_table/*", VerbAll)},
			call{"db", "/_table/contact/", "DELETE", caller.API}, false, ClassExact},
		{"dot segments resolved before matching", []Access{acc("db", "_table/contact", VerbGet), acc("db", "_table/*", VerbAll)},
			call{"db", "_table/x/../contact", "DELETE", caller.API}, false, ClassExact},
		{"parenthesised group removed", []Access{acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact(id,name)", "GET", caller.API}, true, ClassExact},
		{"entry slashes trimmed", []Access{acc("db", "/_table/contact/", VerbGet)},
			call{"db", "_table/contact", "GET", caller.API}, true, ClassExact},
		{"service name is case-sensitive", []Access{acc("db", "*", VerbAll)},
			call{"DB", "_table/contact", "GET", caller.API}, false, ClassNone},
		{"other service not covered", []Access{acc("db", "*", VerbAll)},
			call{"files", "x", "GET", caller.API}, false, ClassNone},

		// component wildcard
		{"wildcard covers table", []Access{acc("db", "_table/*", VerbGet)},
			call{"db", "_table/contact", "GET", caller.API}, true, ClassComponent},
		{"wildcard covers record", []Access{acc("db", "_table/*", VerbGet)},
			call{"db", "_table/contact/5", "GET", caller.API}, true, ClassComponent},
		{"wildcard covers its own base", []Access{acc("db", "_table/*", VerbGet)},
			call{"db", "_table", "GET", caller.API}, true, ClassComponent},
		{"app/* covers app", []Access{acc("system", "app/*", VerbGet)},
			call{"system", "app", "GET", caller.API}, true, ClassComponent},
		{"app/* covers app/1", []Access{acc("system", "app/*", VerbGet)},
			call{"system", "app/1", "GET", caller.API}, true, ClassComponent},
		{"app/* does not cover apps", []Access{acc("system", "app/*", VerbGet)},
			call{"system", "apps", "GET", caller.API}, false, ClassNone},
		{"table wildcard covers table and records", []Access{acc("db", "_table/contact/*", VerbGet)},
			call{"db", "_table/contact/7", "GET", caller.API}, true, ClassComponent},
		{"table wildcard does not cover longer name", []Access{acc("db", "_table/contact/*", VerbGet)},
			call{"db", "_table/contacts", "GET", caller.API}, false, ClassNone},
		{"prefix wildcard without slash", []Access{acc("db", "_table/con*", VerbGet)},
			call{"db", "_table/contact", "GET", caller.API}, true, ClassComponent},
		{"wildcard does not cover root", []Access{acc("db", "_table/*", VerbGet)},
			call{"db", "", "GET", caller.API}, false, ClassNone},
		{"wildcard verbs refused", []Access{acc("db", "_table/*", VerbGet)},
			call{"db", "_table/contact", "POST", caller.API}, false, ClassComponent},

		// service-wide
		{"star covers component", []Access{acc("db", "*", VerbGet)},
			call{"db", "_table/contact/5", "GET", caller.API}, true, ClassService},
		{"star covers root", []Access{acc("db", "*", VerbGet)},
			call{"db", "", "GET", caller.API}, true, ClassService},

		// all services
		{"all services star", []Access{acc("", "*", VerbGet)},
			call{"anything", "_table/x", "GET", caller.API}, true, ClassAllServices},
		{"all services written as *", []Access{acc("*", "*", VerbGet)},
			call{"anything", "_table/x", "GET", caller.API}, true, ClassAllServices},
		{"all services root only", []Access{acc("", "", VerbGet)},
			call{"db", "", "GET", caller.API}, true, ClassAllServices},
		{"all services root does not cover components", []Access{acc("", "", VerbGet)},
			call{"db", "_table", "GET", caller.API}, false, ClassNone},
		{"service entry shadows all services", []Access{acc("", "*", VerbAll), acc("db", "*", VerbGet)},
			call{"db", "_table/x", "DELETE", caller.API}, false, ClassService},
		{"all services still serves other services", []Access{acc("", "*", VerbAll), acc("db", "*", VerbGet)},
			call{"files", "x", "DELETE", caller.API}, true, ClassAllServices},

		// root-only blank component
		{"blank component grants root", []Access{acc("db", "", VerbGet)},
			call{"db", "", "GET", caller.API}, true, ClassExact},
		{"blank component does not grant sub-path", []Access{acc("db", "", VerbGet)},
			call{"db", "_table", "GET", caller.API}, false, ClassNone},
		{"slash request is the root", []Access{acc("db", "", VerbGet)},
			call{"db", "/", "GET", caller.API}, true, ClassExact},

		// verbs OR-ed within the class
		{"verbs OR-ed across exact entries", []Access{acc("db", "_table/contact", VerbGet), acc("db", "_table/contact", VerbDelete)},
			call{"db", "_table/contact", "DELETE", caller.API}, true, ClassExact},
		{"verbs OR-ed across wildcards of different length",
			[]Access{acc("db", "_table/*", VerbGet), acc("db", "_table/contact/*", VerbDelete)},
			call{"db", "_table/contact/5", "GET", caller.API}, true, ClassComponent},
		{"verbs OR-ed across star entries", []Access{acc("db", "*", VerbGet), acc("db", "*", VerbPost)},
			call{"db", "x", "POST", caller.API}, true, ClassService},

		// most specific class wins
		{"exact narrower than star: broader allow ignored", []Access{acc("db", "*", VerbAll), acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact", "DELETE", caller.API}, false, ClassExact},
		{"exact wins over star: specific allow", []Access{acc("db", "*", VerbGet), acc("db", "_table/contact", VerbPost)},
			call{"db", "_table/contact", "POST", caller.API}, true, ClassExact},
		{"system/* GET plus system/app POST: no GET on app", []Access{acc("system", "*", VerbGet), acc("system", "app", VerbPost)},
			call{"system", "app", "GET", caller.API}, false, ClassExact},
		{"system/* GET still serves other components", []Access{acc("system", "*", VerbGet), acc("system", "app", VerbPost)},
			call{"system", "role", "GET", caller.API}, true, ClassService},
		{"zero mask exact shuts off broader allow", []Access{acc("db", "*", VerbAll), acc("db", "_table/secret", 0)},
			call{"db", "_table/secret", "GET", caller.API}, false, ClassExact},
		{"wildcard wins over star", []Access{acc("db", "*", VerbAll), acc("db", "_table/*", VerbGet)},
			call{"db", "_table/contact", "DELETE", caller.API}, false, ClassComponent},
		{"exact wins over wildcard: specific deny", []Access{acc("db", "_table/*", VerbAll), acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact", "PATCH", caller.API}, false, ClassExact},
		{"exact wins over wildcard: allow", []Access{acc("db", "_table/*", VerbGet), acc("db", "_table/contact", VerbPatch)},
			call{"db", "_table/contact", "PATCH", caller.API}, true, ClassExact},
		{"exact root wins over star", []Access{acc("db", "*", VerbAll), acc("db", "", VerbGet)},
			call{"db", "", "POST", caller.API}, false, ClassExact},

		// requestor masks
		{"API entry serves API", []Access{withReq(acc("db", "*", VerbGet), RequestorAPI)},
			call{"db", "x", "GET", caller.API}, true, ClassService},
		{"API entry refuses script", []Access{withReq(acc("db", "*", VerbGet), RequestorAPI)},
			call{"db", "x", "GET", caller.Script}, false, ClassNone},
		{"script entry refuses API", []Access{withReq(acc("db", "*", VerbGet), RequestorScript)},
			call{"db", "x", "GET", caller.API}, false, ClassNone},
		{"script entry serves script", []Access{withReq(acc("db", "*", VerbGet), RequestorScript)},
			call{"db", "x", "GET", caller.Script}, true, ClassService},
		{"both serves script", []Access{withReq(acc("db", "*", VerbGet), RequestorBoth)},
			call{"db", "x", "GET", caller.Script}, true, ClassService},
		{"zero requestor counts as API", []Access{withReq(acc("db", "*", VerbGet), RequestorAPI)},
			call{"db", "x", "GET", 0}, true, ClassService},
		{"unknown requestor refused", []Access{withReq(acc("db", "*", VerbGet), RequestorBoth)},
			call{"db", "x", "GET", caller.Requestor(4)}, false, ClassNone},
		{"script-only exact does not shadow API wildcard",
			[]Access{withReq(acc("db", "_table/contact", 0), RequestorScript), acc("db", "_table/*", VerbGet)},
			call{"db", "_table/contact", "GET", caller.API}, true, ClassComponent},
		{"script grant separate from API grant",
			[]Access{withReq(acc("db", "_table/contact", VerbDelete), RequestorScript), acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact", "DELETE", caller.API}, false, ClassExact},
		{"script grant separate from API grant (script side)",
			[]Access{withReq(acc("db", "_table/contact", VerbDelete), RequestorScript), acc("db", "_table/contact", VerbGet)},
			call{"db", "_table/contact", "DELETE", caller.Script}, true, ClassExact},
		{"zero requestor mask grants nothing", []Access{withReq(acc("db", "*", VerbAll), 0)},
			call{"db", "x", "GET", caller.API}, false, ClassNone},

		// verbs
		{"synonym READ is GET", []Access{acc("db", "*", VerbGet)},
			call{"db", "x", "READ", caller.API}, true, ClassService},
		{"HEAD needs its own bit", []Access{acc("db", "*", VerbAll)},
			call{"db", "x", "HEAD", caller.API}, false, ClassService},
		{"unknown verb refused", []Access{acc("db", "*", verbAny)},
			call{"db", "x", "BREW", caller.API}, false, ClassNone},
		{"no entries", nil,
			call{"db", "x", "GET", caller.API}, false, ClassNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{0, 100} { // uncached and cached must agree
				a, err := New([]Role{{ID: 1, Name: "r", Active: true, Accesses: tt.entries}}, WithCacheSize(size))
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				for range 2 { // second call is served from the cache
					d := a.Authorize(1, tt.call.service, tt.call.component, tt.call.verb, tt.call.requestor)
					if d.Err != nil {
						t.Fatalf("Err = %v", d.Err)
					}
					if d.Allowed != tt.allowed || d.Class != tt.class {
						t.Fatalf("cache %d: Allowed = %v, Class = %v; want %v, %v (decision %+v)",
							size, d.Allowed, d.Class, tt.allowed, tt.class, d)
					}
					wantReason := ReasonDenied
					if tt.allowed {
						wantReason = ReasonAllowed
					}
					if d.Reason != wantReason {
						t.Errorf("Reason = %v, want %v", d.Reason, wantReason)
					}
					if tt.allowed != (d.Message == "") {
						t.Errorf("Message = %q with Allowed %v", d.Message, d.Allowed)
					}
				}
			}
		})
	}
}

func TestAuthorizeRoles(t *testing.T) {
	roles := []Role{
		{ID: 1, Name: "active", Active: true, Accesses: []Access{acc("db", "*", VerbAll)}},
		{ID: 2, Name: "inactive", Active: false, Accesses: []Access{acc("db", "*", VerbAll)}},
	}
	a, err := New(roles)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		role int64
		want Decision
	}{
		{"active", 1, Decision{Allowed: true, Reason: ReasonAllowed, Class: ClassService}},
		{"inactive", 2, Decision{Reason: ReasonRoleInactive, Message: MsgRoleInactive}},
		{"unknown", 3, Decision{Reason: ReasonNoRole, Message: MsgRoleNotFound}},
		{"no role", 0, Decision{Reason: ReasonNoRole, Message: MsgRoleNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.Authorize(tt.role, "db", "_table/contact", "GET", caller.API)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthorizeMessages(t *testing.T) {
	a, err := New([]Role{{ID: 1, Active: true, Accesses: []Access{acc("db", "_table/other", VerbGet)}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call call
		want string
	}{
		{"component", call{"db", "_table/contact", "DELETE", caller.API},
			"Access Forbidden. DELETE access to component '_table/contact' of service 'db' is not allowed by this user's role."},
		{"root", call{"db", "", "GET", caller.API},
			"Access Forbidden. GET access to service 'db' is not allowed by this user's role."},
		{"normalised component and verb", call{"db", "/_table/Contact/", "delete", caller.API},
			"Access Forbidden. DELETE access to component '_table/contact' of service 'db' is not allowed by this user's role."},
		{"unknown verb", call{"db", "x", "brew", caller.API},
			"Access Forbidden. BREW access to component 'x' of service 'db' is not allowed by this user's role."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // uncached, then cached
				d := a.Authorize(1, tt.call.service, tt.call.component, tt.call.verb, tt.call.requestor)
				if d.Message != tt.want {
					t.Errorf("Message = %q\nwant      %q", d.Message, tt.want)
				}
			}
		})
	}
}

func TestAuthorizeGrant(t *testing.T) {
	owner := caller.Filter{Name: "owner_id", Operator: "=", Value: "{user.id}"}
	roles := []Role{{ID: 1, Active: true, Accesses: []Access{
		// 0: service-wide read, unrestricted
		acc("db", "*", VerbGet),
		// 1: contacts: read and write own rows, limited fields
		{ServiceID: 1, Service: "db", Component: "_table/contact/*", VerbMask: VerbGet | VerbPatch, RequestorMask: RequestorAPI,
			Filters: []caller.Filter{owner, {Name: " status ", Operator: "not  in", Value: "(1,2)"}}, FilterOp: "or",
			Fields: []string{"id", " name "}},
		// 2: broader wildcard with a different grant, same class
		{ServiceID: 1, Service: "db", Component: "_table/*", VerbMask: VerbGet | VerbDelete, RequestorMask: RequestorAPI,
			Fields: []string{"id"}},
		// 3, 4: two exact entries for the same component: last listed wins
		{ServiceID: 1, Service: "db", Component: "_table/order", VerbMask: VerbGet, RequestorMask: RequestorAPI,
			Fields: []string{"first"}},
		{ServiceID: 1, Service: "db", Component: "_table/order", VerbMask: VerbGet, RequestorMask: RequestorAPI,
			Fields: []string{"second"}},
		// 5: exact entry without the verb does not supply the grant
		{ServiceID: 1, Service: "db", Component: "_table/item", VerbMask: VerbGet, RequestorMask: RequestorAPI,
			Fields: []string{"read"}},
		{ServiceID: 1, Service: "db", Component: "_table/item", VerbMask: VerbPost, RequestorMask: RequestorAPI,
			Fields: []string{"write"}},
	}}}
	a, err := New(roles)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call call
		want *caller.Grant
	}{
		{"unrestricted entry gives nil grant", call{"db", "_schema", "GET", caller.API}, nil},
		{"fields and filters carried, normalised", call{"db", "_table/contact/5", "PATCH", caller.API}, &caller.Grant{
			Fields:   []string{"id", "name"},
			Filters:  []caller.Filter{owner, {Name: "status", Operator: "NOT IN", Value: "(1,2)"}},
			FilterOp: "OR",
		}},
		{"most specific wildcard supplies the grant", call{"db", "_table/contact", "GET", caller.API}, &caller.Grant{
			Fields:   []string{"id", "name"},
			Filters:  []caller.Filter{owner, {Name: "status", Operator: "NOT IN", Value: "(1,2)"}},
			FilterOp: "OR",
		}},
		{"verb OR-ed from broader wildcard brings its grant", call{"db", "_table/contact", "DELETE", caller.API},
			&caller.Grant{Fields: []string{"id"}, FilterOp: "AND"}},
		{"last listed of equals wins", call{"db", "_table/order", "GET", caller.API},
			&caller.Grant{Fields: []string{"second"}, FilterOp: "AND"}},
		{"grant from the entry that has the verb (GET)", call{"db", "_table/item", "GET", caller.API},
			&caller.Grant{Fields: []string{"read"}, FilterOp: "AND"}},
		{"grant from the entry that has the verb (POST)", call{"db", "_table/item", "POST", caller.API},
			&caller.Grant{Fields: []string{"write"}, FilterOp: "AND"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 {
				d := a.Authorize(1, tt.call.service, tt.call.component, tt.call.verb, tt.call.requestor)
				if !d.Allowed {
					t.Fatalf("refused: %+v", d)
				}
				if diff := cmp.Diff(tt.want, d.Grant); diff != "" {
					t.Errorf("grant (-want +got):\n%s", diff)
				}
			}
		})
	}
	if d := a.Authorize(1, "db", "_table/item", "DELETE", caller.API); d.Allowed || d.Grant != nil {
		t.Errorf("refused call carries %+v", d)
	}
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name  string
		roles []Role
		want  []string // substrings of the error; nil means valid
	}{
		{"valid", []Role{{ID: 1, Accesses: []Access{acc("db", "_table/*", VerbAll), acc("", "*", VerbGet), acc("", "", VerbGet)}}}, nil},
		{"empty", nil, nil},
		{"zero id", []Role{{ID: 0, Name: "x"}}, []string{"id 0 is not positive"}},
		{"duplicate id", []Role{{ID: 1}, {ID: 1}}, []string{"listed twice"}},
		{"star in the middle", []Role{{ID: 1, Accesses: []Access{acc("db", "_table/*/x", VerbGet)}}}, []string{`"*" may appear only once, at the end`}},
		{"two stars", []Role{{ID: 1, Accesses: []Access{acc("db", "**", VerbGet)}}}, []string{"only once"}},
		{"all services with component", []Role{{ID: 1, Accesses: []Access{acc("", "_table/*", VerbGet)}}}, []string{"all services must have component"}},
		{"service id without name", []Role{{ID: 1, Accesses: []Access{{ServiceID: 5, Component: "*", VerbMask: 1, RequestorMask: 1}}}},
			[]string{"service_id 5 has no service name"}},
		{"service id with star name", []Role{{ID: 1, Accesses: []Access{{ServiceID: 5, Service: "*", Component: "*", VerbMask: 1, RequestorMask: 1}}}},
			[]string{"cannot exist"}},
		{"bad masks", []Role{{ID: 1, Accesses: []Access{withReq(acc("db", "*", 2048), 4)}}},
			[]string{"verb_mask 2048", "requestor_mask 4"}},
		{"bad filter op", []Role{{ID: 1, Accesses: []Access{{Service: "db", Component: "*", VerbMask: 1, RequestorMask: 1, FilterOp: "xor"}}}},
			[]string{`filter_op "xor"`}},
		{"bad filters", []Role{{ID: 1, Accesses: []Access{{Service: "db", Component: "*", VerbMask: 1, RequestorMask: 1,
			Filters: []caller.Filter{{Name: "", Operator: "="}, {Name: "a", Operator: "LIKE"}}}}}},
			[]string{"filter 0: name is empty", `filter 1: operator "LIKE"`}},
		{"empty field", []Role{{ID: 1, Accesses: []Access{{Service: "db", Component: "*", VerbMask: 1, RequestorMask: 1, Fields: []string{"a", " "}}}}},
			[]string{"field 1 is empty"}},
		{"every problem reported", []Role{
			{ID: 1, Accesses: []Access{acc("db", "a*b", 1)}},
			{ID: 2, Accesses: []Access{acc("db", "*", -1)}},
		}, []string{"role 1", "role 2", "verb_mask -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.roles)
			if tt.want == nil {
				if err != nil || a == nil {
					t.Fatalf("New = %v, %v; want an authorizer", a, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New succeeded; want error containing %q", tt.want)
			}
			if a != nil {
				t.Errorf("New returned an authorizer with an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := New(nil, WithCacheSize(-1)); err == nil {
		t.Error("negative cache size accepted")
	}
}

func TestAccessValidate(t *testing.T) {
	good := acc("db", "_table/*", VerbGet)
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
	bad := acc("db", "a*/b", VerbGet)
	if err := bad.Validate(); err == nil {
		t.Error("Validate(bad) = nil")
	}
}

func TestNewDoesNotShareModels(t *testing.T) {
	// Two roles built from the same model text must not see each other's
	// rules (model.Model is mutable policy storage).
	a, err := New([]Role{
		{ID: 1, Active: true, Accesses: []Access{acc("db", "*", VerbAll)}},
		{ID: 2, Active: true},
	}, WithCacheSize(0))
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Authorize(2, "db", "x", "GET", caller.API); d.Allowed {
		t.Errorf("role 2 allowed by role 1's entry: %+v", d)
	}
}

func TestReachable(t *testing.T) {
	a, err := New([]Role{
		{ID: 1, Active: true, Accesses: []Access{
			acc("db", "_table/contact", VerbGet),
			acc("db", "_table/order/*", VerbGet),
			acc("db", "_proc/*", VerbPost),
			acc("files", "*", VerbGet),
			withReq(acc("hr", "_table/salary", VerbGet), RequestorScript),
		}},
		{ID: 2, Active: true, Accesses: []Access{acc("", "*", VerbGet)}},
		{ID: 3, Active: false, Accesses: []Access{acc("db", "*", VerbGet)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                     string
		role                     int64
		service, component, verb string
		want                     bool
	}{
		{"concrete table", 1, "db", "_table/contact", "GET", true},
		{"concrete table not granted", 1, "db", "_table/secret", "GET", false},
		{"template via exact entry", 1, "db", "_table/{table_name}", "GET", true},
		{"template via exact entry, other verb", 1, "db", "_table/{table_name}", "DELETE", false},
		{"record template via table wildcard", 1, "db", "_table/{table_name}/{id}", "GET", true},
		{"record template not via exact table entry", 1, "db", "_table/{table_name}/{id}", "POST", false},
		{"proc template via wildcard", 1, "db", "_proc/{procedure_name}", "POST", true},
		{"template on other service", 1, "files", "{path}", "GET", true},
		{"template on unknown service", 1, "mail", "{x}", "GET", false},
		{"script-only entry not reachable for API", 1, "hr", "_table/{t}", "GET", false},
		{"all services role", 2, "db", "_table/{t}", "GET", true},
		{"inactive role", 3, "db", "_table/contact", "GET", false},
		{"unknown role", 9, "db", "_table/{t}", "GET", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := a.Reachable(tt.role, tt.service, tt.component, tt.verb, caller.API); got != tt.want {
				t.Errorf("Reachable = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServiceReachable(t *testing.T) {
	a, err := New([]Role{
		{ID: 1, Active: true, Accesses: []Access{
			acc("db", "_table/contact", VerbGet),
			acc("", "*", VerbAll),
			withReq(acc("hr", "*", VerbGet), RequestorScript),
		}},
		{ID: 2, Active: false, Accesses: []Access{acc("db", "*", VerbGet)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		role      int64
		service   string
		verb      string
		requestor caller.Requestor
		want      bool
	}{
		{"service with GET entry", 1, "db", "GET", caller.API, true},
		{"service entries shadow all-services", 1, "db", "DELETE", caller.API, false},
		{"other service via all-services", 1, "files", "DELETE", caller.API, true},
		{"script entry for script", 1, "hr", "GET", caller.Script, true},
		{"script entry ignored for API: all-services applies", 1, "hr", "POST", caller.API, true},
		{"unknown verb", 1, "db", "BREW", caller.API, false},
		{"inactive role", 2, "db", "GET", caller.API, false},
		{"unknown role", 3, "db", "GET", caller.API, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := a.ServiceReachable(tt.role, tt.service, tt.verb, tt.requestor); got != tt.want {
				t.Errorf("ServiceReachable = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAuthorizeConcurrent(t *testing.T) {
	var entries []Access
	for i := range 20 {
		entries = append(entries, acc("db", fmt.Sprintf("_table/t%d/*", i), VerbGet|VerbPost))
	}
	entries = append(entries, acc("db", "_table/t3", VerbDelete), acc("", "*", VerbGet))
	a, err := New([]Role{{ID: 1, Active: true, Accesses: entries}}, WithCacheSize(64))
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, calls = 16, 600
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				n := (g*calls + i) % 200
				comp := fmt.Sprintf("_table/t%d/%d", n%25, n)
				d := a.Authorize(1, "db", comp, "POST", caller.API)
				want := n%25 < 20
				if d.Allowed != want || d.Err != nil {
					errs <- fmt.Errorf("%s: Allowed = %v, want %v (%v)", comp, d.Allowed, want, d.Err)
					return
				}
				if d := a.Authorize(1, "db", "_table/t3", "GET", caller.API); d.Allowed {
					errs <- errors.New("_table/t3 GET allowed past its exact entry")
					return
				}
				if d := a.Authorize(1, "other", comp, "GET", caller.API); !d.Allowed {
					errs <- errors.New("all-services GET refused")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := a.cache.len(); n > 64 {
		t.Errorf("cache holds %d decisions, bound is 64", n)
	}
}

// TestEnforcersBuiltOnDemand: New builds no Casbin enforcer; a decision
// builds only the one for its (role, service), and concurrent first
// decisions share it.
func TestEnforcersBuiltOnDemand(t *testing.T) {
	a, err := New([]Role{{ID: 1, Name: "r", Active: true, Accesses: []Access{
		acc("db", "_table/*", VerbGet), acc("files", "*", VerbGet),
	}}}, WithCacheSize(0))
	if err != nil {
		t.Fatal(err)
	}
	r := a.roles[1]
	built := func(l *lazyEnforcer) bool { return l.enf != nil }
	if built(r.enf["db"]) || built(r.enf["files"]) || built(r.rest) {
		t.Fatal("New built enforcers")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if d := a.Authorize(1, "db", "_table/contact", "GET", caller.API); !d.Allowed {
				t.Errorf("refused: %+v", d)
			}
		})
	}
	wg.Wait()
	if !built(r.enf["db"]) || built(r.enf["files"]) || built(r.rest) {
		t.Errorf("after a db decision: db %v, files %v, rest %v; want only db built",
			built(r.enf["db"]), built(r.enf["files"]), built(r.rest))
	}
	if d := a.Authorize(1, "other", "x", "GET", caller.API); d.Allowed || !built(r.rest) {
		t.Errorf("other service: %+v, rest built %v", d, built(r.rest))
	}
}
