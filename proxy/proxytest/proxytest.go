package proxytest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Admin credentials every instance is seeded with.
const (
	AdminEmail    = "admin@example.com"
	AdminPassword = "admin-password-1"
)

// Instance is a running Portcullis for one test.
type Instance struct {
	*httptest.Server
	Proxy    *proxy.Server
	Store    *store.Store
	Config   proxy.Config
	AdminKey string
}

// Start seeds a system store on sys (use dbtest.Fresh or dbtest.Each) and
// serves it until the test ends. adjust, when set, may change the Config.
func Start(t testing.TB, sys dialects.Config, adjust func(*proxy.Config), opts ...proxy.Option) *Instance {
	t.Helper()
	// Full-cost bcrypt makes every sign-in and password change take a
	// second under the race detector; tests do not need it.
	_ = store.SetPasswordCost(bcrypt.MinCost)
	ctx := t.Context()
	st, err := store.OpenConfig(ctx, sys)
	if err != nil {
		t.Fatalf("proxytest: open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := proxy.Config{
		DataDir:        t.TempDir(),
		Store:          st,
		ReloadInterval: 100 * time.Millisecond,
		Logger:         Logger(t),
	}
	if adjust != nil {
		adjust(&cfg)
	}
	res, err := proxy.Init(ctx, cfg, store.InitOptions{Email: AdminEmail, Password: AdminPassword, Name: "Test Admin"})
	if err != nil {
		t.Fatalf("proxytest: init: %v", err)
	}
	srv, err := proxy.New(ctx, cfg, opts...)
	if err != nil {
		t.Fatalf("proxytest: new: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return &Instance{Server: hs, Proxy: srv, Store: st, Config: cfg, AdminKey: res.AdminAPIKey}
}

// StartSQLite is Start on a fresh SQLite system database.
func StartSQLite(t testing.TB, opts ...proxy.Option) *Instance {
	t.Helper()
	return Start(t, dbtest.Fresh(t, dialects.SQLite), nil, opts...)
}

// Logger returns a logger that writes through t.Log when -v is given and
// discards otherwise, keeping test output readable.
func Logger(t testing.TB) *slog.Logger {
	if testing.Verbose() && os.Getenv("PORTCULLIS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// Response is a decoded API response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("proxytest: decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Client calls an Instance with fixed credentials.
type Client struct {
	Inst    *Instance
	APIKey  string
	Session string
	Header  http.Header
}

// API returns a client using the admin app's key and no session.
func (in *Instance) API() *Client { return &Client{Inst: in, APIKey: in.AdminKey} }

// Do sends method path (relative to the server, e.g. "/api/v2/system/app")
// with body (nil, a []byte, a string or a value to encode as JSON).
func (c *Client) Do(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("proxytest: encode body: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, c.Inst.URL+path, rd)
	if err != nil {
		t.Fatalf("proxytest: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIKey != "" {
		req.Header.Set("X-Platform-API-Key", c.APIKey)
	}
	if c.Session != "" {
		req.Header.Set("X-Platform-Session-Token", c.Session)
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	resp, err := c.Inst.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("proxytest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("proxytest: read %s %s: %v", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// SQLiteService returns a JSON config for a sqlite service whose file is in
// a fresh temporary folder.
func SQLiteService(t testing.TB) string {
	path := filepath.Join(t.TempDir(), "data.sqlite")
	b, _ := json.Marshal(map[string]string{"database": path})
	return string(b)
}
