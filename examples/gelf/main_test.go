package main

import (
	"bytes"
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
	"time"

	gogelf "gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/proxy/logship"
)

// collector is a real GELF UDP input (go-gelf's reader: chunks and
// compression).
func collector(t *testing.T) (port int, msgs <-chan *gogelf.Message) {
	t.Helper()
	r, err := gogelf.NewReader("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *gogelf.Message, 16)
	go func() {
		for {
			if m, err := r.ReadMessage(); err == nil {
				ch <- m
			}
		}
	}()
	_, p, _ := net.SplitHostPort(r.Addr())
	port, _ = net.LookupPort("udp", p)
	return port, ch
}

func receive(t *testing.T, ch <-chan *gogelf.Message) map[string]any {
	t.Helper()
	select {
	case m := <-ch:
		raw, _ := json.Marshal(m.Extra)
		var extra map[string]any
		_ = json.Unmarshal(raw, &extra)
		extra["level"] = float64(m.Level)
		extra["short_message"] = m.Short
		return extra
	case <-time.After(5 * time.Second):
		t.Fatal("the collector received nothing")
	}
	return nil
}

func dig(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func do(t *testing.T, method, url, key, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Platform-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestStack ships a created note and a refused call to a real GELF
// collector and checks the events: fields, levels, the caller and the
// redaction of the API key and the password.
func TestStack(t *testing.T) {
	port, msgs := collector(t)
	stack, conn, err := Stack(Settings{
		Collector: logship.Config{Name: "t", Port: port, Context: []string{"_event", "_platform.session"}},
		APIKey:    "secret-key",
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srv := httptest.NewServer(stack)
	defer srv.Close()

	if got := do(t, "POST", srv.URL+"/notes?api_key=secret-key", "", `{"text":"hello","auth":{"password":"pw-123"}}`); got != 201 {
		t.Fatalf("POST answered %d", got)
	}
	m := receive(t, msgs)
	for path, want := range map[string]any{
		"level":                                     float64(logship.Info),
		"short_message":                             "POST /notes 201",
		"_event.request.method":                     "POST",
		"_event.request.parameters.api_key":         logship.Redacted,
		"_event.request.content.text":               "hello",
		"_event.request.content.auth":               logship.Redacted,
		"_event.response.status_code":               float64(201),
		"_event.response.content.id":                float64(1),
		"_platform.session.app.name":                "notes-app",
		"_platform.session.role.name":               "writer",
		"_event.request.headers.Content-Type":       "application/json",
		"_event.request.headers.X-Platform-Api-Key": nil,
	} {
		if got := dig(m, path); got != want {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
	raw, _ := json.Marshal(m)
	if bytes.Contains(raw, []byte("secret-key")) || bytes.Contains(raw, []byte("pw-123")) {
		t.Errorf("a credential left the process: %s", raw)
	}

	if got := do(t, "GET", srv.URL+"/notes", "wrong-key", ""); got != 401 {
		t.Fatalf("GET with a wrong key answered %d", got)
	}
	m = receive(t, msgs)
	if m["level"] != float64(logship.Warning) || dig(m, "_event.request.headers.X-Platform-Api-Key") != logship.Redacted ||
		dig(m, "_platform.session.app") != nil {
		t.Errorf("refused call: %v", m)
	}
	deadline := time.Now().Add(5 * time.Second)
	for conn.Stats().Sent < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // counted once the send returns
	}
	if st := conn.Stats(); st.Sent != 2 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// syncBuffer is a bytes.Buffer safe for the collector's goroutine.
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

// TestRun starts the program with its built-in collector and finds the
// request's event in what it prints.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-key", "k1"}, out, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	if got := do(t, "GET", "http://"+addr+"/api/notes", "k1", ""); got != 200 {
		t.Fatalf("GET answered %d", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "collector: level 6 GET /notes 200") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "collector: level 6 GET /notes 200") || strings.Contains(out.String(), `"k1"`) {
		t.Errorf("output:\n%s", out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"-protocol", "tcp"}, io.Discard, nil); err == nil {
		t.Error("tcp with the built-in UDP collector was accepted")
	}
}
