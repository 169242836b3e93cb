package proxy_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/files"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestFileServices drives the built-in files and logs services and a
// local_file service created through the system API, with a role that
// reaches one folder read-only.
func TestFileServices(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	expect := func(what string, r *proxytest.Response, status int) *proxytest.Response {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s = %d %s, want %d", what, r.Status, r.Body, status)
		}
		return r
	}

	// The built-in files service is DIR/storage.
	up := &proxytest.Client{Inst: in, APIKey: in.AdminKey, Session: admin.Session, Header: http.Header{"Content-Type": {"text/plain"}}}
	expect("write a file", up.Do(t, http.MethodPost, "/api/v2/files/hello.txt", "hi there"), http.StatusCreated)
	if got, err := os.ReadFile(filepath.Join(in.Config.DataDir, "storage", "hello.txt")); err != nil || string(got) != "hi there" {
		t.Fatalf("file on disk = %q, %v", got, err)
	}
	r := expect("read it", admin.Do(t, http.MethodGet, "/api/v2/files/hello.txt", nil), http.StatusOK)
	if string(r.Body) != "hi there" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("read = %q %v", r.Body, r.Header)
	}
	r = expect("list the root", admin.Do(t, http.MethodGet, "/api/v2/files/", nil), http.StatusOK)
	if !strings.Contains(string(r.Body), `"path":"hello.txt"`) {
		t.Errorf("listing = %s", r.Body)
	}
	expect("logs lists DIR/storage/logs", admin.Do(t, http.MethodGet, "/api/v2/logs/", nil), http.StatusOK)
	if fi, err := os.Stat(filepath.Join(in.Config.DataDir, "storage", "logs")); err != nil || !fi.IsDir() {
		t.Errorf("logs folder: %v", err)
	}
	expect("traversal", admin.Do(t, http.MethodGet, "/api/v2/files/%2e%2e/system.db", nil), http.StatusBadRequest)

	// Configuration is checked on save, every problem at once.
	r = expect("bad config", admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
		"resource": []any{map[string]any{"name": "bad", "label": "Bad", "type": "local_file", "is_active": true,
			"config": map[string]any{"container": "/etc/app", "colour": "red"}}}}), http.StatusBadRequest)
	for _, want := range []string{"/etc is not allowed", "colour"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("bad config message lacks %q: %s", want, r.Body)
		}
	}

	// A service of its own, a folder of the data directory.
	r = expect("create service", admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
		"resource": []any{map[string]any{"name": "uploads", "label": "Uploads", "type": "local_file", "is_active": true,
			"config": map[string]any{"container": "storage/uploads"}}}}), http.StatusCreated)
	svcID := firstID(t, r)
	expect("make public/", admin.Do(t, http.MethodPost, "/api/v2/uploads/public/", nil), http.StatusCreated)
	expect("make private/", admin.Do(t, http.MethodPost, "/api/v2/uploads/private/", nil), http.StatusCreated)
	expect("public file", up.Do(t, http.MethodPost, "/api/v2/uploads/public/a.txt", "public"), http.StatusCreated)
	expect("private file", up.Do(t, http.MethodPost, "/api/v2/uploads/private/b.txt", "private"), http.StatusCreated)
	if _, err := os.Stat(filepath.Join(in.Config.DataDir, "storage", "uploads", "public", "a.txt")); err != nil {
		t.Errorf("uploads root: %v", err)
	}

	// A role that may only read public/.
	r = expect("create role", admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{
		"resource": []any{map[string]any{"name": "reader", "is_active": true,
			"role_service_access_by_role_id": []any{map[string]any{
				"service_id": svcID, "component": "public/*", "verb_mask": 1, "requestor_mask": 1}}}}}), http.StatusCreated)
	roleID := firstID(t, r)
	r = expect("create app", admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=*", map[string]any{
		"resource": []any{map[string]any{"name": "reader-app", "is_active": true, "type": 0, "role_id": roleID}}}), http.StatusCreated)
	key := firstField(t, r, "api_key")
	if key == "" {
		key = appKey(t, admin, "reader-app")
	}
	reader := &proxytest.Client{Inst: in, APIKey: key}
	if r := expect("reader reads public", reader.Do(t, http.MethodGet, "/api/v2/uploads/public/a.txt", nil), http.StatusOK); string(r.Body) != "public" {
		t.Errorf("public = %q", r.Body)
	}
	expect("reader reads private", reader.Do(t, http.MethodGet, "/api/v2/uploads/private/b.txt", nil), http.StatusForbidden)
	expect("reader writes public", reader.Do(t, http.MethodPost, "/api/v2/uploads/public/c.txt", "x"), http.StatusForbidden)
	expect("reader deletes", reader.Do(t, http.MethodDelete, "/api/v2/uploads/public/a.txt", nil), http.StatusForbidden)

	// The service documents itself, and the document is valid.
	r = expect("api docs", admin.Do(t, http.MethodGet, "/api/v2/api_docs/uploads", nil), http.StatusOK)
	if !strings.Contains(string(r.Body), "/{file_path}") {
		t.Errorf("document lacks the file paths: %.300s", r.Body)
	}
	r = expect("service types", admin.Do(t, http.MethodGet, "/api/v2/system/service_type", nil), http.StatusOK)
	if !strings.Contains(string(r.Body), `"local_file"`) {
		t.Errorf("service_type lacks local_file")
	}
}

