package gelf_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gogelf "gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/gelf"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/logship"
)

func collector(t testing.TB) (int, <-chan *gogelf.Message) {
	t.Helper()
	r, err := gogelf.NewReader("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *gogelf.Message, 100)
	go func() {
		for {
			if m, err := r.ReadMessage(); err == nil {
				ch <- m
			}
		}
	}()
	_, p, _ := net.SplitHostPort(r.Addr())
	port, _ := net.LookupPort("udp", p)
	return port, ch
}

func connector(t testing.TB, cfg logship.Config) *logship.Connector {
	t.Helper()
	c, err := logship.New(cfg, logship.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// identify is a stand-in for the identity stages.
func identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := &caller.Identity{UserID: 7, UserEmail: "u@example.com", AppName: "web"}
		next.ServeHTTP(w, r.WithContext(caller.WithIdentity(r.Context(), id)))
	})
}

// backend echoes the request body and answers the status in ?status=.
var backend = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Query().Get("status") {
	case "500":
		w.WriteHeader(http.StatusInternalServerError)
	case "401":
		w.WriteHeader(http.StatusUnauthorized)
	}
	_, _ = w.Write(body)
})

// TestTap runs the stage in a stack of its own (no system database) and
// reads what two connectors receive over GELF UDP: each its own copy, at
// its own minimum level, with the bodies cut at the content limit.
func TestTap(t *testing.T) {
	p1, all := collector(t)
	p2, errorsOnly := collector(t)
	c1 := connector(t, logship.Config{Port: p1, ContentLimit: 40, Context: []string{"_event", "_platform.session.user"}})
	c2 := connector(t, logship.Config{Port: p2, Level: "ERROR", Context: []string{"_event.request.uri"}})
	tap, err := gelf.New(gelf.Options{Connectors: gelf.Static(c1, c2)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handlers.Chain(tap, identify, gelf.Observe)(backend))
	defer srv.Close()

	body := `{"user":{"name":"ann","password":"hunter2"},"padding":"` + strings.Repeat("x", 100) + `"}`
	for _, status := range []string{"200", "401", "500"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/db/_table/t?status="+status+"&session_token=S3CR3T", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Basic dXNlcjpwYXNz")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != body {
			t.Fatalf("the backend saw another body: %q", got)
		}
	}
	levels := map[string]int32{}
	for range 3 {
		m := recv(t, all)
		status := m.Short[strings.LastIndex(m.Short, " ")+1:]
		levels[status] = m.Level
		ev := m.Extra["_event"].(map[string]any)
		req := ev["request"].(map[string]any)
		content, _ := req["content"].(string)
		if req["content_truncated"] != true || !strings.Contains(content, "…[truncated: ") ||
			strings.Contains(content, "hunter2") || !strings.Contains(content, logship.Redacted) {
			t.Errorf("%s: request content %q (truncated %v)", status, content, req["content_truncated"])
		}
		if h := req["headers"].(map[string]any); h["Authorization"] != logship.Redacted {
			t.Errorf("%s: headers %v", status, h)
		}
		if p := req["parameters"].(map[string]any); p["session_token"] != logship.Redacted || p["status"] != status {
			t.Errorf("%s: parameters %v", status, p)
		}
		if req["service"] != "db" || req["resource"] != "_table/t" {
			t.Errorf("%s: target %v %v", status, req["service"], req["resource"])
		}
		user := m.Extra["_platform"].(map[string]any)["session"].(map[string]any)["user"].(map[string]any)
		if user["email"] != "u@example.com" {
			t.Errorf("%s: user %v", status, user)
		}
	}
	if levels["200"] != 6 || levels["401"] != 4 || levels["500"] != 3 {
		t.Errorf("levels = %v", levels)
	}
	m := recv(t, errorsOnly)
	if m.Level != 3 || !strings.HasSuffix(m.Short, " 500") || len(m.Extra) != 1 {
		t.Errorf("errors-only connector got %+v", m)
	}
	select {
	case m := <-errorsOnly:
		t.Errorf("errors-only connector got a second message: %s", m.Short)
	case <-time.After(200 * time.Millisecond):
	}
}

