package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// TestRun runs the program on a free port and calls both its own routes
// and Portcullis under the prefix, then stops it.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	var out syncBuffer
	dir := t.TempDir()
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data", dir, "-password", "embed-pass-1"}, &out,
			func(a string) { addrc <- a })
	}()
	var base string
	select {
	case base = <-addrc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	base = "http://" + base
	if !strings.Contains(out.String(), "admin API key:") {
		t.Fatalf("output lacks the API key:\n%s", out.String())
	}

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/hello"); code != 200 || body != "hello from the program\n" {
		t.Fatalf("/hello = %d %q", code, body)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "own home page") {
		t.Fatalf("/ = %d %q", code, body)
	}
	if code, _ := get("/nosuch"); code != 404 {
		t.Fatalf("/nosuch = %d", code)
	}
	code, body := get(Prefix + "/healthz")
	var health map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &health) != nil || health["status"] != "ok" {
		t.Fatalf("healthz = %d %s", code, body)
	}
	code, body = get(Prefix + "/api/v2/nosuch")
	if code != 404 || !strings.Contains(body, `"message":"Service 'nosuch' not found."`) {
		t.Fatalf("unknown service = %d %s", code, body)
	}
	// Sign in as the administrator and read the built-in database service,
	// all under the prefix.
	key := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "admin API key:"); ok {
			key = strings.TrimSpace(k)
		}
	}
	call := func(method, path, session string, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
		req.Header.Set("X-Platform-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set("X-Platform-Session-Token", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	code, login := call("POST", Prefix+"/api/v2/system/admin/session", "", `{"email":"admin@example.com","password":"embed-pass-1"}`)
	token, _ := login["session_token"].(string)
	if code != 200 || token == "" {
		t.Fatalf("admin login under the prefix = %d %v", code, login)
	}
	if code, tables := call("GET", Prefix+"/api/v2/db/_table", token, ""); code != 200 || tables["resource"] == nil {
		t.Fatalf("db tables under the prefix = %d %v", code, tables)
	}
	if code, _ := call("GET", Prefix+"/api/v2/db/_table", "", ""); code == 200 {
		t.Fatal("the API key alone reads the admin's data")
	}
	if code, body := get(Prefix + "/metrics"); code != 200 || !strings.Contains(body, "portcullis_http_requests_total") {
		t.Fatalf("metrics = %d", code)
	}
	// Outside the prefix the program's own mux answers.
	if code, body := get("/api/v2/nosuch"); code != 404 || strings.Contains(body, `"error"`) {
		t.Fatalf("/api/v2 outside the prefix = %d %s", code, body)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run returned %v", err)
	}

	// A second run on the same data directory does not seed again.
	ctx2, cancel2 := context.WithCancel(t.Context())
	var out2 syncBuffer
	go func() {
		done <- run(ctx2, []string{"-addr", "127.0.0.1:0", "-data", dir}, &out2, func(string) { cancel2() })
	}()
	if err := <-done; err != nil {
		t.Fatalf("second run: %v", err)
	}
	if strings.Contains(out2.String(), "initialised") {
		t.Fatalf("second run seeded again:\n%s", out2.String())
	}
}
