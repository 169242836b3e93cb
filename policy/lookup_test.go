package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

var testLookups = map[string]string{
	"user.id":    "42",
	"user.email": "Ann@Example.com",
	"role.id":    "7",
	"app.id":     "3",
	"region":     "  north west ",
	"my-key":     "v",
	"blob":       "aGVsbG8gd29ybGQ=",
	"path":       "a b/c~d+e",
	"self":       "{user.id}",
}

func TestReplaceLookups(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error
	}{
		{"no lookups", "plain", "plain", nil},
		{"json braces untouched", `{"a":1}`, `{"a":1}`, nil},
		{"empty braces untouched", "{}", "{}", nil},
		{"user id", "{user.id}", "42", nil},
		{"embedded", "owner={user.id}&app={app.id}", "owner=42&app=3", nil},
		{"role id", "{role.id}", "7", nil},
		{"named lookup", "{region}", "  north west ", nil},
		{"hyphenated name", "{my-key}", "v", nil},
		{"modifier", "{strtoupper(user.email)}", "ANN@EXAMPLE.COM", nil},
		{"nested modifiers innermost first", "{ucwords(trim(region))}", "North West", nil},
		{"strtolower", "{strtolower(user.email)}", "ann@example.com", nil},
		{"ucfirst", "{ucfirst(trim(region))}", "North west", nil},
		{"lcfirst", "{lcfirst(user.email)}", "ann@Example.com", nil},
		{"urlencode", "{urlencode(path)}", "a+b%2Fc%7Ed%2Be", nil},
		{"rawurlencode", "{rawurlencode(path)}", "a%20b%2Fc~d%2Be", nil},
		{"urldecode", "{urldecode(urlencode(path))}", "a b/c~d+e", nil},
		{"rawurldecode", "{rawurldecode(rawurlencode(path))}", "a b/c~d+e", nil},
		{"base64", "{base64_decode(blob)}", "hello world", nil},
		{"base64 round trip", "{base64_decode(base64_encode(path))}", "a b/c~d+e", nil},
		{"one pass only", "{self}", "{user.id}", nil},
		{"unknown name", "{user.name}", "", ErrUnknownLookup},
		{"unknown named lookup", "x {nope} y", "", ErrUnknownLookup},
		{"unknown modifier", "{system(user.id)}", "", ErrBadLookup},
		{"unbalanced", "{trim(user.id}", "", ErrBadLookup},
		{"empty inner name", "{trim()}", "", ErrBadLookup},
		{"pipe in name", "{a|b}", "", ErrBadLookup},
		{"bad base64", "{base64_decode(user.email)}", "", ErrBadLookup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReplaceLookups(tt.in, testLookups)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got != tt.want {
				t.Errorf("ReplaceLookups(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSubstituteLookups(t *testing.T) {
	shared := &caller.Grant{Fields: []string{"id"}, FilterOp: "AND",
		Filters: []caller.Filter{{Name: "status", Operator: "=", Value: "open"}}}
	withLookup := &caller.Grant{Fields: []string{"id", "owner_id"}, FilterOp: "OR", Filters: []caller.Filter{
		{Name: "owner_id", Operator: "=", Value: "{user.id}"},
		{Name: "region", Operator: "IN", Value: "({trim(region)},'all')"},
	}}
	tests := []struct {
		name    string
		in      *caller.Grant
		want    *caller.Grant
		same    bool // result is the input itself
		wantErr error
	}{
		{"nil", nil, nil, true, nil},
		{"nothing to substitute", shared, shared, true, nil},
		{"substituted", withLookup, &caller.Grant{Fields: []string{"id", "owner_id"}, FilterOp: "OR", Filters: []caller.Filter{
			{Name: "owner_id", Operator: "=", Value: "42"},
			{Name: "region", Operator: "IN", Value: "(north west,'all')"},
		}}, false, nil},
		{"unknown lookup", &caller.Grant{Filters: []caller.Filter{{Name: "a", Operator: "=", Value: "{user.name}"}}}, nil, false, ErrUnknownLookup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneGrant(tt.in)
			got, err := SubstituteLookups(tt.in, testLookups)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || got != nil {
					t.Fatalf("got %+v, %v; want error %v", got, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), `filter 0 on "a"`) {
					t.Errorf("error %q does not name the filter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("grant (-want +got):\n%s", diff)
			}
			if tt.same != (got == tt.in) {
				t.Errorf("result is input: %v, want %v", got == tt.in, tt.same)
			}
			if diff := cmp.Diff(before, tt.in); diff != "" {
				t.Errorf("input grant changed (-before +after):\n%s", diff)
			}
		})
	}
}

func cloneGrant(g *caller.Grant) *caller.Grant {
	if g == nil {
		return nil
	}
	c := *g
	c.Filters = append([]caller.Filter(nil), g.Filters...)
	c.Fields = append([]string(nil), g.Fields...)
	return &c
}

func TestIdentityLookups(t *testing.T) {
	named := map[string]string{"region": "north", "user.id": "spoofed"}
	tests := []struct {
		name string
		id   *caller.Identity
		want map[string]string
	}{
		{"nil identity", nil, map[string]string{"region": "north", "user.id": "spoofed"}},
		{"API key only", &caller.Identity{AppID: 3, AppName: "web", RoleID: 7, RoleName: "reader"}, map[string]string{
			"region": "north", "user.id": "spoofed",
			"app.id": "3", "app.name": "web", "role.id": "7", "role.name": "reader",
		}},
		{"signed-in user", &caller.Identity{AppID: 3, AppName: "web", RoleID: 7, RoleName: "reader",
			UserID: 42, UserEmail: "a@b.c", UserName: "Ann", SessionID: "jti"}, map[string]string{
			"region": "north", "user.id": "42", "user.email": "a@b.c", "user.name": "Ann",
			"user.display_name": "Ann", "user.is_sys_admin": "false",
			"app.id": "3", "app.name": "web", "role.id": "7", "role.name": "reader", "session.id": "jti",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := IdentityLookups(tt.id, named)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lookups (-want +got):\n%s", diff)
			}
		})
	}
	if named["user.id"] != "spoofed" {
		t.Error("IdentityLookups changed its input map")
	}
}

func FuzzReplaceLookups(f *testing.F) {
	for _, s := range []string{"{user.id}", "{a(b(c))}", "x{", "}{", "{trim(region)}{self}", "{{user.id}}", "{a|b}", "{a.b-c}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ReplaceLookups(s, testLookups)
		if err != nil {
			if !errors.Is(err, ErrUnknownLookup) && !errors.Is(err, ErrBadLookup) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !strings.Contains(s, "{") && got != s {
			t.Fatalf("text without braces changed: %q -> %q", s, got)
		}
	})
}
