package proxy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// configSize is how much configuration an instance holds besides what
// the measured request uses.
type configSize struct {
	services, roles, accessPerRole, limits, users int
}

var (
	smallConfig = configSize{}
	largeConfig = configSize{services: 1000, roles: 2000, accessPerRole: 20, limits: 500, users: 100_000}
)

// BenchmarkPipelineConfigSize measures one authorized, rate-limited read
// by id (API key, RBAC, five limits that apply) on an instance with the
// small configuration the request needs, and on one that also holds 1,000
// services, 2,000 roles with 20 access entries each, 500 limits and
// 100,000 users. The pipeline's cost must not grow with the configuration:
// compare ns/op of the two. startup-ms is proxy.New on that system
// database (load and build everything), heap-MB the live heap after it,
// and reload-ms how long a configuration change (a role deactivated)
// took to reach the instance.
func BenchmarkPipelineConfigSize(b *testing.B) {
	for _, c := range []struct {
		name string
		size configSize
	}{{"small", smallConfig}, {"large", largeConfig}} {
		b.Run(c.name, func(b *testing.B) {
			srv, key, startup, heap, db := configSizedInstance(b, c.size)
			status := func() int {
				r := httptest.NewRequest(http.MethodGet, "/api/v2/benchdb/_table/item/7", nil)
				r.Header.Set("X-Platform-API-Key", key)
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, r)
				return w.Code
			}
			req := func() {
				if code := status(); code != http.StatusOK {
					b.Fatalf("status %d", code)
				}
			}
			req()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req()
			}
			b.StopTimer()
			b.ReportMetric(float64(startup.Milliseconds()), "startup-ms")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
			b.ReportMetric(float64(reloadTime(b, db, status).Milliseconds()), "reload-ms")
		})
	}
}

// configSizedInstance builds an instance with size's extra configuration
// and a data service "benchdb" read by app "bench" (role "reader", five
// limits), and returns its handler, the app's key, how long proxy.New
// took and the live heap after it.
func configSizedInstance(b *testing.B, size configSize) (http.Handler, string, time.Duration, uint64, *bun.DB) {
	b.Helper()
	_ = store.SetPasswordCost(bcrypt.MinCost)
	ctx := b.Context()
	st, err := store.OpenConfig(ctx, dbtest.Fresh(b, dialects.SQLite))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	cfg := proxy.Config{DataDir: b.TempDir(), Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := proxy.Init(ctx, cfg, store.InitOptions{Email: "admin@example.com", Password: "a-long-admin-password", Name: "A"}); err != nil {
		b.Fatal(err)
	}
	data := dbtest.Fresh(b, dialects.SQLite)
	ddb := dbtest.Open(b, data)
	if _, err := ddb.ExecContext(ctx, "CREATE TABLE item (id INTEGER PRIMARY KEY, name VARCHAR(64), price DECIMAL(10,2))"); err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		if _, err := ddb.ExecContext(ctx, "INSERT INTO item (id, name, price) VALUES (?, ?, ?)", i, fmt.Sprintf("item %d", i), float64(i)/4); err != nil {
			b.Fatal(err)
		}
	}
	dataConfig := fmt.Sprintf(`{"database":%q}`, data.Database)
	db := st.DB
	svc := &store.Service{Name: "benchdb", Label: "benchdb", Type: "sqlite", IsActive: true, Mutable: true, Deletable: true, Config: dataConfig}
	mustInsert(b, ctx, db, svc)
	role := &store.Role{Name: "reader", IsActive: true}
	mustInsert(b, ctx, db, role)
	mustInsert(b, ctx, db, &store.RoleServiceAccess{RoleID: role.ID, ServiceID: &svc.ID, Component: "_table/item/*", VerbMask: 1, RequestorMask: 1})
	key := "bench-key-" + filepath.Base(b.TempDir())
	mustInsert(b, ctx, db, &store.App{Name: "bench", Label: "bench", IsActive: true, APIKey: key, RoleID: &role.ID})
	for i, typ := range []string{"instance", "instance.service", "instance.role", "instance.service.endpoint", "instance.service"} {
		period := []string{"minute", "minute", "minute", "minute", "hour"}[i]
		l := &store.Limit{Name: fmt.Sprintf("applies %d", i), Type: typ, Rate: 1 << 30, Period: period, IsActive: true}
		if typ != "instance" && typ != "instance.role" {
			l.ServiceID = &svc.ID
		}
		if typ == "instance.role" {
			l.RoleID = &role.ID
		}
		if typ == "instance.service.endpoint" {
			l.Endpoint = "_table/item/*"
		}
		l.KeyText = l.Engine().KeyText()
		mustInsert(b, ctx, db, l)
	}
	seedLarge(b, ctx, db, size, dataConfig)
	if err := store.Touch(ctx, db); err != nil {
		b.Fatal(err)
	}

	runtime.GC()
	start := time.Now()
	srv, err := proxy.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	startup := time.Since(start)
	b.Cleanup(func() { srv.Close() })
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return srv, key, startup, ms.HeapAlloc, db
}

