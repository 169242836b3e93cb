package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func get(t *testing.T, url string, header map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	body, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	return res.StatusCode, m
}

func message(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestSessionsWithoutASystemDatabase(t *testing.T) {
	c := &clock{t: time.Now()}
	tokens, err := NewTokens([]byte(strings.Repeat("k", 32)), c.now)
	if err != nil {
		t.Fatal(err)
	}
	stack, err := Stack(testKey, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack)
	defer srv.Close()
	ada, err := tokens.Issue(User{ID: 7, Email: "ada@example.com", Name: "Ada", RoleID: 2, RoleName: "editor"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewTokens([]byte(strings.Repeat("x", 32)), c.now)
	forged, _ := other.Issue(User{ID: 1, Email: "root@example.com", Admin: true}, time.Hour)
	p, sig, _ := strings.Cut(ada, ".")
	cases := []struct {
		name   string
		header map[string]string
		status int
		msg    string
	}{
		{"no key", map[string]string{"X-Platform-Session-Token": ada}, 401, ""},
		{"key, no token", map[string]string{"X-Platform-API-Key": testKey}, 401, "Sign in: send a session token in X-Platform-Session-Token."},
		{"key and token", map[string]string{"X-Platform-API-Key": testKey, "X-Platform-Session-Token": ada}, 200, ""},
		{"bearer token", map[string]string{"X-Platform-API-Key": testKey, "Authorization": "Bearer " + ada}, 200, ""},
		{"another key's token", map[string]string{"X-Platform-API-Key": testKey, "X-Platform-Session-Token": forged}, 401, "Invalid token."},
		{"tampered claims", map[string]string{"X-Platform-API-Key": testKey, "X-Platform-Session-Token": p + "x." + sig}, 401, "Invalid token."},
		{"garbage", map[string]string{"X-Platform-API-Key": testKey, "X-Platform-Session-Token": "garbage"}, 401, "Invalid token."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, m := get(t, srv.URL+"/me", tc.header)
			if status != tc.status || (tc.msg != "" && message(m) != tc.msg) {
				t.Fatalf("= %d %v, want %d %q", status, m, tc.status, tc.msg)
			}
			if status == 200 && (m["user_id"] != float64(7) || m["email"] != "ada@example.com" ||
				m["role"] != "editor" || m["app"] != "web" || m["admin"] != false) {
				t.Fatalf("identity = %v", m)
			}
		})
	}
	c.advance(time.Hour)
	if status, m := get(t, srv.URL+"/me", map[string]string{"X-Platform-API-Key": testKey, "X-Platform-Session-Token": ada}); status != 401 ||
		message(m) != "Token has expired." {
		t.Fatalf("expired token = %d %v", status, m)
	}
}

func TestNewTokensWantsALongKey(t *testing.T) {
	if _, err := NewTokens([]byte("short"), nil); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
}

func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var out bytes.Buffer
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, &out, func(a string) { addrc <- a }) }()
	addr := <-addrc
	var key, tok string
	for _, line := range strings.Split(out.String(), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "API key: "); ok {
			key = v
		}
		if i := strings.LastIndex(line, "): "); i > 0 && strings.HasPrefix(line, "token of") {
			tok = line[i+3:]
		}
	}
	status, m := get(t, "http://"+addr+"/api/me", map[string]string{"X-Platform-API-Key": key, "X-Platform-Session-Token": tok})
	if status != 200 || m["email"] != "ada@example.com" {
		t.Fatalf("printed key and token = %d %v\n%s", status, m, out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
