package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/mcp"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// headerLog records the headers and queries the upstream received.
type headerLog struct {
	mu      sync.Mutex
	headers []http.Header
	queries []string
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.headers = append(l.headers, r.Header.Clone())
		l.queries = append(l.queries, r.URL.RawQuery)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// check fails unless every recorded request carried the configured header
// with its lookup resolved and none carried a platform credential.
func (l *headerLog) check(t *testing.T, key string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.headers) == 0 {
		t.Fatal("the upstream received no request")
	}
	for i, h := range l.headers {
		if got := h.Get("X-Upstream-Token"); got != "secret" {
			t.Errorf("request %d: X-Upstream-Token = %q, want the configured value", i, got)
		}
		if got := h.Get("X-Caller"); got != proxytest.AdminEmail {
			t.Errorf("request %d: X-Caller = %q, want the {user.email} lookup %q", i, got, proxytest.AdminEmail)
		}
		for k, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, key) || strings.HasPrefix(strings.ToLower(k), "x-platform") || k == "Authorization" {
					t.Errorf("request %d: header %s: %s reached the upstream", i, k, v)
				}
			}
		}
		if strings.Contains(l.queries[i], key) || strings.Contains(l.queries[i], "api_key") {
			t.Errorf("request %d: query %q carries the platform key", i, l.queries[i])
		}
	}
}

// echoServer is the remote MCP server: one tool, echo.
func echoServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	type in struct {
		Text  string `json:"text"`
		Token string `json:"token,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	// fail answers a tool error carrying an error envelope, as the
	// services form does.
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fails."}, func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: `{"error":{"code":409,"message":"taken"}}`}}}, nil, nil
	})
	// records answers a services-form-like body with two records.
	sdk.AddTool(s, &sdk.Tool{Name: "records", Description: "Two records."}, func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"resource":[{"id":1},{"id":2}]}`}}}, nil, nil
	})
	return s
}

func remoteConfig(url string, extra map[string]any) map[string]any {
	cfg := map[string]any{"url": url, "headers": []any{
		map[string]any{"name": "X-Upstream-Token", "value": "secret"},
		map[string]any{"name": "X-Caller", "value": "{user.email}"},
	}}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// TestRemoteForm proxies remote MCP servers built with the SDK, over both
// transports, and drives them through Portcullis with the SDK's client.
func TestRemoteForm(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	// The client sends the key both as a header and in the query.
	keyed := func(u string) string { return u + "?api_key=" + admin.APIKey }
	client := &http.Client{Transport: headerTransport{key: admin.APIKey, session: admin.Session}}

	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return echoServer() }, nil)
	sse := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return echoServer() }, nil)
	// Like many servers, this one takes messages at another path than its
	// event stream: /v1/messages.
	sseElsewhere := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w = renamingWriter{w}
		}
		sse.ServeHTTP(w, r)
	})
	sessionOnly := &http.Client{Transport: headerTransport{session: admin.Session}}
	audit := followAudit(t, in, admin)
	for _, tc := range []struct {
		name, service, path string
		upstream            http.Handler
		transport           func(endpoint string) sdk.Transport
	}{
		{"streamable HTTP", "remote_http", "/mcp", streamable, func(e string) sdk.Transport {
			return &sdk.StreamableClientTransport{Endpoint: e, HTTPClient: client, MaxRetries: -1}
		}},
		{"HTTP+SSE", "remote_sse", "/sse", sse, func(e string) sdk.Transport {
			return &sdk.SSEClientTransport{Endpoint: e, HTTPClient: client}
		}},
		{"HTTP+SSE, messages elsewhere, key in the URL only", "remote_sse2", "/v1/events", sseElsewhere, func(e string) sdk.Transport {
			return &sdk.SSEClientTransport{Endpoint: e, HTTPClient: sessionOnly}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log headerLog
			up := httptest.NewServer(log.wrap(tc.upstream))
			defer up.Close()
			create(t, admin, "service", map[string]any{"name": tc.service, "label": tc.name, "type": "mcp", "config": remoteConfig(up.URL+tc.path, nil)})
			s, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
				tc.transport(keyed(in.URL+"/api/v2/"+tc.service)), nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			checkEcho(t, s)
			checkRemoteAudit(t, s, audit, tc.service, "admin")
			log.check(t, admin.APIKey)
		})
	}

	t.Run("paths below the service are refused unless announced", func(t *testing.T) {
		must(t, admin, http.StatusNotFound, "POST", "/api/v2/remote_sse/other", map[string]any{})
		must(t, admin, http.StatusNotFound, "POST", "/api/v2/remote_sse/v1/events", map[string]any{})
	})

	t.Run("service_type lists mcp with both forms' keys", func(t *testing.T) {
		var out struct {
			Resource []struct {
				Name         string `json:"name"`
				ConfigSchema []struct {
					Name string `json:"name"`
				} `json:"config_schema"`
			} `json:"resource"`
		}
		must(t, admin, http.StatusOK, "GET", "/api/v2/system/service_type", nil).JSON(t, &out)
		keys := map[string]bool{}
		for _, st := range out.Resource {
			if st.Name == "mcp" {
				for _, f := range st.ConfigSchema {
					keys[f.Name] = true
				}
			}
		}
		if !keys["url"] || !keys["services"] || !keys["headers"] {
			t.Fatalf("mcp config_schema keys = %v", keys)
		}
	})

	t.Run("OpenAPI documents the remote form", func(t *testing.T) {
		var doc struct {
			Paths map[string]map[string]any `json:"paths"`
		}
		must(t, admin, http.StatusOK, "GET", "/api/v2/remote_http/_spec", nil).JSON(t, &doc)
		if doc.Paths["/"]["get"] == nil || doc.Paths["/"]["post"] == nil || doc.Paths["/{path}"]["post"] == nil {
			t.Fatalf("paths = %v", doc.Paths)
		}
	})

	t.Run("no credentials", func(t *testing.T) {
		anon := &proxytest.Client{Inst: in}
		must(t, anon, http.StatusUnauthorized, "POST", "/api/v2/remote_http", map[string]any{})
	})
}

