package main

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
)

// BenchmarkOverHTTP sends the rws scenario's request to Portcullis and the
// same request to the upstream directly, one at a time over a kept-alive
// loopback connection from a client in the same process (the loader's
// settings: no compression). Both sides pay the same client, so under
// callgrind the difference in instructions per request is what Portcullis
// adds on the server side, sockets, both HTTP exchanges and the garbage
// collector included:
//
//	go test -c -o b.test ./bench/
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind ./b.test -test.run X \
//	    -test.bench OverHTTP/rws/portcullis -test.benchtime 2000x
func BenchmarkOverHTTP(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	d, err := createDatabase(ctx, dialects.SQLite, dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := seed(ctx, d, 100); err != nil {
		b.Fatal(err)
	}
	upURL, stopUp, err := serve(upstreamHandler())
	if err != nil {
		b.Fatal(err)
	}
	defer stopUp()
	inst, err := startInstance(ctx, dir, []*database{d}, upURL, false)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.close()
	const path = "/orders/101?expand=lines"
	for _, c := range []struct {
		name, url string
		header    http.Header
	}{
		{"rws/portcullis", inst.url + "/api/v2/" + rwsService + path, inst.headers()},
		{"rws/upstream", upURL + path, nil},
	} {
		b.Run(c.name, func(b *testing.B) { benchGets(b, ctx, c.url, c.header) })
	}
}

// benchGets measures GET url with header over a keep-alive client of its
// own (no compression), failing on any answer but 200.
func benchGets(b *testing.B, ctx context.Context, url string, header http.Header) {
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	call := func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header = header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", url, resp.StatusCode)
		}
	}
	call()
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}
