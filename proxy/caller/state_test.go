package caller_test

import (
	"context"
	"slices"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

type otherKey struct{ n int }

// TestState checks that a State answers like the chain of
// context.WithValue it stands for: its values win, hidden values stay
// hidden, other keys are looked up in the contexts it wraps, and a context
// derived from it gets a State of its own.
func TestState(t *testing.T) {
	outerID := &caller.Identity{AppID: 1}
	outerGrant := &caller.Grant{Fields: []string{"id"}}
	base := caller.WithRoleGranted(caller.WithGrant(caller.WithIdentity(
		caller.WithRequestID(context.WithValue(context.Background(), otherKey{9}, "base"), "outer"),
		outerID), outerGrant), true)

	st, fresh := caller.Ensure(base)
	if !fresh {
		t.Fatal("Ensure on a plain context returned no new State")
	}
	if again, fresh := caller.Ensure(st); again != st || fresh {
		t.Fatal("Ensure on a State did not return it")
	}
	// Nothing set: everything comes from the wrapped contexts.
	if caller.RequestID(st) != "outer" || caller.IdentityFrom(st) != outerID || caller.GrantFrom(st) != outerGrant ||
		!caller.RoleGranted(st) || st.Value(otherKey{9}) != "base" {
		t.Fatal("a State without values does not show its parent's")
	}

	id := &caller.Identity{AppID: 2}
	st.SetRequestID("inner")
	st.SetIdentity(id)
	st.SetGrant(nil)
	st.SetRoleGranted(false)
	for i := range 6 { // past the fixed slots
		st.Put(otherKey{i}, i)
	}
	st.Put(otherKey{1}, "replaced")
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"request id", caller.RequestID(st), "inner"},
		{"identity", caller.IdentityFrom(st), id},
		{"grant hidden", caller.GrantFrom(st), (*caller.Grant)(nil)},
		{"role granted hidden", caller.RoleGranted(st), false},
		{"put", st.Value(otherKey{0}), 0},
		{"put replaced", st.Value(otherKey{1}), "replaced"},
		{"put past the slots", st.Value(otherKey{5}), 5},
		{"parent's other key", st.Value(otherKey{9}), "base"},
		{"absent", st.Value(otherKey{7}), nil},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	// A request derived from it (an inner call) fills its own State.
	innerID := &caller.Identity{AppID: 3, Requestor: caller.Script}
	ictx := caller.WithInner(caller.WithIdentity(st, innerID))
	ist, fresh := caller.Ensure(ictx)
	if !fresh || ist == st {
		t.Fatal("a context derived from a State shares it")
	}
	if !caller.Inner(ist) || caller.IdentityFrom(ist) != innerID {
		t.Fatal("the inner State does not show the inner identity")
	}
	ist.SetGrant(&caller.Grant{})
	if caller.GrantFrom(st) != nil || caller.IdentityFrom(st) != id {
		t.Fatal("filling the inner State changed the outer one")
	}
}

// TestStateAllocs: filling a State costs no allocation.
func TestStateAllocs(t *testing.T) {
	st, _ := caller.Ensure(context.Background())
	id, g := &caller.Identity{}, &caller.Grant{}
	n := testing.AllocsPerRun(100, func() {
		st.SetRequestID("id")
		st.SetIdentity(id)
		st.SetGrant(g)
		st.SetRoleGranted(true)
		st.Put(otherKey{1}, id)
		_ = caller.RequestID(st)
		_ = caller.IdentityFrom(st)
		_ = caller.GrantFrom(st)
		_ = caller.RoleGranted(st)
		_ = st.Value(otherKey{1})
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

var stateSink *caller.State

// TestStateRoom checks the room of a State: the values it hands out are
// distinct and keep their contents while more are taken, it allocates only
// once its room is used up, and a nil State allocates every value.
func TestStateRoom(t *testing.T) {
	st, _ := caller.Ensure(context.Background())
	if caller.StateFrom(st) != st || caller.StateFrom(context.Background()) != nil {
		t.Fatal("StateFrom")
	}
	var ids []*caller.Identity
	var texts []string
	var hdrs [][]string
	for i := range 2 {
		id := st.NewIdentity()
		id.AppID = int64(i + 1)
		ids = append(ids, id)
	}
	texts = append(texts, st.Text([]byte("0123456789abcdef01234567")), st.Text([]byte("123456789")))
	for _, v := range []string{"a", "b", "c", "d"} {
		hdrs = append(hdrs, st.HeaderValue(v))
	}
	if got := testing.AllocsPerRun(10, func() {
		st2, _ := caller.Ensure(context.Background())
		stateSink = st2
		_ = st2.NewIdentity()
		_ = st2.NewIdentity()
		_ = st2.Text([]byte("0123456789abcdef01234567"))
		_ = st2.Text([]byte("0123456789abcdef01234567"))
		_ = st2.HeaderValue("a")
		_ = st2.HeaderValue("b")
		_ = st2.HeaderValue("c")
		_ = st2.HeaderValue("d")
	}); got != 1 {
		t.Errorf("a State and its room: %v allocations, want 1", got)
	}
	// Past the room: new values, still correct.
	ids = append(ids, st.NewIdentity())
	texts = append(texts, st.Text([]byte("0123456789abcdef")), st.Text(nil))
	hdrs = append(hdrs, st.HeaderValue("e"))
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0].AppID != 1 || ids[1].AppID != 2 || *ids[2] != (caller.Identity{}) {
		t.Errorf("identities: %+v", ids)
	}
	if want := []string{"0123456789abcdef01234567", "123456789", "0123456789abcdef", ""}; !slices.Equal(texts, want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	for i, want := range []string{"a", "b", "c", "d", "e"} {
		if len(hdrs[i]) != 1 || cap(hdrs[i]) != 1 || hdrs[i][0] != want {
			t.Errorf("header value %d: %q (cap %d), want [%q]", i, hdrs[i], cap(hdrs[i]), want)
		}
	}
	var none *caller.State
	if id := none.NewIdentity(); id == nil || none.Text([]byte("x")) != "x" || !slices.Equal(none.HeaderValue("y"), []string{"y"}) {
		t.Error("nil State")
	}
}