// checkRemoteAudit calls tools of the echo server through the remote
// service svc and checks the audit events they leave (the echo call of
// checkEcho first).
func checkRemoteAudit(t *testing.T, s *sdk.ClientSession, audit <-chan mcp.Event, svc, app string) {
	t.Helper()
	e := nextEvent(t, audit)
	args, _ := json.Marshal(e.Arguments)
	if e.Tool != "echo" || e.MCPService != svc || e.Service != "" || e.Status != 200 || e.App != app || string(args) != `{"text":"hi"}` || e.Time.IsZero() || e.DurationMS <= 0 {
		t.Errorf("audit event of echo: %+v %s", e, args)
	}
	if text, isErr := call(t, s, "echo", map[string]any{"text": "hi", "token": "tok-secret-1"}); isErr || text != "echo: hi" {
		t.Fatalf("echo = %q (error %v)", text, isErr)
	}
	e = nextEvent(t, audit)
	if args, _ := json.Marshal(e.Arguments); strings.Contains(string(args), "tok-secret-1") || !strings.Contains(string(args), mcp.Redacted) {
		t.Errorf("audit event with a secret argument: %s", args)
	}
	if _, isErr := call(t, s, "fail", nil); !isErr {
		t.Fatal("fail did not fail")
	}
	if e := nextEvent(t, audit); e.Tool != "fail" || e.Status != 409 || e.Records != 0 {
		t.Errorf("audit event of a tool error: %+v", e)
	}
	if text, isErr := call(t, s, "records", nil); isErr {
		t.Fatalf("records = %s", text)
	}
	if e := nextEvent(t, audit); e.Tool != "records" || e.Status != 200 || e.Records != 2 {
		t.Errorf("audit event of records: %+v", e)
	}
	if _, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("an unknown tool was called")
	}
	if e := nextEvent(t, audit); e.Tool != "nope" || e.Status < 400 {
		t.Errorf("audit event of an unknown tool: %+v", e)
	}
}

// renamingWriter announces /v1/messages as the message endpoint.
type renamingWriter struct{ http.ResponseWriter }

func (w renamingWriter) Write(p []byte) (int, error) {
	_, err := w.ResponseWriter.Write([]byte(strings.Replace(string(p), "data: /v1/events?", "data: /v1/messages?", 1)))
	return len(p), err
}

