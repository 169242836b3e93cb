package logstash_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/logstash"
)

// received is what a collector got: the message's JSON and, for http,
// the request's method, path and content type.
type received struct {
	raw                       []byte
	method, path, contentType string
}

// collectors start a real receiving server per protocol and return its
// port and what it receives.
var collectors = map[string]func(t *testing.T) (int, <-chan received){
	"http": func(t *testing.T) (int, <-chan received) {
		ch := make(chan received, 10)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			ch <- received{raw: b, method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type")}
			w.WriteHeader(http.StatusAccepted) // Graylog's GELF HTTP input answers 202
		}))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().(*net.TCPAddr).Port, ch
	},
	"tcp": func(t *testing.T) (int, <-chan received) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		ch := make(chan received, 10)
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
						ch <- received{raw: b[:len(b)-1]}
					}
				}()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port, ch
	},
	"gelf": udpCollector,
	"udp":  udpCollector,
}

// udpCollector reads whole, unchunked datagrams and gunzips them.
func udpCollector(t *testing.T) (int, <-chan received) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	ch := make(chan received, 10)
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			b := append([]byte(nil), buf[:n]...)
			if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					continue
				}
				b, _ = io.ReadAll(zr)
			}
			ch <- received{raw: b}
		}
	}()
	return pc.LocalAddr().(*net.UDPAddr).Port, ch
}

// TestProtocols writes a message through a log service's own API with
// each protocol and checks what a real receiving server gets: the GELF
// fields, the level (EMERGENCY is 0 and must be there), DreamFactory's
// _message and _level on the non-GELF protocols, the redacted API key,
// and, for http, a POST of JSON to the configured path.
func TestProtocols(t *testing.T) {
	for _, protocol := range []string{"http", "tcp", "gelf", "udp"} {
		t.Run(protocol, func(t *testing.T) {
			port, got := collectors[protocol](t)
			cfg, lc, err := logstash.ParseConfig(json.RawMessage(`{"host":"127.0.0.1","port":` + itoa(port) +
				`,"protocol":"` + protocol + `","path":"/in/gelf","hostname":"node-7","context":["_event.request"]}`))
			if err != nil {
				t.Fatal(err)
			}
			c, err := logstash.NewConnector(lc, logstash.ConnectorOptions{Path: cfg.Path})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			h := &logstash.Handler{Name: "log", Connector: c}
			req := httptest.NewRequest(http.MethodPost, "/EMERGENCY/reactor%20breach?api_key=K-99", nil)
			req.Header.Set("X-Platform-API-Key", "K-99")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"success":true}` {
				t.Fatalf("POST answered %d %s", w.Code, w.Body)
			}
			var r received
			select {
			case r = <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("the collector received nothing")
			}
			if protocol == "http" && (r.method != "POST" || r.path != "/in/gelf" || r.contentType != "application/json") {
				t.Errorf("http request: %s %s %s", r.method, r.path, r.contentType)
			}
			var m map[string]any
			if err := json.Unmarshal(r.raw, &m); err != nil {
				t.Fatalf("not JSON: %v: %s", err, r.raw)
			}
			level, present := m["level"]
			if !present || level != float64(0) || m["version"] != "1.1" || m["host"] != "node-7" ||
				m["full_message"] != "reactor breach" || m["short_message"] != "reactor breach" {
				t.Errorf("message: %s", r.raw)
			}
			if _, ok := m["timestamp"].(float64); !ok {
				t.Errorf("timestamp: %s", r.raw)
			}
			if protocol != "gelf" && (m["_level"] != float64(600) || m["_message"] != "reactor breach") {
				t.Errorf("_level/_message: %s", r.raw)
			}
			if bytes.Contains(r.raw, []byte("K-99")) || !bytes.Contains(r.raw, []byte(logship.Redacted)) {
				t.Errorf("the API key was not redacted: %s", r.raw)
			}
			deadline := time.Now().Add(5 * time.Second)
			for c.Stats().Sent == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond) // counted once Send returns
			}
			if st := c.Stats(); st.Sent != 1 || st.Failed != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestHTTPCollectorRefuses: a collector answering 500 counts a failure
// and the next event is tried again.
func TestHTTPCollectorRefuses(t *testing.T) {
	calls := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- struct{}{}
		http.Error(w, "full", http.StatusInternalServerError)
	}))
	defer srv.Close()
	c, err := logstash.NewConnector(logship.Config{Port: srv.Listener.Addr().(*net.TCPAddr).Port, Protocol: "http"},
		logstash.ConnectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		c.Ship(&logship.Event{Time: time.Now(), Method: "GET", Path: "/api/v2/x", Status: 200})
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().Failed < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := c.Stats(); st.Failed != 2 || st.Sent != 0 || len(calls) != 2 {
		t.Errorf("stats %+v, %d calls", st, len(calls))
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestMessageCarriesWhatWasPosted: a message written through the log
// service's API ships, as DreamFactory's logger does, with the request in
// _event: the fields posted beside level and message (credentials
// redacted), the method and the service's resource. PUT writes as POST
// does, and /{message} without a level is an INFO message.
func TestMessageCarriesWhatWasPosted(t *testing.T) {
	port, got := udpCollector(t)
	_, lc, err := logstash.ParseConfig(json.RawMessage(`{"host":"127.0.0.1","port":` + itoa(port) + `,"protocol":"gelf"}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := logstash.NewConnector(lc, logstash.ConnectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := &logstash.Handler{Name: "log", Connector: c}
	receive := func(t *testing.T) map[string]any {
		t.Helper()
		select {
		case r := <-got:
			var m map[string]any
			if err := json.Unmarshal(r.raw, &m); err != nil {
				t.Fatalf("not JSON: %v: %s", err, r.raw)
			}
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("the collector received nothing")
		}
		return nil
	}
	for _, tc := range []struct {
		name, method, path, body string
		level                    float64
		message                  string
		payload                  map[string]any
	}{
		{"JSON with fields", http.MethodPost, "/", `{"level":"WARNING","message":"disk low","disk":"/var","free_mb":12,"password":"hunter2"}`,
			4, "disk low", map[string]any{"level": "WARNING", "message": "disk low", "disk": "/var", "free_mb": float64(12), "password": logship.Redacted}},
		{"PUT", http.MethodPut, "/", `{"message":"rotated","file":"a.log"}`,
			6, "rotated", map[string]any{"message": "rotated", "file": "a.log"}},
		{"message in the path", http.MethodPost, "/just%20this", ``, 6, "just this", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"success":true}` {
				t.Fatalf("%s answered %d %s", tc.method, w.Code, w.Body)
			}
			m := receive(t)
			if m["full_message"] != tc.message || m["level"] != tc.level {
				t.Errorf("message: %v", m)
			}
			ev, _ := m["_event"].(map[string]any)
			req2, _ := ev["request"].(map[string]any)
			if req2["method"] != tc.method {
				t.Errorf("_event.request: %v", ev)
			}
			if tc.payload == nil {
				return
			}
			if diff := cmp.Diff(tc.payload, req2["content"]); diff != "" {
				t.Errorf("_event.request.content (-want +got):\n%s", diff)
			}
		})
	}
}
