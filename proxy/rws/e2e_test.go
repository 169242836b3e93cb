package rws_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// addService creates an rws service the way the system API does (a row and
// a configuration version bump) and reloads the instance.
func addService(t *testing.T, in *proxytest.Instance, name string, config any) {
	t.Helper()
	data, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	svc := &store.Service{Name: name, Label: name, Type: "rws", IsActive: true, Mutable: true, Deletable: true, Config: string(data)}
	if _, err := in.Store.DB.NewInsert().Model(svc).Exec(ctx); err != nil {
		t.Fatalf("insert service: %v", err)
	}
	touch(t, in)
}

func touch(t *testing.T, in *proxytest.Instance) {
	t.Helper()
	if err := in.Store.Touch(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := in.Proxy.Reload(t.Context()); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

func TestEndToEnd(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		var hits atomic.Int64
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			if r.URL.Path == "/base/events" {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: one\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				return
			}
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
				Header: r.Header, Body: string(body)})
		}))
		t.Cleanup(up.Close)

		in := proxytest.Start(t, sys, nil)
		if _, ok := in.Proxy.Type("rws"); !ok {
			t.Fatal("rws is not a default type")
		}
		lookup := &store.Lookup{Name: "upstream_token", Value: "tok-1", Private: true}
		if _, err := in.Store.DB.NewInsert().Model(lookup).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		addService(t, in, "up", map[string]any{
			"base_url":      up.URL + "/base",
			"headers":       []map[string]any{{"name": "Authorization", "value": "Bearer {upstream_token}", "action": 31}},
			"parameters":    map[string]any{"source": "portcullis"},
			"cache_enabled": true,
			"cache_ttl":     60,
		})
		addService(t, in, "broken", map[string]any{"base_url": "ftp://nowhere"})
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		down := "http://" + l.Addr().String()
		l.Close()
		addService(t, in, "down", map[string]any{"base_url": down})

		c := in.Admin(t)
		c.Header = http.Header{"Cookie": {"portcullis=1"}}

		r := c.Do(t, "POST", "/api/v2/up/items/a%2Fb?api_key="+in.AdminKey+"&x=1&source=client", map[string]int{"n": 1})
		if r.Status != 200 {
			t.Fatalf("POST = %d %s", r.Status, r.Body)
		}
		var s seen
		r.JSON(t, &s)
		if s.Method != "POST" || s.Path != "/base/items/a%2Fb" || s.Query != "x=1&source=portcullis" || s.Body != `{"n":1}` {
			t.Fatalf("upstream saw %+v", s)
		}
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Bearer tok-1" {
			t.Fatalf("Authorization = %q", got)
		}
		for _, h := range []string{"X-Platform-Api-Key", "Cookie"} {
			if _, ok := s.Header[h]; ok {
				t.Fatalf("%s forwarded", h)
			}
		}

		// A changed lookup applies without touching the service.
		lookup.Value = "tok-2"
		if _, err := in.Store.DB.NewUpdate().Model(lookup).WherePK().Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		touch(t, in)
		r = c.Do(t, "GET", "/api/v2/up/items", nil)
		r.JSON(t, &s)
		if got := s.Header["Authorization"]; len(got) != 1 || got[0] != "Bearer tok-2" {
			t.Fatalf("Authorization after the lookup changed = %q", got)
		}

		// Caching, and DELETE /system/cache's hook.
		before := hits.Load()
		if r := c.Do(t, "GET", "/api/v2/up/items", nil); r.Header.Get("X-Cache") != "HIT" {
			t.Fatalf("second GET X-Cache = %q", r.Header.Get("X-Cache"))
		}
		if hits.Load() != before {
			t.Fatal("a cached GET reached the upstream")
		}
		b, ok := in.Proxy.Backend("up")
		if !ok {
			t.Fatal("no backend")
		}
		if err := b.(service.CacheFlusher).FlushCache(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.Do(t, "GET", "/api/v2/up/items", nil)
		if hits.Load() != before+1 {
			t.Fatal("flush did not empty the cache")
		}

		// Streaming through the whole pipeline.
		req, _ := http.NewRequestWithContext(t.Context(), "GET", in.URL+"/api/v2/up/events", nil)
		req.Header.Set("X-Platform-API-Key", in.AdminKey)
		req.Header.Set("X-Platform-Session-Token", c.Session)
		resp, err := in.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close()
		if err != nil || line != "data: one\n" {
			t.Fatalf("first event = %q, %v", line, err)
		}

		// Errors in the envelope.
		r = c.Do(t, "GET", "/api/v2/down/x", nil)
		if r.Status != 503 || !strings.Contains(string(r.Body), `"status_code":503`) {
			t.Fatalf("down = %d %s", r.Status, r.Body)
		}
		r = c.Do(t, "GET", "/api/v2/broken/x", nil)
		if r.Status != 500 || !strings.Contains(string(r.Body), "configuration error") {
			t.Fatalf("broken = %d %s", r.Status, r.Body)
		}
		r = c.Do(t, "GET", "/api/v2/up/a/..%5Csystem", nil)
		if r.Status != 400 {
			t.Fatalf("dot segments = %d %s", r.Status, r.Body)
		}
	})
}