func (w renamingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func checkEcho(t *testing.T, s *sdk.ClientSession) {
	t.Helper()
	tools, err := s.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 3 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools = %+v, %v", tools, err)
	}
	if text, isErr := call(t, s, "echo", map[string]any{"text": "hi"}); isErr || text != "echo: hi" {
		t.Fatalf("echo = %q (error %v)", text, isErr)
	}
}

// TestRemoteStreaming checks that an event stream passes through as it
// arrives: the first event reaches the client while the upstream is still
// holding the stream open.
func TestRemoteStreaming(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("event: message\ndata: {\"first\":true}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Write([]byte("data: {\"last\":true}\n\n"))
	}))
	defer up.Close()
	defer close(release)

	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	create(t, admin, "service", map[string]any{"name": "stream", "label": "Stream", "type": "mcp", "config": map[string]any{"url": up.URL + "/mcp"}})

	req, _ := http.NewRequestWithContext(t.Context(), "GET", in.URL+"/api/v2/stream", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := headerTransport{key: admin.APIKey, session: admin.Session}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "event: message\n" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not arrive while the upstream held the stream open: the stream is buffered")
	}
}

// TestRemoteFailures: a server that is down is 503, a silent one 504, an
// address the allow list forbids 502, all in the envelope; a bad config is
// refused with 400.
func TestRemoteFailures(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.UpstreamAllow = []string{"127.0.0.1/32", "::1/128"}
	})
	admin := in.Admin(t)
	create(t, admin, "service", map[string]any{"name": "down", "label": "Down", "type": "mcp", "config": map[string]any{"url": downURL + "/mcp"}})
	create(t, admin, "service", map[string]any{"name": "slow", "label": "Slow", "type": "mcp", "config": map[string]any{"url": slow.URL + "/mcp", "timeout": 0.3}})
	create(t, admin, "service", map[string]any{"name": "far", "label": "Far", "type": "mcp", "config": map[string]any{"url": "http://10.255.255.1:9/mcp"}})

	for _, tc := range []struct {
		svc  string
		want int
	}{{"down", 503}, {"slow", 504}, {"far", 502}} {
		r := must(t, admin, tc.want, "POST", "/api/v2/"+tc.svc, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"})
		if code := envelopeCode(t, string(r.Body)); code != tc.want {
			t.Errorf("%s: envelope code %d", tc.svc, code)
		}
	}

	for _, cfg := range []map[string]any{
		{"url": "ftp://x/mcp"},
		{"url": "http://x/mcp", "services": []string{"db"}},
		{"url": "http://x/mcp", "timeout": -1},
		{"url": "http://x/mcp", "headers": []any{map[string]any{"name": "X-A", "value": "{user.nope}"}}},
	} {
		must(t, admin, http.StatusBadRequest, "POST", "/api/v2/system/service", map[string]any{"resource": []any{
			map[string]any{"name": "bad", "label": "Bad", "type": "mcp", "config": cfg}}})
	}
}

