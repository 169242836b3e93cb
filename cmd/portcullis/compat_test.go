package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dfAdminKey is the API key DreamFactory seeds for its admin app, which
// DreamFactory's own clients (the admin UI, samples) carry built in.
const dfAdminKey = "6498a8ad1beb9d84d63035c5d1120c007fad6de706734db9689f8996707e0f7d"

// dfClient calls a server the way a DreamFactory client does: vendor
// header names, the session token alone once signed in.
type dfClient struct {
	t     *testing.T
	base  string
	key   string
	token string
}

func (c *dfClient) do(method, path, contentType string, body []byte) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.key != "" {
		req.Header.Set("X-DreamFactory-API-Key", c.key)
	}
	if c.token != "" {
		req.Header.Set("X-DreamFactory-Session-Token", c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m
}

// must calls with a JSON body and fails unless the status is want.
func (c *dfClient) must(want int, method, path string, body any) map[string]any {
	c.t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	status, m := c.do(method, path, "application/json", b)
	if status != want {
		c.t.Fatalf("%s %s = %d %v, want %d", method, path, status, m, want)
	}
	return m
}

func count(t *testing.T, c *dfClient, path string) float64 {
	t.Helper()
	m := c.must(200, "GET", path+"?count_only=true", nil)
	n, _ := m["meta"].(map[string]any)["count"].(float64)
	return n
}

// TestBinaryDreamFactoryMigration drives the binary as a user moving from
// DreamFactory would: init with DreamFactory's built-in admin key, serve
// --compat dreamfactory, vendor header names, a form-encoded admin login
// without a key, system calls with the token alone, open registration and
// data access on the very next request, and a nested create with
// rollback=true.
func TestBinaryDreamFactoryMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "portcullis")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := filepath.Join(t.TempDir(), "data")
	out, err := exec.Command(bin, "init", "--data", data, "--email", "admin@example.com", "--password", "passwordpassword",
		"--admin-api-key", dfAdminKey).Output()
	if err != nil || strings.TrimSpace(string(out)) != dfAdminKey {
		t.Fatalf("init --admin-api-key printed %q (%v)", out, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr, "--compat", "dreamfactory")
	srv.Env = append(os.Environ(), "PORTCULLIS_LOG_LEVEL=warn")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not become healthy: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	base := "http://" + addr + "/api/v2"

	// The admin UI reads the environment with its built-in key.
	ui := &dfClient{t: t, base: base, key: dfAdminKey}
	ui.must(200, "GET", "/system/environment", nil)
	// With that key alone, system resources ask for a session (401), so a
	// client shows its login form.
	if status, m := ui.do("GET", "/system/service", "", nil); status != 401 || !strings.Contains(jsonText(m), "session token") {
		t.Fatalf("key alone on system = %d %v, want 401 asking for a session token", status, m)
	}

	// A form-encoded login with no key.
	anon := &dfClient{t: t, base: base}
	status, m := anon.do("POST", "/system/admin/session", "application/x-www-form-urlencoded",
		[]byte(url.Values{"email": {"admin@example.com"}, "password": {"passwordpassword"}}.Encode()))
	tok, _ := m["session_token"].(string)
	if status != 200 || tok == "" || m["is_sys_admin"] != true {
		t.Fatalf("keyless form login = %d %v", status, m)
	}

	// System calls with the token alone.
	adm := &dfClient{t: t, base: base, token: tok}
	adm.must(200, "GET", "/system/service", nil)
	list := adm.must(200, "GET", "", nil)
	if !strings.Contains(jsonText(list), `"name":"system"`) {
		t.Fatalf("GET /api/v2 as admin = %v", list)
	}
	svc := adm.must(201, "POST", "/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "books", "label": "Books", "type": "sqlite", "config": map[string]any{"database": filepath.Join(data, "books.sqlite")}}}})
	svcID := svc["resource"].([]any)[0].(map[string]any)["id"]
	adm.must(200, "POST", "/books/_schema", map[string]any{"resource": []any{
		map[string]any{"name": "author", "field": []any{
			map[string]any{"name": "id", "type": "id"},
			map[string]any{"name": "name", "type": "string", "size": 80, "allow_null": false}}},
		map[string]any{"name": "book", "field": []any{
			map[string]any{"name": "id", "type": "id"},
			map[string]any{"name": "title", "type": "string", "allow_null": false, "label": "Title"},
			map[string]any{"name": "author_id", "type": "reference", "ref_table": "author", "ref_fields": "id"}}},
	}})
	role := adm.must(201, "POST", "/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "readers", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": svcID, "component": "_table/*", "verb_mask": 31, "requestor_mask": 1}}}}})
	roleID := role["resource"].([]any)[0].(map[string]any)["id"]
	users := adm.must(200, "GET", "/system/service?filter=name%3Duser&fields=id", nil)
	userSvc := users["resource"].([]any)[0].(map[string]any)["id"]
	adm.must(200, "PATCH", "/system/service/"+jsonText(userSvc), map[string]any{
		"config": map[string]any{"allow_open_registration": true, "open_reg_role_id": roleID}})

	// Registration without a key, then data access on the very next request.
	reg := anon.must(200, "POST", "/user/register?login=true", map[string]any{
		"email": "reader@example.com", "password": "reader-password", "first_name": "Rea"})
	userTok, _ := reg["session_token"].(string)
	if userTok == "" {
		t.Fatalf("register?login=true = %v", reg)
	}
	usr := &dfClient{t: t, base: base, token: userTok}
	usr.must(200, "GET", "/books/_table/book", nil)

	// A nested create: authors with their books, in one transaction.
	created := usr.must(200, "POST", "/books/_table/author?rollback=true&related=book_by_author_id", map[string]any{"resource": []any{
		map[string]any{"name": "Le Guin", "book_by_author_id": []any{map[string]any{"title": "The Dispossessed"}, map[string]any{"title": "Earthsea"}}},
		map[string]any{"name": "Lem", "book_by_author_id": []any{map[string]any{"title": "Solaris"}}},
	}})
	if n := count(t, usr, "/books/_table/book"); n != 3 {
		t.Fatalf("nested create wrote %v books (%v), want 3", n, created)
	}
	// A batch whose second record's child is invalid: nothing stays.
	if status, m := usr.do("POST", "/books/_table/author?rollback=true", "application/json", []byte(`{"resource":[
		{"name":"Herbert","book_by_author_id":[{"title":"Dune"}]},
		{"name":"Nobody","book_by_author_id":[{"title":null}]}]}`)); status < 400 {
		t.Fatalf("failing nested batch = %d %v", status, m)
	}
	if a, b := count(t, usr, "/books/_table/author"), count(t, usr, "/books/_table/book"); a != 2 || b != 3 {
		t.Fatalf("after the rolled-back batch: %v authors, %v books; want 2 and 3", a, b)
	}
	// The user is no administrator.
	if status, _ := usr.do("GET", "/system/service", "", nil); status != 403 {
		t.Fatalf("registered user on system = %d, want 403", status)
	}

	if err := srv.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve exited with %v after SIGINT", err)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
