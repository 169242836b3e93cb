package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func open(t *testing.T, cfg dialects.Config) *store.Store {
	t.Helper()
	s, err := store.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestInitIsIdempotentOnEveryEngine(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		ctx := t.Context()
		s := open(t, cfg)
		opts := store.InitOptions{Email: "admin@example.com", Password: "s3cret-pass", Name: "Ada Admin"}
		first, err := s.Init(ctx, opts)
		if err != nil {
			t.Fatalf("init: %v", err)
		}
		if !first.AdminCreated || len(first.AdminAPIKey) != 64 {
			t.Fatalf("first init = %+v", first)
		}
		v1, _ := s.Version(ctx)
		second, err := s.Init(ctx, opts)
		if err != nil {
			t.Fatalf("second init: %v", err)
		}
		v2, _ := s.Version(ctx)
		if second.AdminCreated || second.AdminAPIKey != first.AdminAPIKey || v1 != v2 {
			t.Fatalf("second init changed something: %+v (version %d -> %d)", second, v1, v2)
		}

		snap, err := s.Load(ctx)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		var names []string
		for _, svc := range snap.Services {
			names = append(names, svc.Name+"/"+svc.Type)
		}
		want := []string{"system/system", "api_docs/swagger", "files/local_file", "logs/local_file", "db/sqlite", "email/local_email", "user/user"}
		if d := cmp.Diff(want, names); d != "" {
			t.Errorf("built-in services (-want +got):\n%s", d)
		}
		var apps []string
		for _, a := range snap.Apps {
			apps = append(apps, a.Name)
			if len(a.APIKey) != 64 {
				t.Errorf("app %s key %q", a.Name, a.APIKey)
			}
		}
		if d := cmp.Diff([]string{"admin", "api_docs", "file_manager"}, apps); d != "" {
			t.Errorf("built-in apps (-want +got):\n%s", d)
		}
		if app := snap.AppByKey(first.AdminAPIKey); app == nil || app.Name != "admin" {
			t.Errorf("AppByKey(admin key) = %+v", app)
		}
		for name, deletable := range map[string]bool{"system": false, "user": false, "api_docs": false, "db": true} {
			svc := snap.Service(name)
			if svc == nil || svc.Deletable != deletable || svc.Mutable != deletable || !svc.IsActive {
				t.Errorf("built-in service %s = %+v, want deletable and mutable %v, active", name, svc, deletable)
			}
		}
		if snap.Service("System") != nil {
			t.Error("service names must match case-sensitively")
		}
	})
}

func TestInitRejectsBadInput(t *testing.T) {
	s := open(t, dbtest.Fresh(t, dialects.SQLite))
	tests := []struct {
		name string
		opts store.InitOptions
	}{
		{"short password", store.InitOptions{Email: "a@b.co", Password: "short"}},
		{"bad email", store.InitOptions{Email: "not-an-email", Password: "long-enough"}},
		{"bad key", store.InitOptions{Email: "a@b.co", Password: "long-enough", AdminAPIKey: "xyz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Init(t.Context(), tt.opts); err == nil {
				t.Fatal("init accepted bad input")
			}
		})
	}
}

func TestAdminAPIKeyIsSetWhenGiven(t *testing.T) {
	s := open(t, dbtest.Fresh(t, dialects.SQLite))
	key := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	res, err := s.Init(t.Context(), store.InitOptions{Email: "a@b.co", Password: "long-enough", AdminAPIKey: key})
	if err != nil || res.AdminAPIKey != key {
		t.Fatalf("init = %+v, %v", res, err)
	}
}

func TestConcurrentMigrateAndTouch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		// Several instances starting at once share the migration lock.
		var wg sync.WaitGroup
		stores := make([]*store.Store, 3)
		errs := make([]error, 3)
		for i := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stores[i], errs[i] = store.OpenConfig(context.Background(), cfg)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("instance %d: %v", i, err)
			}
			defer stores[i].Close()
		}
		before, _ := stores[0].Version(t.Context())
		if err := stores[1].Touch(t.Context()); err != nil {
			t.Fatal(err)
		}
		after, _ := stores[2].Version(t.Context())
		if after != before+1 {
			t.Fatalf("version %d -> %d, want +1", before, after)
		}
	})
}

func TestPasswordHashing(t *testing.T) {
	h, err := store.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !store.CheckPassword(h, "correct horse") || store.CheckPassword(h, "wrong horse") || store.CheckPassword("", "") {
		t.Fatal("CheckPassword gave a wrong answer")
	}
	if _, err := store.HashPassword("1234567"); err == nil {
		t.Fatal("7-character password accepted")
	}
}

// TestLaunchURL: each app type's launch_url, one rule for the system API,
// the session's app list and the single sign-on redirect.
func TestLaunchURL(t *testing.T) {
	files, gone := int64(7), int64(99)
	snap := store.NewSnapshot([]*store.Service{{ID: files, Name: "files"}}, nil, nil)
	for _, c := range []struct {
		name string
		app  store.App
		want string
	}{
		{"none", store.App{Type: store.AppTypeNone, Path: "x"}, ""},
		{"storage", store.App{Type: store.AppTypeStorage, StorageServiceID: &files, StorageContainer: "/applications/", Path: "/todo/index.html"}, "/storage/files/applications/todo/index.html"},
		{"storage without container", store.App{Type: store.AppTypeStorage, StorageServiceID: &files, Path: "index.html"}, "/storage/files/index.html"},
		{"storage without service", store.App{Type: store.AppTypeStorage, Path: "index.html"}, ""},
		{"storage of a deleted service", store.App{Type: store.AppTypeStorage, StorageServiceID: &gone, Path: "index.html"}, ""},
		{"url", store.App{Type: store.AppTypeURL, URL: "https://example.com/app"}, "https://example.com/app"},
		{"path", store.App{Type: store.AppTypePath, Path: "dreamfactory/dist/index.html"}, "/dreamfactory/dist/index.html"},
		{"empty path", store.App{Type: store.AppTypePath}, ""},
		{"git", store.App{Type: store.AppTypeGit, URL: "https://example.com/repo.git"}, ""},
	} {
		if got := snap.LaunchURL(&c.app); got != c.want {
			t.Errorf("%s: LaunchURL = %q, want %q", c.name, got, c.want)
		}
	}
	if got := (*store.Snapshot)(nil).LaunchURL(&store.App{Type: store.AppTypeStorage, StorageServiceID: &files}); got != "" {
		t.Errorf("nil snapshot: LaunchURL = %q, want \"\"", got)
	}
}
