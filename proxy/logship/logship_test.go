package logship_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/logship"
)

// udpCollector is a GELF UDP input: go-gelf's reader, which reassembles
// chunks and decompresses.
func udpCollector(t *testing.T) (port int, msgs <-chan *gelf.Message) {
	t.Helper()
	r, err := gelf.NewReader("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *gelf.Message, 100)
	go func() {
		for {
			m, err := r.ReadMessage()
			if err != nil {
				continue
			}
			ch <- m
		}
	}()
	_, p, _ := net.SplitHostPort(r.Addr())
	return atoi(p), ch
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// tcpCollector is a GELF TCP input: NUL-terminated JSON messages.
func tcpCollector(t *testing.T) (port int, msgs <-chan map[string]any) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan map[string]any, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					b, err := br.ReadBytes(0)
					if err != nil {
						return
					}
					var m map[string]any
					if err := json.Unmarshal(b[:len(b)-1], &m); err != nil {
						t.Errorf("tcp message is not JSON: %v: %q", err, b)
						return
					}
					ch <- m
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, ch
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message reached the collector")
	}
	var zero T
	return zero
}

func nothing[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("unexpected message: %+v", m)
	case <-time.After(200 * time.Millisecond):
	}
}

// get walks a dotted path through decoded JSON.
func get(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func event() *logship.Event {
	return &logship.Event{
		Time:      time.Unix(1_750_000_000, 250_000_000),
		Duration:  1500 * time.Microsecond,
		RequestID: "req-1",
		Method:    "POST",
		Path:      "/api/v2/db/_table/contact",
		Query:     "fields=name&api_key=KEY123&filter=a%3D1",
		Header: map[string][]string{
			"Authorization":                {"Bearer abc.def"},
			"Cookie":                       {"sid=1"},
			"X-Dreamfactory-Api-Key":       {"KEY123"},
			"X-Dreamfactory-Session-Token": {"eyJhbGciOi.eyJzdWIi.sig"},
			"User-Agent":                   {"test"},
			"Content-Type":                 {"application/json"},
		},
		Request: logship.Body{ContentType: "application/json",
			Data: []byte(`{"resource":[{"name":"Ann","Password":"pw1","nested":{"deeper":[{"client_secret":"cs","ok":1}]}}]}`), Size: 94},
		Status:   201,
		Response: logship.Body{ContentType: "application/json", Data: []byte(`{"session_token":"tok","id":5}`), Size: 30},
		Identity: &caller.Identity{AppID: 3, AppName: "web", RoleID: 2, RoleName: "staff", UserID: 9, UserName: "Ann", UserEmail: "ann@example.com", SessionID: "jti-secret"},
	}
}

func start(t testing.TB, cfg logship.Config, opts logship.Options) *logship.Connector {
	t.Helper()
	c, err := logship.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGELFOverUDP ships one request to a real GELF UDP reader and checks
// the top-level fields, the nested event fields and the redaction.
func TestGELFOverUDP(t *testing.T) {
	port, msgs := udpCollector(t)
	c := start(t, logship.Config{Name: "log", Port: port, Hostname: "node-1", Version: "1.2.3",
		Context: []string{"_event", "_platform"}}, logship.Options{})
	if !c.Ship(event()) {
		t.Fatal("Ship refused the event")
	}
	m := receive(t, msgs)
	if m.Version != "1.1" || m.Host != "node-1" || m.Level != 6 || m.TimeUnix != 1_750_000_000.25 {
		t.Errorf("top level = %+v", m)
	}
	if m.Short != "POST /api/v2/db/_table/contact 201" || !strings.HasPrefix(m.Full, m.Short+" in 1.5ms") {
		t.Errorf("short %q full %q", m.Short, m.Full)
	}
	ex := map[string]any(m.Extra)
	for path, want := range map[string]any{
		"_request_id":                                         "req-1",
		"_event.request.method":                               "POST",
		"_event.request.uri":                                  "/api/v2/db/_table/contact",
		"_event.request.service":                              "db",
		"_event.request.resource":                             "_table/contact",
		"_event.resource":                                     "_table/contact",
		"_event.request.headers.Authorization":                logship.Redacted,
		"_event.request.headers.Cookie":                       logship.Redacted,
		"_event.request.headers.X-Dreamfactory-Api-Key":       logship.Redacted,
		"_event.request.headers.X-Dreamfactory-Session-Token": logship.Redacted,
		"_event.request.headers.User-Agent":                   "test",
		"_event.request.parameters.api_key":                   logship.Redacted,
		"_event.request.parameters.filter":                    "a=1",
		"_event.response.status":                              float64(201),
		"_event.response.status_code":                         float64(201),
		"_event.response.content.session_token":               logship.Redacted,
		"_event.response.content.id":                          float64(5),
		"_platform.config.version":                            "1.2.3",
		"_platform.session.user.email":                        "ann@example.com",
		"_platform.session.app.name":                          "web",
		"_platform.session.role.name":                         "staff",
		"_platform.session.api_key":                           logship.Redacted,
	} {
		if got := get(ex, path); got != want {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
	first := get(ex, "_event.request.content.resource").([]any)[0]
	if get(first, "Password") != logship.Redacted || get(first, "name") != "Ann" {
		t.Errorf("request content = %v", first)
	}
	deeper := get(first, "nested.deeper").([]any)[0]
	if get(deeper, "client_secret") != logship.Redacted || get(deeper, "ok") != float64(1) {
		t.Errorf("deep content = %v", deeper)
	}
	raw, _ := json.Marshal(ex)
	for _, secret := range []string{"KEY123", "pw1", "abc.def", "tok\"", "eyJ", "jti-secret", "sid=1", "\"cs\""} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("message carries %q: %s", secret, raw)
		}
	}
}

// TestChunkingAndCompression sends a message far over one datagram with
// each compression, decodes it with the GELF reader, and checks on the
// wire that it came in GELF chunks with the compression's magic bytes.
func TestChunkingAndCompression(t *testing.T) {
	big := make([]byte, 30_000)
	_, _ = rand.Read(big)
	text := hex.EncodeToString(big) // 60 KB that compress to about half
	for _, tc := range []struct {
		compression string
		magic       []byte
	}{
		{"gzip", []byte{0x1f, 0x8b}},
		{"zlib", []byte{0x78}},
		{"none", []byte("{")},
	} {
		t.Run(tc.compression, func(t *testing.T) {
			port, msgs := udpCollector(t)
			c := start(t, logship.Config{Port: port, Compression: tc.compression, ContentLimit: 100_000,
				Context: []string{"_event.response.content"}}, logship.Options{})
			ev := event()
			ev.Response = logship.Body{ContentType: "text/plain", Data: []byte(text), Size: int64(len(text))}
			c.Ship(ev)
			m := receive(t, msgs)
			if got := get(map[string]any(m.Extra), "_event.response.content"); got != text {
				t.Fatalf("content came back with %d characters", len(got.(string)))
			}

			// The same message once more, read as raw datagrams.
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			raw := start(t, logship.Config{Port: pc.LocalAddr().(*net.UDPAddr).Port, Compression: tc.compression,
				ContentLimit: 100_000, Context: []string{"_event.response.content"}}, logship.Options{})
			raw.Ship(ev)
			chunks := map[byte][]byte{}
			var total byte
			buf := make([]byte, 2048)
			for total == 0 || len(chunks) < int(total) {
				_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					t.Fatalf("after %d chunks: %v", len(chunks), err)
				}
				if n > gelf.ChunkSize || buf[0] != 0x1e || buf[1] != 0x0f {
					t.Fatalf("datagram of %d bytes is not a GELF chunk: % x", n, buf[:12])
				}
				total = buf[11]
				chunks[buf[10]] = append([]byte(nil), buf[12:n]...)
			}
			if total < 2 || total > 128 {
				t.Fatalf("%d chunks", total)
			}
			var whole []byte
			for i := byte(0); i < total; i++ {
				whole = append(whole, chunks[i]...)
			}
			if !bytes.HasPrefix(whole, tc.magic) {
				t.Fatalf("payload starts % x, want % x", whole[:2], tc.magic)
			}
			if tc.compression == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(whole))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil || !bytes.Contains(plain, []byte(text)) {
					t.Fatalf("gunzip: %v", err)
				}
			}
		})
	}
}