func recv(t *testing.T, ch <-chan *gogelf.Message) *gogelf.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message reached the collector")
		return nil
	}
}

// TestDeadCollectorLatency compares request latency with no connector and
// with connectors whose collectors are dead (TCP refused), blackholed
// (accepts, never reads) and stuck (a one-event queue that never drains):
// requests take no longer, and the drop counter moves.
func TestDeadCollectorLatency(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	refused := connector(t, logship.Config{Port: dead, Protocol: "tcp", Queue: 8})
	holed := connector(t, logship.Config{Port: hole.Addr().(*net.TCPAddr).Port, Protocol: "tcp", Queue: 8, Timeout: 5 * time.Second})

	measure := func(conns ...*logship.Connector) time.Duration {
		tap, err := gelf.New(gelf.Options{Connectors: gelf.Static(conns...)})
		if err != nil {
			t.Fatal(err)
		}
		h := tap(backend)
		const n = 2000
		begin := time.Now()
		for range n {
			req := httptest.NewRequest(http.MethodPost, "/api/v2/db/_table/t", strings.NewReader(`{"a":1}`))
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
		return time.Since(begin) / n
	}
	base := measure()
	with := measure(refused, holed)
	t.Logf("per request: %v without connectors, %v with a dead and a blackholed collector", base, with)
	if with > base+200*time.Microsecond {
		t.Errorf("dead collectors slow requests: %v against %v", with, base)
	}
	if refused.Stats().Dropped == 0 || holed.Stats().Dropped == 0 {
		t.Errorf("drop counters did not move: %+v %+v", refused.Stats(), holed.Stats())
	}
}

func TestOptions(t *testing.T) {
	if _, err := gelf.New(gelf.Options{}); err == nil {
		t.Error("New without Connectors succeeded")
	}
}

// BenchmarkTap measures what the tap adds to a request's own path: with
// no connector, and with one or two connectors shipping the whole _event
// (bodies included) or only a few fields. The connectors' sender is held
// (a collector that never takes anything), so that the time measured is
// the request's alone: capture, level check and a queue operation (the
// queue is full after the first few events, and Ship then drops, which
// costs the same select). What the sender spends per event (formatting,
// redaction, compression, the write) is measured by logship's
// BenchmarkSend, on its own goroutine.
func BenchmarkTap(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
	req := httptest.NewRequest(http.MethodPost, "/api/v2/db/_table/contact?fields=id,name", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Platform-Api-Key", "k")
	body := []byte(`{"resource":[{"name":"Ann"}]}`)
	w := discard{h: http.Header{}}
	held := func(b *testing.B, context ...string) *logship.Connector {
		tr := &stuck{release: make(chan struct{})}
		c, err := logship.New(logship.Config{Protocol: "http", Queue: 64, Context: context}, logship.Options{Transport: tr})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { tr.Close(); c.Close() })
		return c
	}
	run := func(b *testing.B, conns ...*logship.Connector) {
		tap, err := gelf.New(gelf.Options{Connectors: gelf.Static(conns...)})
		if err != nil {
			b.Fatal(err)
		}
		h := tap(ok)
		rd := &rewind{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			rd.reset(body)
			req.Body = rd
			h.ServeHTTP(w, req)
		}
	}
	b.Run("none", func(b *testing.B) { run(b) })
	b.Run("event", func(b *testing.B) { run(b, held(b, "_event")) })
	b.Run("fields", func(b *testing.B) {
		run(b, held(b, "_event.request.uri", "_event.request.headers", "_event.response.status"))
	})
	b.Run("two", func(b *testing.B) { run(b, held(b, "_event"), held(b, "_platform")) })
}

var answer = []byte(`{"resource":[{"id":1,"name":"Ann"}]}`)

// stuck is a transport that never finishes a send until closed.
type stuck struct {
	release chan struct{}
	once    sync.Once
}

func (s *stuck) Send(*gogelf.Message) error { <-s.release; return nil }
func (s *stuck) Close() error               { s.once.Do(func() { close(s.release) }); return nil }

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

type rewind struct {
	b   []byte
	off int
}

func (r *rewind) reset(b []byte) { r.b, r.off = b, 0 }
func (r *rewind) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}
func (r *rewind) Close() error { return nil }

