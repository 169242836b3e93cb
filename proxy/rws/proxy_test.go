package rws_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/rws"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// seen is what the echo upstream reports about the request it received.
type seen struct {
	Method string              `json:"method"`
	Path   string              `json:"path"`
	Query  string              `json:"query"`
	Host   string              `json:"host"`
	Header map[string][]string `json:"header"`
	Body   string              `json:"body"`
}

// echo starts an upstream that answers every request with what it saw and
// counts the requests.
func echo(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(seen{
			Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Host: r.Host,
			Header: r.Header, Body: string(body),
		})
	}))
	t.Cleanup(up.Close)
	return up, &n
}

func newProxy(t *testing.T, cfg rws.Config) *rws.Proxy {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p, err := rws.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// inPipeline wraps h as the router would: the target service "svc" and,
// when id is set, the caller's identity in the context.
func inPipeline(h http.Handler, id *caller.Identity) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		rest := strings.TrimPrefix(r.URL.Path, "/api/v2/svc")
		t := &service.Target{Service: &store.Service{Name: "svc"}, Resource: strings.Trim(rest, "/"), Verb: r.Method}
		ctx = service.WithTarget(ctx, t)
		if id != nil {
			ctx = caller.WithIdentity(ctx, id)
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, h http.Handler, method, target string, body io.Reader, hdr map[string]string) result {
	t.Helper()
	front := httptest.NewServer(h)
	defer front.Close()
	req, err := http.NewRequestWithContext(t.Context(), method, front.URL+target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := front.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return result{resp.StatusCode, resp.Header, data}
}

func (r result) seen(t *testing.T) seen {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var s seen
	if err := json.Unmarshal(r.body, &s); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return s
}

func (r result) envelope(t *testing.T) (int, string) {
	t.Helper()
	var env struct {
		Error struct {
			Code       int    `json:"code"`
			Message    string `json:"message"`
			StatusCode int    `json:"status_code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("not an envelope (%d): %s", r.status, r.body)
	}
	if env.Error.Code != r.status || env.Error.StatusCode != r.status {
		t.Fatalf("envelope codes %d/%d for status %d", env.Error.Code, env.Error.StatusCode, r.status)
	}
	return env.Error.Code, env.Error.Message
}

func TestForwarding(t *testing.T) {
	up, _ := echo(t)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL + "/v1/?fixed=1"})
	h := inPipeline(p, nil)

	tests := []struct {
		name              string
		method, target    string
		body              string
		wantPath, wantQry string
	}{
		{"root", "GET", "/api/v2/svc", "", "/v1/", "fixed=1"},
		{"root slash", "GET", "/api/v2/svc/", "", "/v1/", "fixed=1"},
		{"nested", "GET", "/api/v2/svc/items/5", "", "/v1/items/5", "fixed=1"},
		{"trailing slash kept", "GET", "/api/v2/svc/items/", "", "/v1/items/", "fixed=1"},
		{"encoded slash kept", "GET", "/api/v2/svc/files/a%2Fb.txt", "", "/v1/files/a%2Fb.txt", "fixed=1"},
		{"encoded space", "GET", "/api/v2/svc/a%20b", "", "/v1/a%20b", "fixed=1"},
		{"query order kept, credentials dropped", "GET", "/api/v2/svc/q?b=2&api_key=k&a=1&a=3&session_token=s&Api_Key=x",
			"", "/v1/q", "fixed=1&b=2&a=1&a=3"},
		{"post body", "POST", "/api/v2/svc/items", `{"name":"x"}`, "/v1/items", "fixed=1"},
		{"put", "PUT", "/api/v2/svc/items/1", `{"a":1}`, "/v1/items/1", "fixed=1"},
		{"patch", "PATCH", "/api/v2/svc/items/1", `{"a":2}`, "/v1/items/1", "fixed=1"},
		{"delete", "DELETE", "/api/v2/svc/items/1", "", "/v1/items/1", "fixed=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			s := do(t, h, tc.method, tc.target, body, map[string]string{"X-Custom": "c", "Content-Type": "application/json"}).seen(t)
			got := []string{s.Method, s.Path, s.Query, s.Body, strings.Join(s.Header["X-Custom"], ",")}
			want := []string{tc.method, tc.wantPath, tc.wantQry, tc.body, "c"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("forwarded request (-want +got):\n%s", diff)
			}
			if s.Host != strings.TrimPrefix(up.URL, "http://") {
				t.Fatalf("Host = %q, want the upstream's", s.Host)
			}
			if got := s.Header["X-Forwarded-Prefix"]; len(got) != 1 || got[0] != "/api/v2/svc" {
				t.Fatalf("X-Forwarded-Prefix = %q", got)
			}
		})
	}
}

func TestForwardingAlone(t *testing.T) {
	up, _ := echo(t)
	p := newProxy(t, rws.Config{BaseURL: up.URL + "/base"})
	mux := http.NewServeMux()
	mux.Handle("/weather/", http.StripPrefix("/weather", p))
	s := do(t, mux, "GET", "/weather/today/paris?units=metric", nil, map[string]string{"X-Forwarded-Prefix": "/evil"}).seen(t)
	if s.Path != "/base/today/paris" || s.Query != "units=metric" {
		t.Fatalf("forwarded %s?%s", s.Path, s.Query)
	}
	if got := s.Header["X-Forwarded-Prefix"]; len(got) != 1 || got[0] != "/weather" {
		t.Fatalf("X-Forwarded-Prefix = %q", got)
	}

	// Behind stages that target the whole path (rbac.FixedService), the
	// client's escaping is kept too.
	fixed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := &service.Target{Service: &store.Service{Name: "weather"}, Resource: strings.Trim(r.URL.Path, "/"), Verb: r.Method}
		p.ServeHTTP(w, r.WithContext(service.WithTarget(r.Context(), t)))
	})
	s = do(t, fixed, "GET", "/files/a%2Fb/", nil, nil).seen(t)
	if s.Path != "/base/files/a%2Fb/" {
		t.Fatalf("forwarded %s", s.Path)
	}
}

func TestDotSegmentsAreRefused(t *testing.T) {
	up, n := echo(t)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL + "/v1"})
	h := inPipeline(p, nil)
	for _, target := range []string{
		"/api/v2/svc/../secret",
		"/api/v2/svc/a/%2e%2e/%2E%2E/secret",
		"/api/v2/svc/a/..%2F..%2Fsecret",
		"/api/v2/svc/a/..%5Csecret",
		"/api/v2/svc/./x",
	} {
		t.Run(target, func(t *testing.T) {
			r := do(t, h, "GET", target, nil, nil)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			r.envelope(t)
		})
	}
	if n.Load() != 0 {
		t.Fatalf("upstream saw %d requests", n.Load())
	}
}

func TestHeadersAndCredentials(t *testing.T) {
	up, _ := echo(t)
	client := map[string]string{
		"X-Platform-API-Key":           "platform-key",
		"X-Platform-Session-Token":     "platform-session",
		"X-DreamFactory-API-Key":       "df-key",
		"X-DreamFactory-Session-Token": "df-session",
		"Authorization":                "Bearer platform-jwt",
		"Cookie":                       "sid=1",
		"X-HTTP-Method":                "DELETE",
		"X-Forwarded-For":              "6.6.6.6",
		"X-Forwarded-Host":             "evil.example",
		"Forwarded":                    "for=6.6.6.6",
		"X-User-Email":                 "spoofed@example.com",
		"Connection":                   "X-Hop",
		"X-Hop":                        "hop",
		"Accept":                       "application/json",
		"Host":                         "gateway.example",
	}
	t.Run("default", func(t *testing.T) {
		p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
		s := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/x", nil, client).seen(t)
		for _, h := range []string{"X-Platform-Api-Key", "X-Platform-Session-Token", "X-Dreamfactory-Api-Key",
			"X-Dreamfactory-Session-Token", "Authorization", "Cookie", "X-Http-Method", "Forwarded", "X-Hop"} {
			if v, ok := s.Header[h]; ok {
				t.Errorf("%s forwarded: %q", h, v)
			}
		}
		if got := s.Header["X-Forwarded-For"]; len(got) != 1 || got[0] != "127.0.0.1" {
			t.Errorf("X-Forwarded-For = %q, want the client's address only", got)
		}
		if got := s.Header["X-Forwarded-Host"]; len(got) != 1 || got[0] != "gateway.example" {
			t.Errorf("X-Forwarded-Host = %q", got)
		}
		if got := s.Header["X-Forwarded-Proto"]; len(got) != 1 || got[0] != "http" {
			t.Errorf("X-Forwarded-Proto = %q", got)
		}
		if got := s.Header["Accept"]; len(got) != 1 || got[0] != "application/json" {
			t.Errorf("Accept = %q", got)
		}
		if got := s.Header["X-User-Email"]; len(got) != 1 {
			t.Errorf("an unconfigured client header is forwarded, got %q", got)
		}
	})
	t.Run("pass from client", func(t *testing.T) {
		p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL, Headers: []rws.Header{
			{Name: "Authorization", PassFromClient: true},
			{Name: "Cookie", PassFromClient: true},
		}})
		s := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/x", nil, client).seen(t)
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Bearer platform-jwt" {
			t.Errorf("Authorization = %q", got)
		}
		if got := s.Header["Cookie"]; len(got) != 1 || got[0] != "sid=1" {
			t.Errorf("Cookie = %q", got)
		}
	})
	t.Run("platform session bearer never passes", func(t *testing.T) {
		p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL, Headers: []rws.Header{
			{Name: "Authorization", PassFromClient: true, Value: "Basic fallback"},
		}})
		id := &caller.Identity{AppID: 1, UserID: 7, SessionID: "sess-7"}
		// The session came in as the bearer (no other session header).
		hdr := map[string]string{"Authorization": "Bearer opaque"}
		s := do(t, inPipeline(p, id), "GET", "/api/v2/svc/x", nil, hdr).seen(t)
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Basic fallback" {
			t.Errorf("Authorization = %q, want the configured fallback", got)
		}
		// A JWT whose jti is the session, even with the session header.
		jwt := "eyJhbGciOiJIUzI1NiJ9." + b64(`{"jti":"sess-7","sub":"7"}`) + ".sig"
		hdr = map[string]string{"Authorization": "Bearer " + jwt, "X-Platform-Session-Token": jwt}
		s = do(t, inPipeline(p, id), "GET", "/api/v2/svc/x", nil, hdr).seen(t)
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Basic fallback" {
			t.Errorf("Authorization = %q, want the configured fallback", got)
		}
		// The upstream's own token, with the session in its own header.
		hdr = map[string]string{"Authorization": "Bearer upstream-token", "X-Platform-Session-Token": jwt}
		s = do(t, inPipeline(p, id), "GET", "/api/v2/svc/x", nil, hdr).seen(t)
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Bearer upstream-token" {
			t.Errorf("Authorization = %q, want the client's upstream token", got)
		}
	})
	t.Run("base url userinfo", func(t *testing.T) {
		u, _ := url.Parse(up.URL)
		u.User = url.UserPassword("svc", "s3cret")
		p := newProxy(t, rws.Config{Name: "svc", BaseURL: u.String()})
		s := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/x", nil, client).seen(t)
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Basic c3ZjOnMzY3JldA==" {
			t.Errorf("Authorization = %q", got)
		}
	})
}

func TestInjectionWithLookups(t *testing.T) {
	up, _ := echo(t)
	named := map[string]string{"tenant": "acme", "upstream_token": "tok-123", "user.email": "named-loses"}
	p := newProxy(t, rws.Config{
		Name: "svc", BaseURL: up.URL, Version: "9.9.9",
		Lookups: func(*http.Request) map[string]string { return named },
		Headers: []rws.Header{
			{Name: "X-User-Email", Value: "{user.email}"},
			{Name: "X-User", Value: "{user.id}:{strtoupper(role.name)}"},
			{Name: "X-App", Value: "app-{app.id}-{app.name}"},
			{Name: "X-Tenant", Value: "{tenant}"},
			{Name: "Authorization", Value: "Bearer {upstream_token}"},
			{Name: "X-Write-Only", Value: "w", Verbs: rws.VerbPost | rws.VerbPut},
			{Name: "X-Missing", Value: "{nosuch}"},
			{Name: "X-Version", Value: "{df.version}"},
			{Name: "Host", Value: "virtual.example"},
		},
		Parameters: []rws.Parameter{
			{Name: "tenant", Value: "{tenant}"},
			{Name: "email", Value: "{user.email}"},
			{Name: "flag", Value: ""},
			{Name: "internal", Exclude: true},
			{Name: "get_only", Value: "1", Verbs: rws.VerbGet},
		},
	})
	user := &caller.Identity{AppID: 3, AppName: "web", RoleID: 4, RoleName: "staff", UserID: 7, UserEmail: "ann@example.com", UserName: "Ann"}
	client := map[string]string{"X-User-Email": "spoofed@example.com", "X-Missing": "client"}

	t.Run("signed in", func(t *testing.T) {
		s := do(t, inPipeline(p, user), "GET", "/api/v2/svc/x?tenant=evil&internal=1&keep=1&EMAIL=x", nil, client).seen(t)
		want := map[string]string{
			"X-User-Email": "ann@example.com", "X-User": "7:STAFF", "X-App": "app-3-web", "X-Tenant": "acme",
			"Authorization": "Bearer tok-123", "X-Version": "9.9.9",
		}
		for k, v := range want {
			if got := s.Header[k]; len(got) != 1 || got[0] != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		for _, k := range []string{"X-Write-Only", "X-Missing"} {
			if got, ok := s.Header[k]; ok {
				t.Errorf("%s sent: %q", k, got)
			}
		}
		if s.Host != "virtual.example" {
			t.Errorf("Host = %q", s.Host)
		}
		if want := "keep=1&tenant=acme&email=ann%40example.com&flag&get_only=1"; s.Query != want {
			t.Errorf("query = %q, want %q", s.Query, want)
		}
	})
	t.Run("api key only", func(t *testing.T) {
		keyOnly := &caller.Identity{AppID: 3, AppName: "web", RoleID: 4, RoleName: "staff"}
		s := do(t, inPipeline(p, keyOnly), "POST", "/api/v2/svc/x", strings.NewReader("{}"), client).seen(t)
		if got, ok := s.Header["X-User-Email"]; ok {
			t.Errorf("X-User-Email sent without a user: %q", got)
		}
		if got, ok := s.Header["X-User"]; ok {
			t.Errorf("X-User sent without a user: %q", got)
		}
		if got := s.Header["X-Write-Only"]; len(got) != 1 {
			t.Errorf("X-Write-Only = %q on POST", got)
		}
		if want := "tenant=acme&flag"; s.Query != want {
			t.Errorf("query = %q, want %q", s.Query, want)
		}
	})
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestStatusPassThrough(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/teapot":
			w.Header().Set("X-Upstream", "yes")
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "short and stout")
		case "/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"upstream":"not found"}`)
		case "/created":
			w.WriteHeader(http.StatusCreated)
		case "/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, "boom")
		}
	}))
	t.Cleanup(up.Close)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	h := inPipeline(p, nil)
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/teapot", 418, "short and stout"},
		{"/missing", 404, `{"upstream":"not found"}`},
		{"/created", 201, ""},
		{"/broken", 500, "boom"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := do(t, h, "GET", "/api/v2/svc"+tc.path, nil, nil)
			if r.status != tc.status || string(r.body) != tc.body {
				t.Fatalf("got %d %q, want %d %q", r.status, r.body, tc.status, tc.body)
			}
		})
	}
	// Redirects are the client's to follow, not the proxy's.
	front := httptest.NewServer(h)
	defer front.Close()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(front.URL + "/api/v2/svc/redirect")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/elsewhere" {
		t.Fatalf("redirect = %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestStreaming(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", r.URL.Query().Get("ct"))
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(up.Close)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	front := httptest.NewServer(inPipeline(p, nil))
	t.Cleanup(front.Close)

	for _, ct := range []string{"text/event-stream", "application/x-ndjson"} {
		t.Run(ct, func(t *testing.T) {
			resp, err := front.Client().Get(front.URL + "/api/v2/svc/events?ct=" + url.QueryEscape(ct))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "data: first\n" {
				t.Fatalf("first chunk = %q, %v", line, err)
			}
			// Only now may the upstream finish.
			release <- struct{}{}
			rest, err := io.ReadAll(br)
			if err != nil || string(rest) != "\ndata: second\n\n" {
				t.Fatalf("rest = %q, %v", rest, err)
			}
		})
	}
}