// postRPC posts one JSON-RPC tools/call to path as c and returns the
// status and body.
func postRPC(t *testing.T, in *proxytest.Instance, c *proxytest.Client, path string, id int, tool string, args map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, in.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := headerTransport{key: c.APIKey, session: c.Session}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRemoteAccessLimitsScripts: the remote form behind the pipeline's
// roles, limits and event scripts, on every system database available.
func TestRemoteAccessLimitsScripts(t *testing.T) {
	var log headerLog
	up := httptest.NewServer(log.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return echoServer() },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})))
	defer up.Close()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		admin := in.Admin(t)
		remote := idOf(create(t, admin, "service", map[string]any{"name": "remote", "label": "Remote", "type": "mcp", "config": map[string]any{"url": up.URL + "/mcp"}}))
		const api = policy.RequestorAPI
		inside := idOf(create(t, admin, "role", map[string]any{"name": "inside", "is_active": true,
			"role_service_access_by_role_id": []any{
				map[string]any{"service_id": remote, "component": "", "verb_mask": policy.VerbAll, "requestor_mask": api},
			}}))
		outside := idOf(create(t, admin, "role", map[string]any{"name": "outside", "is_active": true,
			"role_service_access_by_role_id": []any{
				map[string]any{"service_id": remote, "component": "", "verb_mask": policy.VerbGet, "requestor_mask": api},
			}}))
		insider := &proxytest.Client{Inst: in, APIKey: create(t, admin, "app", map[string]any{"name": "insider", "is_active": true, "role_id": inside})["api_key"].(string)}
		outsider := &proxytest.Client{Inst: in, APIKey: create(t, admin, "app", map[string]any{"name": "outsider", "is_active": true, "role_id": outside})["api_key"].(string)}
		audit := followAudit(t, in, admin)

		t.Run("a role without access gets 403 in the envelope", func(t *testing.T) {
			status, body := postRPC(t, in, outsider, "/api/v2/remote", 1, "echo", map[string]any{"text": "x"})
			if status != 403 || envelopeCode(t, body) != 403 {
				t.Fatalf("outsider: %d %s", status, body)
			}
			// A call the pipeline refuses is audited like a forwarded one.
			if e := nextEvent(t, audit); e.Tool != "echo" || e.Status != 403 || e.App != "outsider" || e.MCPService != "remote" || e.User != nil {
				t.Errorf("audit event of the refused call: %+v", e)
			}
			anonymous := &proxytest.Client{Inst: in}
			if status, body := postRPC(t, in, anonymous, "/api/v2/remote", 2, "echo", map[string]any{"text": "x", "password": "p"}); status != 401 {
				t.Fatalf("without a key: %d %s", status, body)
			}
			if e := nextEvent(t, audit); e.Tool != "echo" || e.Status != 401 || e.App != "" || e.Arguments.(map[string]any)["password"] != mcp.Redacted {
				t.Errorf("audit event of the call without a key: %+v", e)
			}
			// A role with access reaches the remote server with the SDK's
			// client, and its calls are audited under its app.
			s := connect(t, in.URL+"/api/v2/remote", insider)
			checkEcho(t, s)
			checkRemoteAudit(t, s, audit, "remote", "insider")
		})

		t.Run("a pre_process script fires on the remote service", func(t *testing.T) {
			must(t, admin, 201, "POST", "/api/v2/system/event_script/remote.post.pre_process", map[string]any{"type": "lua", "is_active": true,
				"allow_event_modification": true, "content": `event.request.headers["x-from-script"] = "lua " .. event.request.payload.method .. " " .. event.request.payload.params.name`})
			if err := in.Proxy.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
			status, body := postRPC(t, in, insider, "/api/v2/remote", 7, "echo", map[string]any{"text": "scripted"})
			if status != 200 || !strings.Contains(body, "echo: scripted") {
				t.Fatalf("call with a script: %d %s", status, body)
			}
			nextEvent(t, audit)
			log.mu.Lock()
			got := log.headers[len(log.headers)-1].Get("X-From-Script")
			log.mu.Unlock()
			if got != "lua tools/call echo" {
				t.Fatalf("the upstream got X-From-Script %q", got)
			}
			must(t, admin, 200, "DELETE", "/api/v2/system/event_script/remote.post.pre_process", nil)
		})

		t.Run("limits count remote calls", func(t *testing.T) {
			must(t, admin, 201, "POST", "/api/v2/system/limit", map[string]any{"resource": []any{map[string]any{
				"name": "remote thrice", "type": "instance.service", "service_id": remote, "rate": 3, "period": "minute", "is_active": true}}})
			if err := in.Proxy.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
			var codes []int
			for i := range 4 {
				status, body := postRPC(t, in, insider, "/api/v2/remote", 10+i, "echo", map[string]any{"text": "n"})
				if status >= 400 && envelopeCode(t, body) != status {
					t.Errorf("%d without its envelope: %s", status, body)
				}
				codes = append(codes, status)
			}
			if fmt.Sprint(codes) != "[200 200 200 429]" {
				t.Errorf("remote calls answered %v", codes)
			}
			for i := range 4 {
				want := map[bool]int{true: 429, false: 200}[i == 3]
				if e := nextEvent(t, audit); e.Tool != "echo" || e.Status != want || e.App != "insider" {
					t.Errorf("audit event %d: %+v, want status %d", i, e, want)
				}
			}
		})
	})
}