// reloadTime measures how long a configuration change takes to reach the
// instance: it deactivates the role the bench app's requests run as (so
// they become 403), records the time from the change until status
// reports something else than 200, and reactivates the role.
func reloadTime(b *testing.B, db *bun.DB, status func() int) time.Duration {
	b.Helper()
	ctx := context.Background()
	set := func(active bool) {
		if _, err := db.NewUpdate().Model((*store.Role)(nil)).Set("is_active = ?", active).Where("name = ?", "reader").Exec(ctx); err != nil {
			b.Fatal(err)
		}
		if err := store.Touch(ctx, db); err != nil {
			b.Fatal(err)
		}
	}
	wait := func(want func(int) bool) time.Duration {
		start := time.Now()
		for !want(status()) {
			if time.Since(start) > time.Minute {
				b.Fatal("the configuration change did not arrive within a minute")
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}
	set(false)
	d := wait(func(code int) bool { return code != http.StatusOK })
	set(true)
	wait(func(code int) bool { return code == http.StatusOK })
	return d
}

// seedLarge adds size's services, roles with access entries, limits and
// users, none of which the measured request uses.
func seedLarge(b *testing.B, ctx context.Context, db *bun.DB, size configSize, dataConfig string) {
	b.Helper()
	var svcs []*store.Service
	for i := range size.services {
		svcs = append(svcs, &store.Service{Name: fmt.Sprintf("svc%04d", i), Label: "s", Type: "sqlite", IsActive: true, Config: dataConfig})
	}
	insertChunks(b, ctx, db, svcs, 200)
	var roles []*store.Role
	for i := range size.roles {
		roles = append(roles, &store.Role{Name: fmt.Sprintf("role%04d", i), IsActive: true})
	}
	insertChunks(b, ctx, db, roles, 500)
	var acc []*store.RoleServiceAccess
	for i, r := range roles {
		for j := range size.accessPerRole {
			s := svcs[(i*size.accessPerRole+j)%len(svcs)]
			acc = append(acc, &store.RoleServiceAccess{RoleID: r.ID, ServiceID: &s.ID, Component: fmt.Sprintf("_table/t%d/*", j), VerbMask: 31, RequestorMask: 1})
		}
	}
	insertChunks(b, ctx, db, acc, 500)
	var limits []*store.Limit
	for i := range size.limits {
		s := svcs[i%len(svcs)]
		l := &store.Limit{Name: fmt.Sprintf("other %d", i), Type: "instance.service", Rate: 100, Period: "hour", ServiceID: &s.ID, IsActive: true}
		l.KeyText = l.Engine().KeyText()
		limits = append(limits, l)
	}
	insertChunks(b, ctx, db, limits, 200)
	var users []*store.User
	for i := range size.users {
		users = append(users, &store.User{Name: "u", Email: fmt.Sprintf("user%06d@example.com", i), IsActive: true})
	}
	insertChunks(b, ctx, db, users, 1000)
}

func mustInsert(b *testing.B, ctx context.Context, db *bun.DB, model any) {
	b.Helper()
	if _, err := db.NewInsert().Model(model).Exec(ctx); err != nil {
		b.Fatalf("insert %T: %v", model, err)
	}
}

// insertChunks inserts rows n at a time (SQLite's bound-variable limit).
func insertChunks[T any](b *testing.B, ctx context.Context, db *bun.DB, rows []*T, n int) {
	b.Helper()
	for start := 0; start < len(rows); start += n {
		chunk := rows[start:min(start+n, len(rows))]
		if _, err := db.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			b.Fatalf("insert %T: %v", rows[0], err)
		}
	}
}