func TestRequestBodyIsStreamed(t *testing.T) {
	got := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		br := bufio.NewReader(r.Body)
		line, _ := br.ReadString('\n')
		got <- line
		_, _ = io.Copy(io.Discard, br)
	}))
	t.Cleanup(up.Close)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	front := httptest.NewServer(inPipeline(p, nil))
	t.Cleanup(front.Close)

	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", front.URL+"/api/v2/svc/upload", pr)
		resp, err := front.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	_, _ = io.WriteString(pw, "first line\n")
	// The upstream sees the first line while the client is still sending.
	if line := <-got; line != "first line\n" {
		t.Fatalf("upstream read %q", line)
	}
	_, _ = io.WriteString(pw, "more\n")
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestUpstreamFailures(t *testing.T) {
	// A port with nothing listening.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()

	// An upstream that answers with something that is not HTTP.
	garbage := listen(t, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 1024))
		_, _ = io.WriteString(c, "this is not HTTP\r\n\r\n")
	})
	// An upstream that closes the connection without answering.
	hangup := listen(t, func(c net.Conn) { _, _ = c.Read(make([]byte, 1024)) })

	// An upstream that does not answer until the test ends.
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stop); slow.Close() })

	// An upstream that starts a body and stalls.
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stall.Close)

	tests := []struct {
		name    string
		base    string
		timeout time.Duration
		status  int
		message string
	}{
		{"refused", closed, 0, 503, "unreachable"},
		{"garbage", garbage, 0, 502, "valid HTTP response"},
		{"hang up", hangup, 0, 502, "valid HTTP response"},
		{"timeout", slow.URL, 200 * time.Millisecond, 504, "did not answer within 200ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, rws.Config{Name: "svc", BaseURL: tc.base, Timeout: tc.timeout})
			r := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/x", nil, nil)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if _, msg := r.envelope(t); !strings.Contains(msg, tc.message) || !strings.Contains(msg, "'svc'") {
				t.Fatalf("message %q, want it to name the service and contain %q", msg, tc.message)
			}
		})
	}
	t.Run("timeout while streaming aborts", func(t *testing.T) {
		p := newProxy(t, rws.Config{Name: "svc", BaseURL: stall.URL, Timeout: 200 * time.Millisecond})
		front := httptest.NewServer(inPipeline(p, nil))
		defer front.Close()
		resp, err := front.Client().Get(front.URL + "/api/v2/svc/x")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Fatalf("a timed-out stream must end in an error, got complete body %q", body)
		}
		if string(body) != "partial" {
			t.Fatalf("body %q", body)
		}
	})
}

