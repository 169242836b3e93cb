package proxy_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// serviceDSN is the contract DSN of a test database.
func serviceDSN(cfg dialects.Config) string {
	switch cfg.Kind {
	case dialects.SQLite:
		return "sqlite://" + cfg.DSN
	case dialects.MySQL:
		return "mysql://" + cfg.DSN
	}
	return cfg.DSN
}

// bigTable creates service "big" on cfg (pool of conns connections) with
// a table of rows rows of about 10 KB each.
func bigTable(t *testing.T, in *proxytest.Instance, cfg dialects.Config, conns, rows int) *proxytest.Client {
	t.Helper()
	admin := in.Admin(t)
	r := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "big", "label": "Big", "type": string(cfg.Kind), "is_active": true,
		"config": map[string]any{"dsn": serviceDSN(cfg), "max_connections": conns, "max_records": rows},
	}}})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("create service: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, "POST", "/api/v2/big/_schema", map[string]any{"resource": []any{map[string]any{
		"name": "blob", "field": []any{
			map[string]any{"name": "id", "type": "id"},
			map[string]any{"name": "body", "type": "text"},
		}}}})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("create table: %d %s", r.Status, r.Body)
	}
	text := strings.Repeat("0123456789", 1000)
	for done := 0; done < rows; done += 500 {
		recs := make([]any, 0, 500)
		for range min(500, rows-done) {
			recs = append(recs, map[string]any{"body": text})
		}
		if r := admin.Do(t, "POST", "/api/v2/big/_table/blob", map[string]any{"resource": recs}); r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("insert: %d %.300s", r.Status, r.Body)
		}
	}
	return admin
}

// stalledReader sends GET path with the admin's credentials, reads the
// status line and then never reads again.
func stalledReader(t *testing.T, in *proxytest.Instance, c *proxytest.Client, path string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", in.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nX-Platform-API-Key: %s\r\nX-Platform-Session-Token: %s\r\n\r\n", path, c.APIKey, c.Session)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("stalled reader got %q, %v", line, err)
	}
	return conn
}

// TestClientThatDoesNotReadCannotHoldConnections reproduces issue 16's
// first failure: clients that ask for a large table and never read used
// to keep every pooled connection of the service, blocking all requests to
// it. Now the response is cut after the write timeout and the connection
// returns to the pool.
func TestClientThatDoesNotReadCannotHoldConnections(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		sys := dbtest.Fresh(t, dialects.SQLite)
		in := proxytest.Start(t, sys, func(c *proxy.Config) { c.WriteTimeout = 500 * time.Millisecond })
		const conns = 2
		admin := bigTable(t, in, cfg, conns, 3000) // a 30 MB page: more than socket buffers hold
		for range conns + 2 {
			stalledReader(t, in, admin, "/api/v2/big/_table/blob?limit=3000")
		}
		start := time.Now()
		r := admin.Do(t, "GET", "/api/v2/big/_table/blob?limit=1&fields=id", nil)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"id":1`) {
			t.Fatalf("read while clients stall = %d %.200s", r.Status, r.Body)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Fatalf("read while clients stall took %v", d)
		}
	})
}

// TestPerServiceCap: when a service runs as many requests as its cap, the
// next one gets 503 with Retry-After while other services still answer.
func TestPerServiceCap(t *testing.T) {
	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.WriteTimeout = 3 * time.Second
		c.MaxInFlightPerService = 1
	})
	admin := bigTable(t, in, dbtest.Fresh(t, dialects.SQLite), 2, 3000)
	stalledReader(t, in, admin, "/api/v2/big/_table/blob?limit=3000")
	r := admin.Do(t, "GET", "/api/v2/big/_table/blob?limit=1&fields=id", nil)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "busy") {
		t.Fatalf("second request to a service at its cap = %d %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if r := admin.Do(t, "GET", "/api/v2/system/service?fields=name", nil); r.Status != http.StatusOK {
		t.Fatalf("another service while big is at its cap = %d %s", r.Status, r.Body)
	}
	// Once the stalled response is cut, the slot is free again.
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := admin.Do(t, "GET", "/api/v2/big/_table/blob?limit=1&fields=id", nil)
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot never freed: %d %s", r.Status, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
