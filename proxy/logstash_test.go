package proxy_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// gelfUDP is a GELF UDP input (go-gelf's reader); its messages come as
// decoded JSON objects.
func gelfUDP(t *testing.T) (port int, msgs <-chan map[string]any) {
	t.Helper()
	r, err := gelf.NewReader("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan map[string]any, 1000)
	go func() {
		for {
			m, err := r.ReadMessage()
			if err != nil {
				continue
			}
			out := map[string]any{"version": m.Version, "host": m.Host, "short_message": m.Short,
				"full_message": m.Full, "timestamp": m.TimeUnix, "level": float64(m.Level)}
			for k, v := range m.Extra {
				out[k] = v
			}
			ch <- out
		}
	}()
	_, p, _ := net.SplitHostPort(r.Addr())
	port, _ = net.LookupPort("udp", p)
	return port, ch
}

// gelfTCP is a GELF TCP input.
func gelfTCP(t *testing.T) (port int, msgs <-chan map[string]any) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan map[string]any, 1000)
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
					if json.Unmarshal(b[:len(b)-1], &m) == nil {
						ch <- m
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, ch
}

// awaitEvent returns the first message whose short_message starts with
// prefix, skipping others.
func awaitEvent(t *testing.T, msgs <-chan map[string]any, prefix string) map[string]any {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-msgs:
			if s, _ := m["short_message"].(string); strings.HasPrefix(s, prefix) {
				return m
			}
		case <-deadline:
			t.Fatalf("no message %q reached the collector", prefix)
			return nil
		}
	}
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