// listen serves raw TCP connections with fn and returns the URL.
func listen(t *testing.T, fn func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				fn(c)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

func TestUpstreamAllow(t *testing.T) {
	up, n := echo(t)
	port := up.URL[strings.LastIndex(up.URL, ":"):]
	tests := []struct {
		name   string
		base   string
		allow  []string
		status int
	}{
		{"no list", up.URL, nil, 200},
		{"loopback CIDR", up.URL, []string{"127.0.0.0/8"}, 200},
		{"exact IP", up.URL, []string{"127.0.0.1"}, 200},
		{"other network", up.URL, []string{"10.0.0.0/8", "api.example.com"}, 502},
		{"named host", "http://localhost" + port, []string{"localhost"}, 200},
		{"host resolving outside", "http://localhost" + port, []string{"10.0.0.0/8"}, 502},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := n.Load()
			p := newProxy(t, rws.Config{Name: "svc", BaseURL: tc.base, UpstreamAllow: tc.allow})
			r := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/x", nil, nil)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.status == 502 {
				if _, msg := r.envelope(t); !strings.Contains(msg, "allow list") || strings.Contains(msg, "127.0.0.1") {
					t.Fatalf("message %q", msg)
				}
				if n.Load() != before {
					t.Fatal("the upstream was reached")
				}
			}
		})
	}
	if _, err := rws.New(rws.Config{BaseURL: up.URL, UpstreamAllow: []string{"not a host!"}}); err == nil {
		t.Fatal("a bad allow entry must be refused")
	}
}