func firstID(t *testing.T, r *proxytest.Response) int64 {
	t.Helper()
	v := firstField(t, r, "id")
	var id int64
	if _, err := fmt.Sscan(v, &id); err != nil {
		t.Fatalf("no id in %s", r.Body)
	}
	return id
}

func firstField(t *testing.T, r *proxytest.Response, field string) string {
	t.Helper()
	m := r.Map(t)
	list, _ := m["resource"].([]any)
	if len(list) == 0 {
		return fmt.Sprint(m[field])
	}
	rec, _ := list[0].(map[string]any)
	if rec[field] == nil {
		return ""
	}
	return fmt.Sprint(rec[field])
}

func appKey(t *testing.T, admin *proxytest.Client, name string) string {
	t.Helper()
	r := admin.Do(t, http.MethodGet, "/api/v2/system/app?filter=name%3D"+name, nil)
	return firstField(t, r, "api_key")
}

// TestUploadCap checks that file services take bodies up to the upload cap
// while every other service keeps the general body cap.
func TestUploadCap(t *testing.T) {
	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.MaxBodyBytes = 1 << 20
		c.MaxUploadBytes = 4 << 20
	})
	admin := in.Admin(t)
	up := &proxytest.Client{Inst: in, APIKey: in.AdminKey, Session: admin.Session, Header: http.Header{"Content-Type": {"application/octet-stream"}}}
	if r := up.Do(t, http.MethodPost, "/api/v2/files/big.bin", bytes.Repeat([]byte("x"), 3<<20)); r.Status != http.StatusCreated {
		t.Errorf("3 MiB upload = %d %s", r.Status, r.Body)
	}
	if r := up.Do(t, http.MethodPost, "/api/v2/files/huge.bin", bytes.Repeat([]byte("x"), 5<<20)); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("5 MiB upload = %d %s", r.Status, r.Body)
	}
	if _, err := os.Stat(filepath.Join(in.Config.DataDir, "storage", "huge.bin")); err == nil {
		t.Error("refused upload left a file")
	}
	if r := admin.Do(t, http.MethodPost, "/api/v2/system/app", bytes.Repeat([]byte(" "), 2<<20)); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB system body = %d", r.Status)
	}
}

// TestPublicPaths: a file service's public_path entries are served
// without credentials at /storage/{service}/{path}, read-only, with
// ranges; every other path there is a 403, and no path leaves the root.
func TestPublicPaths(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	root := filepath.Join(in.Config.DataDir, "storage")
	for name, body := range map[string]string{"pub/a.txt": "public a", "pub/deep/b.txt": "public b", "logo.png": "PNG", "secret.txt": "secret"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := admin.Do(t, http.MethodPatch, "/api/v2/system/service?filter=name%3Dfiles", map[string]any{"config": map[string]any{"public_path": []string{"pub/", "logo.png"}}})
	if r.Status != http.StatusOK {
		t.Fatalf("set public_path = %d %s", r.Status, r.Body)
	}
	if err := in.Proxy.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	get := func(method, path string, header http.Header) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, in.URL+path, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	for _, tc := range []struct {
		method, path string
		header       http.Header
		status       int
		body         string
	}{
		{"GET", "/storage/files/pub/a.txt", nil, 200, "public a"},
		{"GET", "/storage/files/pub/deep/b.txt", nil, 200, "public b"},
		{"GET", "/storage/files/logo.png", nil, 200, "PNG"},
		{"GET", "/storage/files/pub/a.txt", http.Header{"Range": {"bytes=7-"}}, 206, "a"},
		{"HEAD", "/storage/files/pub/a.txt", nil, 200, ""},
		{"GET", "/storage/files/secret.txt", nil, 403, files.MsgAccessDenied},
		{"GET", "/storage/files/pub/", nil, 403, files.MsgAccessDenied},
		{"GET", "/storage/files/pubx/a.txt", nil, 403, files.MsgAccessDenied},
		{"GET", "/storage/files/pub/%2e%2e/secret.txt", nil, 403, files.MsgAccessDenied},
		{"GET", "/storage/files/pub/..%2fsecret.txt", nil, 403, files.MsgAccessDenied},
		{"GET", "/storage/files/pub/missing.txt", nil, 404, "not found"},
		{"GET", "/storage/nosuch/pub/a.txt", nil, 404, "not found"},
		{"GET", "/storage/db/pub/a.txt", nil, 404, "not found"},
	} {
		resp, body := get(tc.method, tc.path, tc.header)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s = %d %s, want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
	}
}
