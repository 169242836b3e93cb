package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// echoType is a service type whose backend answers with its service's label.
type echoType struct{}

func (echoType) Info() service.Info                   { return service.Info{Name: "echo", Label: "Echo", Group: "Test"} }
func (echoType) ValidateConfig(json.RawMessage) error { return nil }
func (echoType) New(_ context.Context, svc *store.Service, _ service.Deps) (service.Backend, error) {
	return &echoBackend{label: svc.Label}, nil
}

type echoBackend struct {
	label  string
	closed atomic.Bool
}

func (b *echoBackend) Close() error { b.closed.Store(true); return nil }
func (b *echoBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := service.TargetFrom(r.Context())
	json.NewEncoder(w).Encode(map[string]string{"label": b.label, "resource": t.Resource})
}

func TestChangesReachASecondInstanceWithinOneSecond(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		a := proxytest.Start(t, sys, nil, proxy.WithTypes(echoType{}))
		// A second instance on the same system database, polling at the
		// default interval.
		b, err := proxy.New(t.Context(), proxy.Config{DataDir: t.TempDir(), Store: a.Store, Logger: proxytest.Logger(t)}, proxy.WithTypes(echoType{}))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()

		svc := &store.Service{Name: "echo", Label: "first", Type: "echo", IsActive: true, Config: "{}"}
		ctx := t.Context()
		if _, err := a.Store.DB.NewInsert().Model(svc).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Store.Touch(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		waitFor(t, func() bool { _, ok := b.Backend("echo"); return ok })
		if took := time.Since(start); took > time.Second {
			t.Fatalf("second instance saw the new service after %v", took)
		}

		old, _ := b.Backend("echo")
		svc.Label = "second"
		if _, err := a.Store.DB.NewUpdate().Model(svc).Column("label").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		a.Store.Touch(ctx)
		waitFor(t, func() bool { nb, _ := b.Backend("echo"); return nb != old })
		waitFor(t, func() bool { return old.(*echoBackend).closed.Load() })

		r := a.Admin(t).Do(t, "GET", "/api/v2/echo/x/y/", nil)
		if r.Status != 200 {
			t.Fatalf("echo = %d %s", r.Status, r.Body)
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
