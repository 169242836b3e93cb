package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// client speaks to one instance with the admin key and, once signed in, a
// session token.
type client struct {
	t       *testing.T
	base    string
	key     string
	session string
}

func (c *client) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(c.t.Context(), method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Platform-API-Key", c.key)
	if c.session != "" {
		req.Header.Set("X-Platform-Session-Token", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	if m == nil {
		m = map[string]any{"raw": string(data)}
	}
	return resp.StatusCode, m
}

// TestTwoInstancesShareConfiguration runs the program with two instances
// on a fresh PostgreSQL database: a service created through the first is
// served by the second within a second.
func TestTwoInstancesShareConfiguration(t *testing.T) {
	if os.Getenv(dbtest.EnvPostgres) == "" {
		t.Skipf("postgres-system example skipped: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", dbtest.EnvPostgres)
	}
	redisURL := dbtest.RedisURL(t)
	sys := dbtest.Fresh(t, dialects.Postgres)

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"upstream":"ok","path":%q}`, r.URL.Path)
	}))
	defer up.Close()

	ctx, cancel := context.WithCancel(t.Context())
	readyc := make(chan []string, 1)
	done := make(chan error, 1)
	var out syncBuffer
	go func() {
		done <- run(ctx, []string{"-system-db", sys.URL(), "-redis", redisURL, "-redis-prefix", dbtest.Name("pcex"),
			"-addrs", "127.0.0.1:0,127.0.0.1:0", "-data", t.TempDir(), "-password", "shared-pass-1"},
			&out, func(a []string) { readyc <- a })
	}()
	var addrs []string
	select {
	case addrs = <-readyc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v", err)
		}
	}()
	key := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "admin API key:"); ok {
			key = strings.TrimSpace(k)
		}
	}
	if key == "" {
		t.Fatalf("no API key in output:\n%s", out.String())
	}
	a := &client{t: t, base: "http://" + addrs[0], key: key}
	b := &client{t: t, base: "http://" + addrs[1], key: key}

	// Sign in on A; the session is valid on B as well (shared secret and
	// session table).
	status, body := a.do("POST", "/api/v2/system/admin/session", map[string]string{"email": "admin@example.com", "password": "shared-pass-1"})
	if status != 200 {
		t.Fatalf("admin login on A = %d %v", status, body)
	}
	a.session, _ = body["session_token"].(string)
	b.session = a.session

	if status, body := b.do("GET", "/api/v2/weather/today", nil); status != 404 {
		t.Fatalf("B before the change = %d %v", status, body)
	}
	status, body = a.do("POST", "/api/v2/system/service", map[string]any{"resource": []map[string]any{{
		"name": "weather", "label": "Weather", "type": "rws", "is_active": true,
		"config": map[string]any{"base_url": up.URL + "/v1"},
	}}})
	if status != 201 && status != 200 {
		t.Fatalf("create service on A = %d %v", status, body)
	}
	created := time.Now()
	for {
		status, body = b.do("GET", "/api/v2/weather/today", nil)
		if status == 200 {
			break
		}
		if time.Since(created) > 2*time.Second {
			t.Fatalf("B still answers %d %v two seconds after the change", status, body)
		}
		time.Sleep(50 * time.Millisecond) // polling an eventually consistent reload
	}
	if body["path"] != "/v1/today" {
		t.Fatalf("B forwarded %v", body)
	}
	t.Logf("instance B served the new service %s after it was created on A", time.Since(created).Round(time.Millisecond))

	// Rate limits count once for the whole deployment. A client app whose
	// role may call the service, and an instance-wide limit of 3 a minute,
	// both made through A.
	svcID := first(t, a, "GET", "/api/v2/system/service?filter="+url.QueryEscape("name = 'weather'"), nil)["id"]
	role := first(t, a, "POST", "/api/v2/system/role", map[string]any{"resource": []map[string]any{{
		"name": "client", "is_active": true,
		"role_service_access_by_role_id": []map[string]any{{"service_id": svcID, "component": "*", "verb_mask": 31, "requestor_mask": 1}},
	}}})
	app := first(t, a, "POST", "/api/v2/system/app?fields=*", map[string]any{"resource": []map[string]any{{
		"name": "client-app", "is_active": true, "type": 0, "role_id": role["id"],
	}}})
	appKey, _ := app["api_key"].(string)
	if appKey == "" {
		t.Fatalf("no api_key in %v", app)
	}
	first(t, a, "POST", "/api/v2/system/limit", map[string]any{"resource": []map[string]any{{
		"name": "shared", "type": "instance", "rate": 3, "period": "minute", "is_active": true,
	}}})

	ca := &client{t: t, base: a.base, key: appKey}
	cb := &client{t: t, base: b.base, key: appKey}
	// Wait until B knows the app and applies the limit (a request it does
	// not limit is not counted).
	var remaining []string
	changed := time.Now()
	for {
		status, hdr, body := cb.get("/api/v2/weather/today")
		if status != 200 && status != 401 {
			t.Fatalf("client on B = %d %v", status, body)
		}
		if v := hdr.Get("X-RateLimit-Remaining"); status == 200 && v != "" {
			remaining = append(remaining, "B:"+v)
			break
		}
		if time.Since(changed) > 2*time.Second {
			t.Fatalf("B does not apply the new app and limit two seconds after they were created on A: %d %v", status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	status, hdr, _ := ca.get("/api/v2/weather/today")
	remaining = append(remaining, fmt.Sprintf("A:%d:%s", status, hdr.Get("X-RateLimit-Remaining")))
	status, hdr, _ = cb.get("/api/v2/weather/today")
	remaining = append(remaining, fmt.Sprintf("B:%d:%s", status, hdr.Get("X-RateLimit-Remaining")))
	status, hdr, _ = ca.get("/api/v2/weather/today")
	remaining = append(remaining, fmt.Sprintf("A:%d:%t", status, hdr.Get("Retry-After") != ""))
	want := []string{"B:2", "A:200:1", "B:200:0", "A:429:true"}
	if strings.Join(remaining, " ") != strings.Join(want, " ") {
		t.Fatalf("requests across the instances = %v, want %v (one shared counter)", remaining, want)
	}
}

// get calls path and returns the status, headers and decoded body.
func (c *client) get(path string) (int, http.Header, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.t.Context(), "GET", c.base+path, nil)
	req.Header.Set("X-Platform-API-Key", c.key)
	if c.session != "" {
		req.Header.Set("X-Platform-Session-Token", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, resp.Header, m
}

// first calls the system API and returns the first record of the
// response's resource list.
func first(t *testing.T, c *client, method, path string, body any) map[string]any {
	t.Helper()
	status, m := c.do(method, path, body)
	if status != 200 && status != 201 {
		t.Fatalf("%s %s = %d %v", method, path, status, m)
	}
	list, _ := m["resource"].([]any)
	if len(list) == 0 {
		t.Fatalf("%s %s: no resource in %v", method, path, m)
	}
	rec, _ := list[0].(map[string]any)
	return rec
}

func TestRunRefusesWithoutPostgres(t *testing.T) {
	err := run(t.Context(), []string{"-system-db", "sqlite:///tmp/x.db", "-redis", "redis://x"}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("err = %v", err)
	}
	err = run(t.Context(), []string{"-system-db", "postgres://u@h/db"}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "-redis") {
		t.Fatalf("err = %v", err)
	}
}
