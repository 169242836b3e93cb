package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func call(t *testing.T, url, key string) reply {
	t.Helper()
	return send(t, "GET", url, key)
}

func send(t *testing.T, method, url, key string) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader("{}"))
	if key != "" {
		req.Header.Set("X-Platform-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: not JSON: %s", url, data)
	}
	return reply{resp.StatusCode, resp.Header, m}
}

func errorMessage(r reply) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestStack(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(echoUpstream))
	defer up.Close()
	stack, closer, err := Stack(Settings{Upstream: up.URL + "/v1", FreeKey: "free-key", PaidKey: "paid-key",
		FreePerMinute: 3, PaidPerMinute: 100, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	srv := httptest.NewServer(stack)
	defer srv.Close()

	t.Run("no key", func(t *testing.T) {
		r := call(t, srv.URL+"/forecast", "")
		if r.status != 401 || !strings.Contains(errorMessage(r), "No session token (JWT) or API Key") {
			t.Fatalf("got %d %v", r.status, r.body)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		if r := call(t, srv.URL+"/forecast", "nope"); r.status != 401 {
			t.Fatalf("got %d %v", r.status, r.body)
		}
	})
	t.Run("free tier", func(t *testing.T) {
		for i := range 3 {
			r := call(t, srv.URL+"/forecast?city=paris&api_key=free-key", "")
			if r.status != 200 {
				t.Fatalf("request %d: %d %v", i+1, r.status, r.body)
			}
			if r.body["path"] != "/v1/forecast" || r.body["query"] != "city=paris" || r.body["app"] != "free-app" ||
				r.body["tier"] != "free" || r.body["saw_api_key"] != false {
				t.Fatalf("upstream saw %v", r.body)
			}
			if r.header.Get("X-RateLimit-Limit") != "3" {
				t.Fatalf("X-RateLimit-Limit = %q", r.header.Get("X-RateLimit-Limit"))
			}
		}
		r := call(t, srv.URL+"/forecast", "free-key")
		if r.status != 429 || errorMessage(r) != "API limit(s) exceeded. " || r.header.Get("Retry-After") == "" {
			t.Fatalf("fourth request: %d %v %v", r.status, r.body, r.header)
		}
	})
	t.Run("paid tier has its own counter", func(t *testing.T) {
		r := call(t, srv.URL+"/forecast", "paid-key")
		if r.status != 200 || r.body["tier"] != "paid" {
			t.Fatalf("got %d %v", r.status, r.body)
		}
	})
	t.Run("roles", func(t *testing.T) {
		r := send(t, "POST", srv.URL+"/reports/a%2Fb/", "paid-key")
		if r.status != 200 || r.body["method"] != "POST" || r.body["raw_path"] != "/v1/reports/a%2Fb/" {
			t.Fatalf("paid POST: %d %v", r.status, r.body)
		}
		r = send(t, "POST", srv.URL+"/reports", "free-key")
		if r.status != 403 || !strings.Contains(errorMessage(r), "upstream") {
			t.Fatalf("free POST: %d %v", r.status, r.body)
		}
	})
}

func TestStackUpstreamDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	stack, closer, err := Stack(Settings{Upstream: down, FreeKey: "f", PaidKey: "p", FreePerMinute: 1, PaidPerMinute: 1, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	srv := httptest.NewServer(stack)
	defer srv.Close()
	if r := call(t, srv.URL+"/x", "p"); r.status != 503 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
}

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

// TestRun runs the program as `go run` would, with its built-in upstream.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	var out syncBuffer
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-free-key", "k1", "-paid-key", "k2", "-free-rate", "1"},
			&out, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(out.String(), "free key (1/min): k1") {
		t.Fatalf("output:\n%s", out.String())
	}
	base := "http://" + addr + "/api"
	if r := call(t, base+"/hello", "k1"); r.status != 200 || r.body["path"] != "/hello" || r.body["app"] != "free-app" {
		t.Fatalf("first call: %d %v", r.status, r.body)
	}
	if r := call(t, base+"/hello", "k1"); r.status != 429 {
		t.Fatalf("second call: %d %v", r.status, r.body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run returned %v", err)
	}
}
