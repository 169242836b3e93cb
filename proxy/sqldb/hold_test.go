package sqldb_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// blockedWriter is a client that never reads: every Write blocks until
// release is closed.
type blockedWriter struct {
	h       http.Header
	writing chan struct{}
	release chan struct{}
}

func (w *blockedWriter) Header() http.Header { return w.h }
func (w *blockedWriter) WriteHeader(int)     {}
func (w *blockedWriter) Write(p []byte) (int, error) {
	select {
	case w.writing <- struct{}{}:
	default:
	}
	<-w.release
	return len(p), nil
}

// TestPageReadBeforeFirstWrite: a page that fits the hold buffer is read
// whole, and its database connection released, before the first write to
// the client. With a pool of one connection, a second read succeeds while
// the first response is stuck writing.
func TestPageReadBeforeFirstWrite(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, map[string]any{"max_connections": 1})
		var sb strings.Builder
		sb.WriteString("INSERT INTO orders (customer_id, total, placed) VALUES ")
		for i := range 1000 { // about 80 KB of JSON: more than one flush, less than the hold buffer
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(1, 1.00, '2024-01-01')")
		}
		if _, err := e.db.ExecContext(t.Context(), sb.String()); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/api/v2/data/_table/orders?limit=1000", nil)
		req.Header.Set("X-Platform-API-Key", e.c.APIKey)
		req.Header.Set("X-Platform-Session-Token", e.c.Session)
		bw := &blockedWriter{h: http.Header{}, writing: make(chan struct{}, 1), release: make(chan struct{})}
		served := make(chan struct{})
		go func() {
			defer close(served)
			e.in.Proxy.ServeHTTP(bw, req)
		}()
		defer func() { close(bw.release); <-served }()
		select {
		case <-bw.writing:
		case <-served:
			t.Fatal("the page was answered without writing")
		case <-time.After(10 * time.Second):
			t.Fatal("the page never started writing")
		}
		done := make(chan int, 1)
		go func() {
			status, _ := e.do(t, "GET", "_table/orders?limit=1&fields=id", nil)
			done <- status
		}()
		select {
		case s := <-done:
			if s != http.StatusOK {
				t.Fatalf("second read = %d", s)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a response stuck writing still holds the only database connection")
		}
	})
}
