package caller_test

import (
	"context"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

func TestContextAndGrant(t *testing.T) {
	ctx := context.Background()
	if caller.IdentityFrom(ctx) != nil || caller.GrantFrom(ctx) != nil {
		t.Fatal("empty context carries an identity or a grant")
	}
	id := &caller.Identity{UserID: 3, Requestor: caller.Script}
	ctx = caller.WithGrant(caller.WithIdentity(ctx, id), &caller.Grant{Fields: []string{"Name", "id"}})
	if got := caller.IdentityFrom(ctx); got != id || !got.Authenticated() || !got.FromScript() {
		t.Fatalf("identity = %+v", got)
	}
	g := caller.GrantFrom(ctx)
	for field, want := range map[string]bool{"name": true, "NAME": true, "id": true, "secret": false} {
		if g.AllowsField(field) != want {
			t.Errorf("AllowsField(%q) = %v", field, !want)
		}
	}
	var none *caller.Grant
	if !none.AllowsField("anything") || !(&caller.Grant{}).AllowsField("x") {
		t.Error("a nil or empty grant must allow every field")
	}
}

func TestInner(t *testing.T) {
	ctx := context.Background()
	id := &caller.Identity{AppID: 1, Requestor: caller.API}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"plain", ctx, false},
		{"identity only", caller.WithIdentity(ctx, id), false},
		{"marked without identity", caller.WithInner(ctx), false},
		{"marked with identity", caller.WithInner(caller.WithIdentity(ctx, id)), true},
	} {
		if got := caller.Inner(tc.ctx); got != tc.want {
			t.Errorf("%s: Inner = %v, want %v", tc.name, got, tc.want)
		}
	}
}
