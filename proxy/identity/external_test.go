package identity

import (
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TestSignInExternalAppRoles checks that AppRoles sets, changes and
// removes the user's role per app on every sign-in, on each database.
func TestSignInExternalAppRoles(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		ctx := t.Context()
		roles := []*store.Role{{Name: "r1", IsActive: true}, {Name: "r2", IsActive: true}}
		for _, r := range roles {
			if _, err := e.st.DB.NewInsert().Model(r).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var apps []int64
		if err := e.st.DB.NewSelect().Model((*store.App)(nil)).Column("id").Order("id").Scan(ctx, &apps); err != nil || len(apps) < 2 {
			t.Fatalf("apps %v: %v", apps, err)
		}
		first := apps[0]
		everywhere, changed := map[int64]int64{}, map[int64]int64{}
		for _, a := range apps {
			everywhere[a], changed[a] = roles[0].ID, roles[0].ID
		}
		changed[first] = roles[1].ID
		steps := []struct {
			name string
			pick func(app int64) (int64, bool)
			want map[int64]int64 // app → role
		}{
			{"first sign-in: r1 everywhere", func(int64) (int64, bool) { return roles[0].ID, true }, everywhere},
			{"group change: r2 on the first app", func(a int64) (int64, bool) { return changed[a], true }, changed},
			{"no group, no default: no roles", func(int64) (int64, bool) { return 0, false }, map[int64]int64{}},
		}
		var id int64
		for _, st := range steps {
			in, err := e.svc.SignInExternal(ctx, External{Service: "corp", Subject: "alice", Email: "alice@example.org",
				AppRoles: st.pick, Lifetime: 90 * time.Minute})
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if id != 0 && in.Response.ID != id {
				t.Fatalf("%s: user %d, first %d", st.name, in.Response.ID, id)
			}
			id = in.Response.ID
			if in.Lifetime != 90*time.Minute {
				t.Fatalf("%s: lifetime %v", st.name, in.Lifetime)
			}
			var rows []store.UserAppRole
			if err := e.st.DB.NewSelect().Model(&rows).Where("user_id = ?", id).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			got := map[int64]int64{}
			for _, r := range rows {
				got[r.AppID] = r.RoleID
			}
			if len(got) != len(st.want) || len(rows) != len(st.want) {
				t.Fatalf("%s: rows %v, want %v", st.name, got, st.want)
			}
			for a, r := range st.want {
				if got[a] != r {
					t.Fatalf("%s: app %d role %d, want %d", st.name, a, got[a], r)
				}
			}
		}
	})
}

func TestAttemptThrottle(t *testing.T) {
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	keys := AttemptKeys("corp", "Alice", "192.0.2.9")
	if keys.Account != "svc:corp:alice" {
		t.Fatalf("account key %q", keys.Account)
	}
	for i := 0; i < 6; i++ {
		if err := e.svc.CheckAttempt(t.Context(), keys); err != nil {
			t.Fatalf("attempt %d throttled: %v", i+1, err)
		}
		if err := e.svc.FailAttempt(t.Context(), keys, "nope"); KindOf(err) != Unauthenticated || MessageOf(err) != "nope" {
			t.Fatalf("fail: %v", err)
		}
	}
	if err := e.svc.CheckAttempt(t.Context(), keys); KindOf(err) != Throttled {
		t.Fatalf("after 6 failures: %v", err)
	}
	e.clock.Advance(time.Minute)
	if err := e.svc.CheckAttempt(t.Context(), keys); err != nil {
		t.Fatalf("after the delay: %v", err)
	}
	e.svc.SucceedAttempt(keys)
	if err := e.svc.FailAttempt(t.Context(), keys, "nope"); err == nil || e.svc.CheckAttempt(t.Context(), keys) != nil {
		t.Fatal("a success does not reset the account's count")
	}
}