func TestEndToEndAllowList(t *testing.T) {
	up, n := echo(t)
	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.UpstreamAllow = []string{"10.0.0.0/8"}
	})
	addService(t, in, "up", map[string]any{"base_url": up.URL})
	r := in.Admin(t).Do(t, "GET", "/api/v2/up/x", nil)
	if r.Status != 502 || !strings.Contains(string(r.Body), "allow list") || n.Load() != 0 {
		t.Fatalf("allow list = %d %s (upstream hits %d)", r.Status, r.Body, n.Load())
	}
}

// TestEndToEndSignedInUser signs a user in through the user service and
// checks that the session's identity reaches the upstream only as the
// configured headers, never as the platform's credentials.
func TestEndToEndSignedInUser(t *testing.T) {
	up, _ := echo(t)
	in := proxytest.StartSQLite(t)
	ctx := t.Context()
	addService(t, in, "up", map[string]any{
		"base_url": up.URL,
		"headers": []map[string]any{
			{"name": "X-User-Email", "value": "{user.email}"},
			{"name": "X-Role", "value": "{role.name}"},
			{"name": "X-Region", "value": "{region}"},
			{"name": "Authorization", "pass_from_client": true},
		},
	})
	svc := in.Proxy.Snapshot().Service("up")

	// A role with full access to the service, a user bound to it for the
	// admin app, and lookups at several levels.
	role := &store.Role{Name: "staff", IsActive: true}
	if _, err := in.Store.DB.NewInsert().Model(role).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	access := &store.RoleServiceAccess{RoleID: role.ID, ServiceID: &svc.ID, Component: "*", VerbMask: 31, RequestorMask: 3}
	if _, err := in.Store.DB.NewInsert().Model(access).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	hash, err := store.HashPassword("user-password-1")
	if err != nil {
		t.Fatal(err)
	}
	u := &store.User{Name: "Ann", Email: "ann@example.com", Password: hash, IsActive: true}
	if _, err := in.Store.DB.NewInsert().Model(u).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	admin := in.Proxy.Snapshot().AppByKey(in.AdminKey)
	if _, err := in.Store.DB.NewInsert().Model(&store.UserAppRole{UserID: u.ID, AppID: admin.ID, RoleID: role.ID}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*store.Lookup{
		{Name: "region", Value: "global"},
		{Name: "region", Value: "role", RoleID: &role.ID},
		{Name: "region", Value: "user", UserID: &u.ID},
	} {
		if _, err := in.Store.DB.NewInsert().Model(l).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	touch(t, in)

	c := in.API()
	r := c.Do(t, "POST", "/api/v2/user/session", map[string]string{"email": u.Email, "password": "user-password-1"})
	if r.Status != 200 {
		t.Fatalf("login = %d %s", r.Status, r.Body)
	}
	token, _ := r.Map(t)["session_token"].(string)
	if token == "" {
		t.Fatalf("no session token in %s", r.Body)
	}

	check := func(t *testing.T, c *proxytest.Client, wantAuth string) {
		t.Helper()
		r := c.Do(t, "GET", "/api/v2/up/me", nil)
		if r.Status != 200 {
			t.Fatalf("GET = %d %s", r.Status, r.Body)
		}
		var s seen
		r.JSON(t, &s)
		want := map[string]string{"X-User-Email": "ann@example.com", "X-Role": "staff", "X-Region": "user", "Authorization": wantAuth}
		for k, v := range want {
			got := s.Header[k]
			if v == "" && len(got) != 0 {
				t.Errorf("%s = %q, want none", k, got)
			}
			if v != "" && (len(got) != 1 || got[0] != v) {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		for _, h := range []string{"X-Platform-Session-Token", "X-Platform-Api-Key"} {
			if _, ok := s.Header[h]; ok {
				t.Errorf("%s forwarded", h)
			}
		}
		if strings.Contains(string(r.Body), token) {
			t.Error("the session token reached the upstream")
		}
	}
	t.Run("session header", func(t *testing.T) {
		check(t, &proxytest.Client{Inst: in, APIKey: in.AdminKey, Session: token}, "")
	})
	t.Run("session as bearer", func(t *testing.T) {
		check(t, &proxytest.Client{Inst: in, APIKey: in.AdminKey, Header: http.Header{"Authorization": {"Bearer " + token}}}, "")
	})
	t.Run("upstream token beside the session", func(t *testing.T) {
		check(t, &proxytest.Client{Inst: in, APIKey: in.AdminKey, Session: token,
			Header: http.Header{"Authorization": {"Bearer for-the-upstream"}}}, "Bearer for-the-upstream")
	})
}
