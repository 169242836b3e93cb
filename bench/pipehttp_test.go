package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// BenchmarkPipelineOverHTTP sends the pipeline scenario's request to
// Portcullis and the baseline's to the baseline, one at a time over a
// kept-alive loopback connection from a client in the same process (the
// loader's settings), so that under callgrind the difference in
// instructions per request is what the pipeline costs with net/http's
// own work for it (request and response headers, write deadlines,
// garbage collection) included:
//
//	go test -c -o b.test ./bench/
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
//	    --zero-before='testing.(*B).ResetTimer' --dump-before='testing.(*B).StopTimer' \
//	    ./b.test -test.run X -test.bench PipelineOverHTTP/portcullis -test.benchtime 4000x
//
// (the first dump is the measured loop).
func BenchmarkPipelineOverHTTP(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	instanceReloadInterval = time.Hour // no polling counted (see the variable)
	b.Cleanup(func() { instanceReloadInterval = 0 })
	d, err := createDatabase(ctx, dialects.SQLite, dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := seed(ctx, d, 100); err != nil {
		b.Fatal(err)
	}
	inst, err := startInstance(ctx, dir, []*database{d}, "http://127.0.0.1:1", false)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.close()
	base := newBaseline(nil, "")
	if err := inst.learnTrivial(ctx, dialects.SQLite, base); err != nil {
		b.Fatal(err)
	}
	baseURL, stopBase, err := serve(base)
	if err != nil {
		b.Fatal(err)
	}
	defer stopBase()
	for _, c := range []struct {
		name, url string
		header    http.Header
	}{
		{"portcullis", inst.url + "/api/v2/" + inst.services[dialects.SQLite], inst.headers()},
		{"baseline", baseURL + "/trivial", nil},
	} {
		b.Run(c.name, func(b *testing.B) { benchGets(b, ctx, c.url, c.header) })
	}
}
