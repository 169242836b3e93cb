package rws_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/rws"
)

// TestEncodingPassesThrough pins that the proxy neither asks the upstream
// for gzip on a client's behalf nor unzips what the upstream sends: the
// client's Accept-Encoding, or its absence, reaches the upstream as sent,
// and an encoded answer comes back with its encoding and length.
func TestEncodingPassesThrough(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = io.WriteString(zw, `{"ok":true}`)
	_ = zw.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Accept-Encoding", strings.Join(r.Header["Accept-Encoding"], ","))
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(zipped.Len()))
		_, _ = w.Write(zipped.Bytes())
	}))
	t.Cleanup(up.Close)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	front := httptest.NewServer(inPipeline(p, nil))
	t.Cleanup(front.Close)
	// A client that sends exactly the headers it is given.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)

	for _, ae := range []string{"", "gzip", "br;q=1.0, gzip;q=0.5"} {
		t.Run("accept-encoding="+ae, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "GET", front.URL+"/api/v2/svc/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			if ae != "" {
				req.Header.Set("Accept-Encoding", ae)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("X-Seen-Accept-Encoding"); got != ae {
				t.Errorf("upstream saw Accept-Encoding %q, want %q", got, ae)
			}
			if resp.Header.Get("Content-Encoding") != "gzip" || resp.ContentLength != int64(zipped.Len()) {
				t.Errorf("Content-Encoding %q, length %d: want the upstream's gzip and %d",
					resp.Header.Get("Content-Encoding"), resp.ContentLength, zipped.Len())
			}
			if !bytes.Equal(body, zipped.Bytes()) {
				t.Errorf("body is not the upstream's gzip bytes: %q", body)
			}
		})
	}
}

// TestConnectionsAreReused pins that concurrent callers share a pool of
// kept-alive upstream connections, so no connection is closed and dialled
// again between requests: under a load of 16 concurrent clients the
// upstream sees at most twice as many connections as there are clients.
// (The transport dials when a request finds no idle connection, and a
// connection whose answer was just read goes back to the pool a moment
// later, so a client's next request may dial once while its last
// connection is on its way back; the pool then holds both.)
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	front := httptest.NewServer(inPipeline(p, nil))
	t.Cleanup(front.Close)

	const clients, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			for range each {
				resp, err := c.Get(front.URL + "/api/v2/svc/orders/1")
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- &statusError{resp.StatusCode}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := conns.Load(); n > 2*clients {
		t.Errorf("%d upstream connections for %d requests from %d concurrent clients, want at most %d",
			n, clients*each, clients, 2*clients)
	}
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "status " + strconv.Itoa(e.code) }

// TestHeaderTimeout pins the two timeouts: a HeaderTimeout shorter than
// Timeout answers a silent upstream with 504 when it runs out, and a
// longer one leaves Timeout to decide.
func TestHeaderTimeout(t *testing.T) {
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stop); slow.Close() })

	tests := []struct {
		name                   string
		timeout, headerTimeout time.Duration
		message                string
	}{
		{"header timeout first", 10 * time.Second, 100 * time.Millisecond, "did not answer in time"},
		{"header timeout without an overall bound", -1, 100 * time.Millisecond, "did not answer in time"},
		{"overall timeout first", 100 * time.Millisecond, 10 * time.Second, "did not answer within 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, rws.Config{Name: "svc", BaseURL: slow.URL, Timeout: tc.timeout, HeaderTimeout: tc.headerTimeout})
			start := time.Now()
			r := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/x", nil, nil)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("answered after %s", took)
			}
			if r.status != http.StatusGatewayTimeout {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if _, msg := r.envelope(t); !strings.Contains(msg, tc.message) {
				t.Fatalf("message %q, want %q", msg, tc.message)
			}
		})
	}
}
