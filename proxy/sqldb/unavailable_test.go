package sqldb_test

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// forwarder relays TCP connections from a local port to target; it can be
// stopped (dropping every open connection) and started again on the same
// port, to play a database going down and coming back.
type forwarder struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newForwarder(t *testing.T, target string) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := &forwarder{addr: addr, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(f.stop)
	return f
}

func (f *forwarder) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		t.Fatalf("forwarder: listen again on %s: %v", f.addr, err)
	}
	f.mu.Lock()
	f.ln = ln
	f.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", f.target)
			if err != nil {
				c.Close()
				continue
			}
			f.mu.Lock()
			f.conns[c], f.conns[up] = true, true
			f.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

func (f *forwarder) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ln != nil {
		f.ln.Close()
		f.ln = nil
	}
	for c := range f.conns {
		c.Close()
	}
	f.conns = map[net.Conn]bool{}
}

func envelopeStatus(t *testing.T, body []byte) int {
	t.Helper()
	var env struct {
		Error struct {
			Code       int    `json:"code"`
			StatusCode int    `json:"status_code"`
			Message    string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("not an error envelope: %s", body)
	}
	return env.Error.Code
}

// TestDeadDatabaseIs503AndRecovers points services at databases that are
// down, then brings them back without touching the service.
func TestDeadDatabaseIs503AndRecovers(t *testing.T) {
	in := proxytest.StartSQLite(t)
	c := in.Admin(t)

	t.Run("sqlite", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "not-yet")
		addService(t, in, "lite", "sqlite", `{"database":"`+filepath.Join(dir, "x.db")+`"}`)
		r := c.Do(t, "GET", "/api/v2/lite/_table", nil)
		if r.Status != 503 || envelopeStatus(t, r.Body) != 503 {
			t.Fatalf("missing directory: %d %s", r.Status, r.Body)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := c.Do(t, "GET", "/api/v2/lite/_table", nil); r.Status != 200 {
			t.Fatalf("after recovery: %d %s", r.Status, r.Body)
		}
	})

	t.Run("pgsql dead port", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		addService(t, in, "deadpg", "pgsql", `{"dsn":"postgres://u:p@`+addr+`/x?sslmode=disable"}`)
		r := c.Do(t, "GET", "/api/v2/deadpg/_table/t", nil)
		if r.Status != 503 || envelopeStatus(t, r.Body) != 503 || strings.Contains(string(r.Body), "u:p") {
			t.Fatalf("dead port: %d %s", r.Status, r.Body)
		}
	})

	for _, kind := range []dialects.Kind{dialects.Postgres, dialects.MySQL} {
		t.Run(string(kind)+" down and back", func(t *testing.T) {
			cfg := dbtest.Fresh(t, kind)
			db := dbtest.Open(t, cfg)
			if _, err := db.ExecContext(t.Context(), "CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR(10))"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(t.Context(), "INSERT INTO t VALUES (1, 'x')"); err != nil {
				t.Fatal(err)
			}
			target := net.JoinHostPort(cfg.Host, "5432")
			if cfg.Port != 0 {
				target = net.JoinHostPort(cfg.Host, itoa(cfg.Port))
			} else if kind == dialects.MySQL {
				target = net.JoinHostPort(cfg.Host, "3306")
			}
			f := newForwarder(t, target)
			via := cfg
			via.DSN = strings.Replace(cfg.DSN, target, f.addr, 1)
			if via.DSN == cfg.DSN {
				t.Skipf("cannot reroute %s through the forwarder", dialects.Redact(cfg.DSN))
			}
			name := "back" + string(kind)
			addService(t, in, name, string(kind), serviceConfig(via, nil))
			path := "/api/v2/" + name + "/_table/t/1"

			if r := c.Do(t, "GET", path, nil); r.Status != 503 || envelopeStatus(t, r.Body) != 503 {
				t.Fatalf("never up: %d %s", r.Status, r.Body)
			}
			f.start(t)
			if r := c.Do(t, "GET", path, nil); r.Status != 200 || string(r.Body) != "{\"id\":1,\"v\":\"x\"}\n" {
				t.Fatalf("up: %d %s", r.Status, r.Body)
			}
			f.stop()
			r := c.Do(t, "GET", path, nil)
			if r.Status != 503 || envelopeStatus(t, r.Body) != 503 {
				t.Fatalf("down again: %d %s", r.Status, r.Body)
			}
			f.start(t)
			// The pool may hold connections the stop broke; the service
			// must be back within a few requests, without a reload.
			ok := false
			for range 2 {
				if r := c.Do(t, "GET", path, nil); r.Status == 200 {
					ok = true
					break
				}
			}
			if !ok {
				t.Fatalf("did not recover")
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
