package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkInProcessPost sends the post scenario's requests straight to
// the Portcullis handler and to the baseline's (no sockets), on SQLite and
// on PostgreSQL and MySQL when their DSN variables are set, so that
// -benchmem, callgrind and strace -c compare what each server spends on
// the same insert:
//
//	go test -run X -bench InProcessPost -benchmem ./bench/
//
// PORTCULLIS_BENCH_SIDE=portcullis or baseline runs only that side (for
// strace, whose counts cover the whole process); PORTCULLIS_BENCH_PARALLEL=N
// sends from N goroutines per CPU at once, as the load's connections do.
func BenchmarkInProcessPost(b *testing.B) {
	ctx := b.Context()
	inst, base, dbs := inProcessServers(b)
	body, _ := json.Marshal(map[string]any{"resource": []any{map[string]any{"name": "posted 7", "category": postedCategory,
		"price": json.Number("12.07"), "qty": 7, "active": false,
		"created": "2024-06-01 12:00:00", "notes": "posted by the bench"}}})
	only := os.Getenv("PORTCULLIS_BENCH_SIDE")
	par, _ := strconv.Atoi(os.Getenv("PORTCULLIS_BENCH_PARALLEL"))
	for _, d := range dbs {
		k := d.kind
		ph := inst.headers()
		ph.Set("Content-Type", "application/json")
		bh := http.Header{"Content-Type": {"application/json"}}
		pURL := "/api/v2/" + inst.services[k] + "/_table/item"
		bURL := "/" + string(k) + "/item"
		call := func(b *testing.B, srv http.Handler, u string, h http.Header) []byte {
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			r := httptest.NewRequestWithContext(rctx, http.MethodPost, u, strings.NewReader(string(body)))
			r.Header = h.Clone()
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", u, w.Code, w.Body)
			}
			return w.Body.Bytes()
		}
		pb, bb := call(b, inst.srv, pURL, ph), call(b, base, bURL, bh)
		if !strings.HasPrefix(string(pb), `{"resource":[{"id":`) || len(pb) != len(bb) {
			b.Fatalf("%s: answers differ:\n  portcullis %s\n  baseline   %s", k, pb, bb)
		}
		for _, side := range []string{"portcullis", "baseline"} {
			if only != "" && only != side {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", k, side), func(b *testing.B) {
				srv, u, hh := http.Handler(inst.srv), pURL, ph
				if side == "baseline" {
					srv, u, hh = base, bURL, bh
				}
				b.ReportAllocs()
				if par > 0 {
					b.SetParallelism(par)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							call(b, srv, u, hh)
						}
					})
					return
				}
				for b.Loop() {
					call(b, srv, u, hh)
				}
			})
		}
	}
}