// TestGELFOverTCP ships to a TCP collector: NUL-terminated JSON with
// DreamFactory's _message and _level, and a restarted collector is
// reached again.
func TestGELFOverTCP(t *testing.T) {
	port, msgs := tcpCollector(t)
	c := start(t, logship.Config{Port: port, Protocol: "tcp", Context: []string{"_event.request.method"}}, logship.Options{})
	ev := event()
	ev.Status = 503
	c.Ship(ev)
	m := receive(t, msgs)
	if m["version"] != "1.1" || m["level"] != float64(3) || m["_level"] != float64(400) || m["_message"] != m["full_message"] {
		t.Errorf("message = %v", m)
	}
	if get(m, "_event.request.method") != "POST" || get(m, "_event.request.uri") != nil {
		t.Errorf("context = %v", m["_event"])
	}
}

// TestLevels checks the minimum level, the status levels and the event
// map.
func TestLevels(t *testing.T) {
	port, msgs := tcpCollector(t)
	c := start(t, logship.Config{Port: port, Protocol: "tcp", Level: "warning", Context: []string{"_event.response.status"},
		EventMap: []logship.Mapping{
			{Event: "audit.*", Level: "NOTICE", Message: "audited"},
			{Event: "db._table.secret.get", Level: "1", Message: "secret read"},
		}}, logship.Options{})
	for _, tc := range []struct {
		path, method string
		status       int
		level        float64 // -1: not shipped
		full         string
	}{
		{"/api/v2/db/_table/contact", "GET", 200, -1, ""},
		{"/api/v2/db/_table/contact", "GET", 404, 4, ""},
		{"/api/v2/db/_table/contact", "GET", 500, 3, ""},
		{"/api/v2/audit/x", "GET", 500, -1, ""}, // NOTICE is below WARNING
		{"/api/v2/db/_table/secret", "GET", 200, 1, "secret read"},
	} {
		ev := event()
		ev.Path, ev.Method, ev.Status = tc.path, tc.method, tc.status
		shipped := c.Ship(ev)
		if shipped != (tc.level >= 0) {
			t.Errorf("%s %d: shipped = %v", tc.path, tc.status, shipped)
			continue
		}
		if !shipped {
			continue
		}
		m := receive(t, msgs)
		if m["level"] != tc.level {
			t.Errorf("%s %d: level %v, want %v", tc.path, tc.status, m["level"], tc.level)
		}
		if tc.full != "" && m["full_message"] != tc.full {
			t.Errorf("%s: full_message %v", tc.path, m["full_message"])
		}
	}
	nothing(t, msgs)
}