// opaque wraps the response writer without Unwrap, as a third-party stage
// might.
func opaque(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(struct{ http.ResponseWriter }{w}, r)
	})
}

// TestRecycledEvents sends many concurrent requests, each with a body and
// a caller of its own, through a tap whose events are recycled, and
// checks that every message carries its own request's path, body, status
// and caller: an event reused too early would mix them up. Observe finds
// the event through the writer chain, or through the context when a
// stage in between hides the chain (FindByContext).
func TestRecycledEvents(t *testing.T) {
	for _, tc := range []struct {
		name      string
		byContext bool
		between   func(http.Handler) http.Handler
		identity  bool
	}{
		{"writer chain", false, func(h http.Handler) http.Handler { return h }, true},
		{"context", true, opaque, true},
		{"chain hidden", false, opaque, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &memory{msgs: make(chan *gogelf.Message, 1000)}
			msgs := mem.msgs
			c, err := logship.New(logship.Config{Protocol: "http", Queue: 4096, Context: []string{"_event", "_platform.session.user"}},
				logship.Options{Transport: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tap, err := gelf.New(gelf.Options{Connectors: gelf.Static(c), FindByContext: tc.byContext})
			if err != nil {
				t.Fatal(err)
			}
			perUser := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := r.URL.Query().Get("n")
				id := &caller.Identity{UserID: 1, UserEmail: "user" + n + "@example.com"}
				gelf.Observe(backend).ServeHTTP(w, r.WithContext(caller.WithIdentity(r.Context(), id)))
			})
			h := handlers.Chain(tap, tc.between)(perUser)
			const n = 200
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := itoa(i)
					req := httptest.NewRequest(http.MethodPost, "/api/v2/svc/item"+s+"?n="+s, strings.NewReader(`{"n":"`+s+`"}`))
					req.Header.Set("Content-Type", "application/json")
					h.ServeHTTP(httptest.NewRecorder(), req)
				}()
			}
			wg.Wait()
			seen := map[string]bool{}
			for range n {
				m := recv(t, msgs)
				ev := m.Extra["_event"].(map[string]any)
				req := ev["request"].(map[string]any)
				uri := req["uri"].(string)
				s := strings.TrimPrefix(uri, "/api/v2/svc/item")
				if content, _ := req["content"].(map[string]any); content["n"] != s {
					t.Errorf("%s: request content %v", uri, req["content"])
				}
				if content, _ := ev["response"].(map[string]any)["content"].(map[string]any); content["n"] != s {
					t.Errorf("%s: response content %v", uri, ev["response"])
				}
				if p, _ := req["parameters"].(map[string]any); p["n"] != s {
					t.Errorf("%s: parameters %v", uri, p)
				}
				platform, _ := m.Extra["_platform"].(map[string]any)
				session, _ := platform["session"].(map[string]any)
				user, _ := session["user"].(map[string]any)
				if tc.identity && (user == nil || user["email"] != "user"+s+"@example.com") {
					t.Errorf("%s: user %v", uri, user)
				}
				if !tc.identity && user != nil {
					t.Errorf("%s: a user without a way to find the event: %v", uri, user)
				}
				seen[s] = true
			}
			if len(seen) != n {
				t.Errorf("%d distinct requests shipped, want %d", len(seen), n)
			}
		})
	}
}

// memory is a transport that hands each message, encoded and decoded
// again as a collector would read it, to a channel.
type memory struct{ msgs chan *gogelf.Message }

func (m *memory) Send(msg *gogelf.Message) error {
	raw, err := logship.MarshalMessage(msg)
	if err != nil {
		return err
	}
	var back gogelf.Message
	if err := back.UnmarshalJSON(raw); err != nil {
		return err
	}
	m.msgs <- &back
	return nil
}

func (m *memory) Close() error { return nil }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