// clock is a settable clock for cache expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestCaching(t *testing.T) {
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := n.Add(1)
		switch r.URL.Path {
		case "/cookie":
			http.SetCookie(w, &http.Cookie{Name: "a", Value: "b"})
		case "/nostore":
			w.Header().Set("Cache-Control", "no-store")
		case "/vary":
			w.Header().Set("Vary", "X-Custom")
		case "/notfound":
			w.WriteHeader(http.StatusNotFound)
		case "/big":
			_, _ = io.WriteString(w, strings.Repeat("x", 4096))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, r.Header.Get("X-Who")+"|"+r.URL.RawQuery+"|"+string(rune('0'+c%10)))
	}))
	t.Cleanup(up.Close)
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := newProxy(t, rws.Config{
		Name: "svc", BaseURL: up.URL, CacheEnabled: true, CacheTTL: time.Minute, Now: clk.Now,
		CacheMaxEntryBytes: 1024,
		Headers:            []rws.Header{{Name: "X-Who", Value: "{user.email}"}},
		Parameters:         []rws.Parameter{{Name: "_", Exclude: true, NotOutbound: true}},
	})
	ann := &caller.Identity{RoleID: 1, UserID: 1, UserEmail: "ann@example.com"}
	bob := &caller.Identity{RoleID: 1, UserID: 2, UserEmail: "bob@example.com"}
	keyOnly1 := &caller.Identity{AppID: 1, RoleID: 1}
	keyOnly1b := &caller.Identity{AppID: 2, RoleID: 1}
	keyOnly2 := &caller.Identity{AppID: 1, RoleID: 2}

	get := func(t *testing.T, id *caller.Identity, target string, hdr map[string]string) result {
		t.Helper()
		return do(t, inPipeline(p, id), "GET", "/api/v2/svc"+target, nil, hdr)
	}
	expectHits := func(t *testing.T, want int64) {
		t.Helper()
		if got := n.Load(); got != want {
			t.Fatalf("upstream requests = %d, want %d", got, want)
		}
	}

	r1 := get(t, ann, "/a?x=1", nil)
	r2 := get(t, ann, "/a?x=1", nil)
	expectHits(t, 1)
	if string(r1.body) != string(r2.body) || r1.header.Get("X-Cache") != "MISS" || r2.header.Get("X-Cache") != "HIT" {
		t.Fatalf("miss %q %q, hit %q %q", r1.body, r1.header.Get("X-Cache"), r2.body, r2.header.Get("X-Cache"))
	}
	if r2.header.Get("Content-Type") != "text/plain" {
		t.Fatalf("cached headers lost: %v", r2.header)
	}

	t.Run("cache buster excluded from the key", func(t *testing.T) {
		before := n.Load()
		get(t, ann, "/a?x=1&_=123", nil)
		expectHits(t, before)
	})
	t.Run("different injected values do not share", func(t *testing.T) {
		before := n.Load()
		r := get(t, bob, "/a?x=1", nil)
		expectHits(t, before+1)
		if !strings.HasPrefix(string(r.body), "bob@example.com|") {
			t.Fatalf("bob got %q", r.body)
		}
	})
	t.Run("roles do not share", func(t *testing.T) {
		before := n.Load()
		get(t, keyOnly1, "/k", nil)
		get(t, keyOnly1b, "/k", nil) // same role, nothing injected: shared
		expectHits(t, before+1)
		get(t, keyOnly2, "/k", nil)
		expectHits(t, before+2)
	})
	t.Run("query and negotiation vary the key", func(t *testing.T) {
		before := n.Load()
		get(t, ann, "/a?x=2", nil)
		get(t, ann, "/a?x=1", map[string]string{"Accept-Encoding": "br"})
		expectHits(t, before+2)
	})
	t.Run("no-cache skips the lookup", func(t *testing.T) {
		before := n.Load()
		get(t, ann, "/a?x=1", map[string]string{"Cache-Control": "no-cache"})
		expectHits(t, before+1)
	})
	t.Run("not stored", func(t *testing.T) {
		for _, path := range []string{"/cookie", "/nostore", "/vary", "/notfound", "/big"} {
			before := n.Load()
			get(t, ann, path, nil)
			get(t, ann, path, nil)
			if got := n.Load(); got != before+2 {
				t.Errorf("%s was cached", path)
			}
		}
	})
	t.Run("other verbs are not cached", func(t *testing.T) {
		before := n.Load()
		do(t, inPipeline(p, ann), "POST", "/api/v2/svc/a?x=1", strings.NewReader("{}"), nil)
		do(t, inPipeline(p, ann), "POST", "/api/v2/svc/a?x=1", strings.NewReader("{}"), nil)
		expectHits(t, before+2)
	})
	t.Run("ttl", func(t *testing.T) {
		before := n.Load()
		get(t, ann, "/ttl", nil)
		clk.Add(59 * time.Second)
		r := get(t, ann, "/ttl", nil)
		expectHits(t, before+1)
		if r.header.Get("Age") != "59" {
			t.Fatalf("Age = %q", r.header.Get("Age"))
		}
		clk.Add(time.Second)
		get(t, ann, "/ttl", nil)
		expectHits(t, before+2)
	})
	t.Run("flush", func(t *testing.T) {
		before := n.Load()
		get(t, ann, "/f", nil)
		get(t, ann, "/f", nil)
		expectHits(t, before+1)
		if err := p.FlushCache(context.Background()); err != nil {
			t.Fatal(err)
		}
		get(t, ann, "/f", nil)
		expectHits(t, before+2)
	})
}