// TestContextKeys ships only the keys chosen, per connector.
func TestContextKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		context []string
		present []string
		absent  []string
	}{
		{"default", nil, []string{"_event.request.method", "_event.request.headers.User-Agent", "_event.response.content.id"}, []string{"_platform"}},
		{"platform only", []string{"_platform"}, []string{"_platform.config.api_version", "_platform.session.user.id"}, []string{"_event"}},
		{"dotted", []string{"_event.request.uri", "_platform.session.user", "_event.request.headers.User-Agent"},
			[]string{"_event.request.uri", "_platform.session.user.name", "_event.request.headers.User-Agent"},
			[]string{"_event.request.method", "_event.request.headers.Authorization", "_platform.session.app", "_event.response"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, msgs := tcpCollector(t)
			c := start(t, logship.Config{Port: port, Protocol: "tcp", Context: tc.context}, logship.Options{})
			c.Ship(event())
			m := receive(t, msgs)
			for _, p := range tc.present {
				if get(m, p) == nil {
					t.Errorf("%s missing from %v", p, m)
				}
			}
			for _, p := range tc.absent {
				if get(m, p) != nil {
					t.Errorf("%s present: %v", p, get(m, p))
				}
			}
		})
	}
}

// stuck is a transport whose sends wait until released: a collector that
// does not keep up.
type stuck struct {
	release chan struct{}
	once    sync.Once
}

