package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// BenchmarkInProcessReads sends the pipeline, byid (a fixed id), page25,
// page1000 and filtered scenarios' first request straight to the Portcullis handler and to the
// baseline's (no sockets), on SQLite and on PostgreSQL and MySQL when
// their DSN variables are set, so that -benchmem and callgrind compare
// what each server spends on the same read:
//
//	go test -run X -bench InProcessReads -benchmem ./bench/
//
// The two answers are checked to be the same bytes first.
func BenchmarkInProcessReads(b *testing.B) {
	ctx := b.Context()
	inst, base, dbs := inProcessServers(b)
	filter := url.Values{"filter": {"(category = '" + categories[0] + "') and (price > " + strconv.Itoa(filteredMinPrice) + ")"},
		"order": {"price desc, id asc"}, "limit": {"25"}}
	baseFilter := url.Values{"category": {categories[0]}, "min_price": {strconv.Itoa(filteredMinPrice)}, "limit": {"25"}}
	if err := inst.learnTrivial(ctx, dbs[0].kind, base); err != nil {
		b.Fatal(err)
	}
	for _, d := range dbs {
		k := d.kind
		for _, c := range []struct{ name, p, b string }{
			{"pipeline", "", "trivial"},
			{"byid", "/_table/item/1234", "/item/1234"},
			{"page25", "/_table/item?limit=25&offset=500", "/item?limit=25&offset=500"},
			{"page1000", "/_table/item?limit=1000&offset=500", "/item?limit=1000&offset=500"},
			{"filtered", "/_table/item?" + filter.Encode(), "/filtered?" + baseFilter.Encode()},
		} {
			h := inst.headers()
			pURL := "/api/v2/" + inst.services[k] + c.p
			bURL := "/" + string(k) + c.b
			if c.b == "trivial" {
				if k != dbs[0].kind {
					continue // the trivial answer is the first engine's
				}
				bURL = "/trivial"
			}
			call := func(b *testing.B, srv http.Handler, u string, h http.Header) []byte {
				// A context that can be cancelled, as net/http's server
				// gives every request: database/sql and the driver watch
				// it (one goroutine each per query), as under load.
				rctx, cancel := context.WithCancel(ctx)
				defer cancel()
				r := httptest.NewRequestWithContext(rctx, http.MethodGet, u, nil)
				if h != nil {
					r.Header = h.Clone()
				}
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", u, w.Code, w.Body)
				}
				return w.Body.Bytes()
			}
			if pb, bb := call(b, inst.srv, pURL, h), call(b, base, bURL, nil); string(pb) != string(bb) {
				b.Fatalf("%s %s: answers differ:\n  portcullis %s\n  baseline   %s", k, c.name, clip(pb, 0), clip(bb, 0))
			}
			for _, side := range []string{"portcullis", "baseline"} {
				b.Run(strings.Join([]string{string(k), c.name, side}, "/"), func(b *testing.B) {
					srv, u, hh := http.Handler(inst.srv), pURL, h
					if side == "baseline" {
						srv, u, hh = base, bURL, nil
					}
					call(b, srv, u, hh)
					b.ReportAllocs()
					for b.Loop() {
						call(b, srv, u, hh)
					}
				})
			}
		}
	}
}

// inProcessServers starts, for the in-process benchmarks, a Portcullis
// instance and the baseline on one database per engine (SQLite, and
// PostgreSQL and MySQL when their DSN variables are set), each seeded with
// 2,000 rows. Everything is closed and dropped when b ends.
func inProcessServers(b *testing.B) (inst *instance, base *baseline, dbs []*database) {
	ctx := b.Context()
	dir := b.TempDir()
	instanceReloadInterval = time.Hour // no polling counted (see the variable)
	b.Cleanup(func() { instanceReloadInterval = 0 })
	bases := map[string]*baseDB{}
	b.Cleanup(func() {
		for _, bd := range bases {
			bd.db.Close()
		}
		for _, d := range dbs {
			if d.drop != nil {
				d.drop()
			}
		}
	})
	for _, k := range allKinds {
		if k != dialects.SQLite && adminDSN(k) == "" {
			continue
		}
		d, err := createDatabase(ctx, k, dir)
		if err != nil {
			b.Fatal(err)
		}
		dbs = append(dbs, d)
		if err := seed(ctx, d, 2000); err != nil {
			b.Fatal(err)
		}
		db, err := openBaselineDB(ctx, d)
		if err != nil {
			b.Fatal(err)
		}
		bd := newBaseDB(k, db)
		if err := bd.prepare(ctx); err != nil {
			b.Fatal(err)
		}
		bases[string(k)] = bd
	}
	inst, err := startInstance(ctx, dir, dbs, "http://127.0.0.1:1", false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(inst.close)
	return inst, newBaseline(bases, ""), dbs
}