// TestLogstashService creates log services through the system API (type
// logstash over UDP, and its synonym gelf over TCP) and checks that every
// API request reaches both collectors, redacted, with the caller's
// session; that POST /{logsvc} writes a message; and that a deleted
// service stops shipping at once.
func TestLogstashService(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	udpPort, udp := gelfUDP(t)
	tcpPort, tcp := gelfTCP(t)

	r := admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{"resource": []any{
		map[string]any{"name": "bad", "label": "Bad", "type": "logstash", "is_active": true,
			"config": map[string]any{"protocol": "smoke", "level": "LOUD", "context": []string{"_secrets"}}}}})
	if r.Status != http.StatusBadRequest {
		t.Fatalf("bad config = %d %s", r.Status, r.Body)
	}
	for _, want := range []string{"protocol", "unknown log level [LOUD]", "_secrets"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("bad config message lacks %q: %s", want, r.Body)
		}
	}

	r = admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{"resource": []any{
		map[string]any{"name": "log", "label": "Log", "type": "logstash", "is_active": true,
			"config": map[string]any{"host": "127.0.0.1", "port": udpPort, "protocol": "gelf", "context": []string{"_event", "_platform"}}},
		map[string]any{"name": "log2", "label": "Log 2", "type": "gelf", "is_active": true,
			"config": map[string]any{"port": tcpPort, "protocol": "tcp", "level": "WARNING", "context": "_event.request.uri, _event.response.status"}},
	}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create = %d %s", r.Status, r.Body)
	}

	// A request with a credential in its query and a refused one.
	if r := admin.Do(t, http.MethodGet, "/api/v2/system/app?api_key=QUERYKEY&fields=name", nil); r.Status != http.StatusOK {
		t.Fatalf("list apps = %d %s", r.Status, r.Body)
	}
	m := awaitEvent(t, udp, "GET /api/v2/system/app 200")
	for path, want := range map[string]any{
		"level":                                           float64(6),
		"version":                                         "1.1",
		"_event.request.service":                          "system",
		"_event.request.resource":                         "app",
		"_event.request.parameters.api_key":               logship.Redacted,
		"_event.request.parameters.fields":                "name",
		"_event.request.headers.X-Platform-Api-Key":       logship.Redacted,
		"_event.request.headers.X-Platform-Session-Token": logship.Redacted,
		"_event.response.status":                          float64(200),
		"_platform.session.user.email":                    proxytest.AdminEmail,
		"_platform.session.user.is_sys_admin":             true,
	} {
		if got := dig(m, path); got != want {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
	raw, _ := json.Marshal(m)
	if strings.Contains(string(raw), "QUERYKEY") || strings.Contains(string(raw), admin.Session) || strings.Contains(string(raw), in.AdminKey) {
		t.Errorf("message carries a credential: %s", raw)
	}

	// Sign-in: the password in the body and the token in the response are
	// redacted.
	in.API().Do(t, http.MethodPost, "/api/v2/system/admin/session", map[string]string{"email": proxytest.AdminEmail, "password": proxytest.AdminPassword})
	m = awaitEvent(t, udp, "POST /api/v2/system/admin/session 200")
	if dig(m, "_event.request.content.password") != logship.Redacted || dig(m, "_event.response.content.session_token") != logship.Redacted {
		t.Errorf("sign-in not redacted: %v", m["_event"])
	}
	if raw, _ := json.Marshal(m); strings.Contains(string(raw), proxytest.AdminPassword) || strings.Contains(string(raw), "eyJ") {
		t.Errorf("sign-in message carries a credential: %s", raw)
	}

	// log2 ships WARNING and worse only.
	if r := in.API().Do(t, http.MethodGet, "/api/v2/nope/x", nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown service = %d", r.Status)
	}
	m = awaitEvent(t, tcp, "GET /api/v2/nope/x 404")
	if m["level"] != float64(4) || dig(m, "_event.request.uri") != "/api/v2/nope/x" || dig(m, "_event.response.status") != float64(404) ||
		dig(m, "_event.request.method") != nil || m["_level"] != float64(300) {
		t.Errorf("log2 message = %v", m)
	}

	// POST /{logsvc} writes a message.
	for _, tc := range []struct {
		path   string
		body   any
		status int
		want   string
	}{
		{"/api/v2/log", map[string]string{"level": "error", "message": "disk full"}, 200, `{"success":true}`},
		{"/api/v2/log/WARNING/path%20message", nil, 200, `{"success":true}`},
		{"/api/v2/log", map[string]string{"level": "INFO"}, 400, "No message provided for logging"},
		{"/api/v2/log", map[string]string{"level": "LOUD", "message": "x"}, 400, "Unknown log level [LOUD]"},
	} {
		r := admin.Do(t, http.MethodPost, tc.path, tc.body)
		if r.Status != tc.status || !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("POST %s = %d %s, want %d %s", tc.path, r.Status, r.Body, tc.status, tc.want)
		}
	}
	m = awaitEvent(t, udp, "disk full")
	if m["level"] != float64(3) || m["full_message"] != "disk full" {
		t.Errorf("written message = %v", m)
	}
	if m = awaitEvent(t, udp, "path message"); m["level"] != float64(4) {
		t.Errorf("path message = %v", m)
	}
	if r := admin.Do(t, http.MethodGet, "/api/v2/log", nil); r.Status != 200 || !strings.Contains(string(r.Body), `"protocol":"gelf"`) {
		t.Errorf("GET /log = %d %s", r.Status, r.Body)
	}

	// Metrics.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, in.URL+"/metrics", nil)
	resp, err := in.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
	resp.Body.Close()
	for _, want := range []string{`portcullis_log_events_sent_total{service="log"}`, `portcullis_log_events_dropped_total`} {
		if !strings.Contains(body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Deleted: no more events.
	if r := admin.Do(t, http.MethodDelete, "/api/v2/system/service?ids="+serviceID(t, admin, "log"), nil); r.Status != http.StatusOK {
		t.Fatalf("delete = %d %s", r.Status, r.Body)
	}
	admin.Do(t, http.MethodGet, "/api/v2/system/role", nil)
	deadline := time.After(300 * time.Millisecond)
	for {
		select {
		case m := <-udp:
			if s, _ := m["short_message"].(string); strings.HasPrefix(s, "GET /api/v2/system/role") {
				t.Fatalf("deleted service shipped %v", m)
			}
			continue
		case <-deadline:
		}
		break
	}
}

func serviceID(t *testing.T, c *proxytest.Client, name string) string {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/api/v2/system/service?filter=name%3D"+name, nil)
	var out struct {
		Resource []struct {
			ID json.Number `json:"id"`
		} `json:"resource"`
	}
	r.JSON(t, &out)
	if len(out.Resource) != 1 {
		t.Fatalf("service %s: %s", name, r.Body)
	}
	return out.Resource[0].ID.String()
}