func (s *stuck) Send(*gelf.Message) error { <-s.release; return nil }
func (s *stuck) Close() error             { s.once.Do(func() { close(s.release) }); return nil }

// TestFullQueueDrops checks that Ship never waits: beyond the queue,
// events are dropped and counted in the metrics.
func TestFullQueueDrops(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, err := logship.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &stuck{release: make(chan struct{})}
	c := start(t, logship.Config{Name: "slow", Queue: 4, Protocol: "http"}, logship.Options{Transport: tr, Metrics: metrics})
	begin := time.Now()
	queued := 0
	for range 100 {
		if c.Ship(event()) {
			queued++
		}
	}
	if d := time.Since(begin); d > 50*time.Millisecond {
		t.Errorf("100 ships took %v", d)
	}
	st := c.Stats()
	if queued < 4 || queued > 5 || st.Dropped != uint64(100-queued) {
		t.Errorf("queued %d, stats %+v", queued, st)
	}
	if got := testutil.ToFloat64(metrics.Dropped("slow")); got != float64(st.Dropped) {
		t.Errorf("dropped metric = %v, want %d", got, st.Dropped)
	}
	tr.Close()
}

// TestDeadCollector: a TCP collector that refuses and a blackholed one
// (an address that never answers) cost Ship nothing; failures are
// counted.
func TestDeadCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // refused from now on
	// A collector that accepts and never reads: its buffers fill up and
	// writes wait for the timeout.
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
	for _, cfg := range []logship.Config{
		{Port: port, Protocol: "tcp", Timeout: 100 * time.Millisecond},
		{Port: hole.Addr().(*net.TCPAddr).Port, Protocol: "tcp", Timeout: 300 * time.Millisecond, ContentLimit: 1 << 20},
		{Port: port, Protocol: "gelf"},
	} {
		c := start(t, cfg, logship.Options{})
		begin := time.Now()
		for range 50 {
			c.Ship(event())
		}
		if d := time.Since(begin); d > 20*time.Millisecond {
			t.Errorf("%s %s: 50 ships took %v", cfg.Protocol, cfg.Host, d)
		}
		deadline := time.Now().Add(3 * time.Second)
		for c.Stats().Failed+c.Stats().Sent == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if cfg.Port == port && cfg.Protocol == "tcp" && c.Stats().Failed == 0 {
			t.Errorf("%s: no failure counted: %+v", cfg.Host, c.Stats())
		}
	}
}

func TestConfigErrors(t *testing.T) {
	_, err := logship.Config{Port: 70000, Protocol: "smoke", Compression: "lz4", Context: []string{"_secret", "_event."},
		Level: "LOUD", EventMap: []logship.Mapping{{Level: "9"}}}.Normal()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"port", "protocol", "compression", `"_secret"`, `"_event."`, "event is required", "unknown log level [9]", "unknown log level [LOUD]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// BenchmarkSend measures what a connector's sender spends per event, off
// the request path: building the message with the whole _event and
// _platform, redacting headers, query and both JSON bodies, compressing
// (gzip) and writing it to a UDP collector.
func BenchmarkSend(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	for _, compression := range []string{"gzip", "none"} {
		b.Run(compression, func(b *testing.B) {
			cfg, err := logship.Config{Port: pc.LocalAddr().(*net.UDPAddr).Port, Compression: compression,
				Context: []string{"_event", "_platform"}}.Normal()
			if err != nil {
				b.Fatal(err)
			}
			tr, err := logship.Dial(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			c := start(b, cfg, logship.Options{Transport: tr})
			ev := event()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := c.SendNow(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
