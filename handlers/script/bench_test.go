package script_test

import (
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	scriptstage "github.com/portcullis-dev/portcullis/handlers/script"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// benchStage measures one GET by id through the stage, with scripts
// attached to its pre_process event (none: the cost of a request with no
// script), over a backend that writes a small JSON answer.
func benchStage(b *testing.B, scripts []script.Script) {
	e := script.New(scripts, script.Options{})
	stage, err := scriptstage.New(scriptstage.Options{Engine: func() *script.Engine { return e }})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"id":5,"name":"item 5","price":12.5}`)
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	svc := &store.Service{ID: 1, Name: "db", Type: "sqlite", IsActive: true}
	id := &caller.Identity{AppID: 1, RoleID: 2, UserID: 3, Requestor: caller.API}
	req := httptest.NewRequest(http.MethodGet, "/api/v2/db/_table/item/5?fields=id,name", nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "bench")
	ctx := caller.WithIdentity(service.WithTarget(req.Context(), &service.Target{Service: svc, Resource: "_table/item/5", Verb: http.MethodGet}), id)
	req = req.WithContext(ctx)
	b.ReportAllocs()
	start := cpuTime()
	defer func() { b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op") }()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

func BenchmarkStageNoScript(b *testing.B) {
	benchStage(b, []script.Script{{Name: "other.get.pre_process", Type: "lua", Content: "return"}})
}

func BenchmarkStageEmptyLua(b *testing.B) {
	benchStage(b, []script.Script{{Name: "db._table.item.{id}.get.pre_process", Type: "lua", Content: "return"}})
}

func BenchmarkStageEmptyJavaScript(b *testing.B) {
	benchStage(b, []script.Script{{Name: "db._table.item.{id}.get.pre_process", Type: "javascript", Content: "return"}})
}

// cpuTime is the process's CPU time (user+system, all threads): on a
// shared machine the wall time of ns/op also counts waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
