package files_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/files"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// serveType builds a backend of typ for config and serves it.
func serveType(t *testing.T, typ service.Type, config any) *httptest.Server {
	return serveTypeWith(t, typ, config, service.Deps{DataDir: t.TempDir()})
}

// serveTypeWith is serveType with the backend's dependencies.
func serveTypeWith(t *testing.T, typ service.Type, config any, deps service.Deps) *httptest.Server {
	t.Helper()
	raw, _ := json.Marshal(config)
	if err := typ.ValidateConfig(raw); err != nil {
		t.Fatalf("config refused: %v", err)
	}
	be, err := typ.New(t.Context(), &store.Service{Name: "remote", Type: typ.Info().Name, Config: string(raw)}, deps)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(be)
	t.Cleanup(func() { srv.Close(); be.Close() })
	return srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return resp.StatusCode, b.String()
}

func TestSFTPFailuresAndRecovery(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("A"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, sshd := startSFTP(t, root)
	srv := serveType(t, files.SFTPType{}, cfg)
	if code, body := get(t, srv.URL+"/a.txt"); code != 200 || body != "A" {
		t.Fatalf("read = %d %q", code, body)
	}

	// The server goes away: 503, then the service recovers by itself.
	addr := sshd.ln.Addr().String()
	sshd.stop()
	if code, body := get(t, srv.URL+"/a.txt"); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot reach its storage") {
		t.Errorf("server down = %d %s", code, body)
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	sshd.serve(ln2)
	if code, body := get(t, srv.URL+"/a.txt"); code != 200 || body != "A" {
		t.Errorf("after restart = %d %q", code, body)
	}

	// A wrong pinned key or password is refused (503, nothing read).
	bad := cfg
	bad.Port = ln2.Addr().(*net.TCPAddr).Port
	bad.HostFingerprint = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if code, body := get(t, serveType(t, files.SFTPType{}, bad).URL+"/a.txt"); code != http.StatusServiceUnavailable || strings.Contains(body, "\"A\"") {
		t.Errorf("wrong host key = %d %s", code, body)
	}
	bad = cfg
	bad.Port = ln2.Addr().(*net.TCPAddr).Port
	bad.Password = "wrong"
	if code, _ := get(t, serveType(t, files.SFTPType{}, bad).URL+"/a.txt"); code != http.StatusServiceUnavailable {
		t.Errorf("wrong password = %d", code)
	}
}

func TestWebDAVDown(t *testing.T) {
	cfg := startWebDAV(t, t.TempDir())
	cfg.BaseURI = "http://127.0.0.1:1" // nothing listens there
	if code, body := get(t, serveType(t, files.WebDAVType{}, cfg).URL+"/"); code != http.StatusServiceUnavailable {
		t.Errorf("server down = %d %s", code, body)
	}
	cfg = startWebDAV(t, t.TempDir())
	cfg.Password = "wrong"
	if code, body := get(t, serveType(t, files.WebDAVType{}, cfg).URL+"/"); code < 400 || code == 200 {
		t.Errorf("wrong password = %d %s", code, body)
	}
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		typ  service.Type
		cfg  string
		want []string // substrings of the one error; none: valid
	}{
		{files.LocalType{}, `{}`, nil},
		{files.LocalType{}, `{"container":"storage/x"}`, nil},
		{files.LocalType{}, `{"container":"/srv/files"}`, nil},
		{files.LocalType{}, `{"container":"/etc"}`, []string{"/etc is not allowed"}},
		{files.LocalType{}, `{"container":"/"}`, []string{"/ is not allowed"}},
		{files.LocalType{}, `{"container":"../up"}`, []string{"inside the data directory"}},
		{files.LocalType{}, `{"container":3,"x":1}`, []string{"unknown keys x", "container"}},
		{files.LocalType{}, `[1]`, []string{"JSON object"}},
		{files.SFTPType{}, `{}`, []string{"host: required", "username: required", "password or private_key", "container: required"}},
		{files.SFTPType{}, `{"host":"h","username":"u","password":"p","container":"/x","port":70000}`, []string{"port"}},
		{files.SFTPType{}, `{"host":"h","username":"u","private_key":"nope","container":"/x"}`, []string{"private_key"}},
		{files.SFTPType{}, `{"host":"h","username":"u","password":"p","container":"/x/../y"}`, []string{"container"}},
		{files.SFTPType{}, `{"host":"h","username":"u","password":"p","container":"/x"}`, nil},
		{files.WebDAVType{}, `{}`, []string{"base_uri: required"}},
		{files.WebDAVType{}, `{"base_uri":"ftp://x"}`, []string{"http or https"}},
		{files.WebDAVType{}, `{"base_uri":"https://u:p@x"}`, []string{"credentials"}},
		{files.WebDAVType{}, `{"base_uri":"https://x","auth_type":"ntlm"}`, []string{"ntlm"}},
		{files.WebDAVType{}, `{"base_uri":"https://x/dav","auth_type":"digest","container":"team"}`, nil},
	}
	for _, c := range cases {
		err := c.typ.ValidateConfig(json.RawMessage(c.cfg))
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s %s: %v", c.typ.Info().Name, c.cfg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s %s: accepted", c.typ.Info().Name, c.cfg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: %q lacks %q", c.typ.Info().Name, c.cfg, err, w)
			}
		}
	}
}

// TestUpstreamAllowList: with an allow list that leaves out the server's
// address, SFTP and WebDAV services never connect to it and answer 502.
func TestUpstreamAllowList(t *testing.T) {
	deps := service.Deps{DataDir: t.TempDir(), UpstreamAllow: []string{"10.0.0.0/8"}}
	sftpConfig, _ := startSFTP(t, t.TempDir())
	for name, tc := range map[string]struct {
		typ service.Type
		cfg any
	}{
		"sftp":   {files.SFTPType{}, sftpConfig},
		"webdav": {files.WebDAVType{}, startWebDAV(t, t.TempDir())},
	} {
		code, body := get(t, serveTypeWith(t, tc.typ, tc.cfg, deps).URL+"/")
		if code != http.StatusBadGateway || !strings.Contains(body, "upstream allow list") {
			t.Errorf("%s: %d %s", name, code, body)
		}
		if code, body := get(t, serveType(t, tc.typ, tc.cfg).URL+"/"); code != http.StatusOK {
			t.Errorf("%s without the allow list: %d %s", name, code, body)
		}
	}
}