func TestPipelineHeadersWin(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "X-Upstream")
		w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id")+"-echo")
		w.Header().Set("X-RateLimit-Limit", "1000")
		w.Header().Set("X-Upstream", "1")
	}))
	t.Cleanup(up.Close)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL, CacheEnabled: true})
	// What the request id, CORS and rate-limit stages do before a backend.
	stages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-1")
		w.Header().Set("Access-Control-Allow-Origin", "https://app.example")
		w.Header().Set("X-RateLimit-Limit", "10")
		inPipeline(p, nil).ServeHTTP(w, r)
	})
	for _, want := range []string{"MISS", "HIT"} {
		r := do(t, stages, "GET", "/api/v2/svc/x", nil, map[string]string{"X-Request-Id": "client-chosen"})
		if got := r.header.Get("X-Cache"); got != want {
			t.Fatalf("X-Cache = %q, want %q", got, want)
		}
		for k, v := range map[string]string{
			"Access-Control-Allow-Origin": "https://app.example", "X-Ratelimit-Limit": "10",
			"X-Request-Id": "req-1", "X-Upstream": "1",
		} {
			if got := r.header.Values(k); len(got) != 1 || got[0] != v {
				t.Errorf("%s: %s = %q, want %q", want, k, got, v)
			}
		}
		if got := r.header.Values("Access-Control-Expose-Headers"); len(got) != 0 {
			t.Errorf("%s: the upstream's CORS headers mixed in: %q", want, got)
		}
	}
	r := do(t, inPipeline(p, nil), "GET", "/api/v2/svc/other", nil, nil)
	if got := r.header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != "*" {
		t.Fatalf("without a CORS stage the upstream's header passes: %q", got)
	}
}

func TestRequestIDForwarded(t *testing.T) {
	up, _ := echo(t)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	stages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-7")
		inPipeline(p, nil).ServeHTTP(w, r)
	})
	s := do(t, stages, "GET", "/api/v2/svc/x", nil, map[string]string{"X-Request-Id": "spoofed"}).seen(t)
	if got := s.Header["X-Request-Id"]; len(got) != 1 || got[0] != "req-7" {
		t.Fatalf("X-Request-Id = %q", got)
	}
}

func TestRequestBodyCap(t *testing.T) {
	up, _ := echo(t)
	p := newProxy(t, rws.Config{Name: "svc", BaseURL: up.URL})
	capped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 10)
		inPipeline(p, nil).ServeHTTP(w, r)
	})
	// Chunked, so the cap strikes while streaming.
	front := httptest.NewServer(capped)
	defer front.Close()
	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, strings.Repeat("y", 100)); pw.Close() }()
	req, _ := http.NewRequest("POST", front.URL+"/api/v2/svc/x", pr)
	resp, err := front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
