package files_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/files"
)

// fixture serves a Local storage over a temporary folder at /f/.
type fixture struct {
	t    *testing.T
	kind string
	dir  string
	srv  *httptest.Server
	root string // the folder the storage is rooted at
}

func newFixture(t *testing.T, kind string) *fixture {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	h := &files.Handler{Name: "files", Storage: storageFor(t, kind, root)}
	srv := httptest.NewServer(http.StripPrefix("/f", h))
	t.Cleanup(func() { srv.Close(); h.Close() })
	return &fixture{t: t, kind: kind, dir: dir, srv: srv, root: root}
}

// forEachKind runs fn on a fresh fixture of every storage kind.
func forEachKind(t *testing.T, fn func(t *testing.T, f *fixture)) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) { fn(t, newFixture(t, kind)) })
	}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("not JSON (%d): %s", r.status, r.body)
	}
	return m
}

func (r reply) message(t *testing.T) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	if e == nil {
		t.Fatalf("no error envelope (%d): %s", r.status, r.body)
	}
	return e["message"].(string)
}

func (f *fixture) do(method, path string, body io.Reader, hdr ...string) reply {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+"/f"+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// rawDo sends a request line as written (no client-side cleaning).
func (f *fixture) rawDo(path string) int {
	f.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /f"+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		f.t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(rel string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(f.root, rel))
	return string(data), err == nil
}

func names(t *testing.T, r reply) []string {
	t.Helper()
	var out []string
	for _, e := range r.json(t)["resource"].([]any) {
		switch v := e.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			out = append(out, v["path"].(string))
		}
	}
	return out
}

func TestListing(t *testing.T) {
	forEachKind(t, testListing)
}

func testListing(t *testing.T, f *fixture) {
	f.write("a.txt", "hello")
	f.write("docs/readme.md", "# hi")
	f.write("docs/deep/x.json", "{}")
	f.write("Photo.PNG", "png")

	cases := []struct {
		name, path string
		want       []string
	}{
		{"root", "/", []string{"Photo.PNG", "a.txt", "docs/"}},
		{"root without slash", "", []string{"Photo.PNG", "a.txt", "docs/"}},
		{"folder", "/docs/", []string{"docs/deep/", "docs/readme.md"}},
		{"files only", "/?include_folders=false", []string{"Photo.PNG", "a.txt"}},
		{"folders only", "/?include_files=false", []string{"docs/"}},
		{"full tree", "/?full_tree=true", []string{"Photo.PNG", "a.txt", "docs/", "docs/deep/", "docs/deep/x.json", "docs/readme.md"}},
		{"search", "/?full_tree=true&search=READ", []string{"docs/readme.md"}},
		{"as list", "/docs/?as_list=true", []string{"docs/deep/", "docs/readme.md"}},
		{"access list", "/?as_access_list=true", []string{"", "*", "docs/", "docs/*", "docs/deep/", "docs/deep/*"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.do("GET", c.path, nil)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if d := cmp.Diff(c.want, names(t, r)); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
		})
	}

	r := f.do("GET", "/docs/?full_tree=true", nil)
	var listing struct {
		Resource []map[string]any `json:"resource"`
	}
	_ = json.Unmarshal(r.body, &listing)
	got := listing.Resource[1]
	if got["name"] != "deep/x.json" || got["type"] != "file" || got["content_type"] != "application/json" || got["content_length"] != float64(2) {
		t.Errorf("file entry = %v", got)
	}
	if _, err := time.Parse(http.TimeFormat, got["last_modified"].(string)); err != nil {
		t.Errorf("last_modified %q: %v", got["last_modified"], err)
	}
	if folder := listing.Resource[0]; folder["type"] != "folder" || folder["name"] != "deep" || folder["content_length"] != nil {
		t.Errorf("folder entry = %v", folder)
	}

	r = f.do("GET", "/?fields=name,type", nil)
	var reduced struct {
		Resource []map[string]any `json:"resource"`
	}
	_ = json.Unmarshal(r.body, &reduced)
	if d := cmp.Diff(map[string]any{"name": "Photo.PNG", "type": "file"}, reduced.Resource[0]); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}

	if r := f.do("GET", "/docs/?include_properties=true", nil); r.json(t)["path"] != "docs/" || r.json(t)["name"] != "docs" {
		t.Errorf("folder properties = %s", r.body)
	}
	if r := f.do("GET", "/nope/", nil); r.status != 404 || !strings.Contains(r.message(t), "nope/") {
		t.Errorf("missing folder = %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/a.txt/", nil); r.status != 404 {
		t.Errorf("file as folder = %d %s", r.status, r.body)
	}
	f.write("empty/.keep", "")
	os.Remove(filepath.Join(f.root, "empty/.keep"))
	if r := f.do("GET", "/empty/", nil); r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"resource":[]}` {
		t.Errorf("empty folder = %d %s", r.status, r.body)
	}
}

func TestReadFile(t *testing.T) {
	forEachKind(t, testReadFile)
}

func testReadFile(t *testing.T, f *fixture) {
	f.write("docs/a.txt", "hello world")
	f.write("page.html", "<p>x</p>")

	r := f.do("GET", "/docs/a.txt", nil)
	if r.status != 200 || string(r.body) != "hello world" {
		t.Fatalf("read = %d %q", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	if r.header.Get("Content-Disposition") != "inline" || r.header.Get("ETag") == "" || r.header.Get("Last-Modified") == "" || r.header.Get("Content-Length") != "11" {
		t.Errorf("headers %v", r.header)
	}
	if d := f.do("GET", "/page.html", nil); d.header.Get("Content-Disposition") != "" || d.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("html headers %v", d.header)
	}
	if d := f.do("GET", "/docs/a.txt?download=true", nil); d.header.Get("Content-Disposition") != `attachment; filename="a.txt"` {
		t.Errorf("download disposition %q", d.header.Get("Content-Disposition"))
	}
	// Range and conditional requests.
	if rr := f.do("GET", "/docs/a.txt", nil, "Range", "bytes=6-"); rr.status != 206 || string(rr.body) != "world" {
		t.Errorf("range = %d %q", rr.status, rr.body)
	}
	if rr := f.do("GET", "/docs/a.txt", nil, "If-None-Match", r.header.Get("ETag")); rr.status != 304 {
		t.Errorf("If-None-Match = %d", rr.status)
	}
	if rr := f.do("HEAD", "/docs/a.txt", nil); rr.status != 200 || len(rr.body) != 0 || rr.header.Get("Content-Length") != "11" {
		t.Errorf("HEAD = %d %q %v", rr.status, rr.body, rr.header)
	}
	// Properties, with content.
	props := f.do("GET", "/docs/a.txt?include_properties=true&content=true", nil).json(t)
	if props["content"] != base64.StdEncoding.EncodeToString([]byte("hello world")) || props["content_length"] != float64(11) || props["name"] != "a.txt" {
		t.Errorf("properties = %v", props)
	}
	props = f.do("GET", "/docs/a.txt?include_properties=true&content=true&is_base64=false", nil).json(t)
	if props["content"] != "hello world" {
		t.Errorf("plain content = %v", props["content"])
	}
	if rr := f.do("GET", "/docs/missing.txt", nil); rr.status != 404 || rr.message(t) != "The specified file 'docs/missing.txt' was not found in storage." {
		t.Errorf("missing = %d %s", rr.status, rr.body)
	}
	if rr := f.do("GET", "/docs", nil); rr.status != 404 || !strings.Contains(rr.message(t), "trailing slash") {
		t.Errorf("folder as file = %d %s", rr.status, rr.body)
	}
}

func TestCreate(t *testing.T) {
	forEachKind(t, testCreate)
}

func testCreate(t *testing.T, f *fixture) {
	f.write("docs/old.txt", "old")

	// Raw body to a file path; replace; check_exist.
	r := f.do("POST", "/docs/new.txt", strings.NewReader("fresh"), "Content-Type", "text/plain")
	if r.status != 201 || string(bytes.TrimSpace(r.body)) != `{"name":"new.txt","path":"docs/new.txt","type":"file"}` {
		t.Fatalf("write = %d %s", r.status, r.body)
	}
	if got, _ := f.read("docs/new.txt"); got != "fresh" {
		t.Errorf("content %q", got)
	}
	if r := f.do("PUT", "/docs/old.txt", strings.NewReader("replaced")); r.status != 201 {
		t.Errorf("replace = %d %s", r.status, r.body)
	}
	if got, _ := f.read("docs/old.txt"); got != "replaced" {
		t.Errorf("replaced content %q", got)
	}
	if r := f.do("POST", "/docs/old.txt?check_exist=true", strings.NewReader("nope")); r.status != 409 {
		t.Errorf("check_exist = %d %s", r.status, r.body)
	}
	if got, _ := f.read("docs/old.txt"); got != "replaced" {
		t.Errorf("check_exist changed the file: %q", got)
	}
	if r := f.do("POST", "/missing/x.txt", strings.NewReader("x")); r.status != 404 || r.message(t) != "Folder 'missing/' does not exist." {
		t.Errorf("missing parent = %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/docs", strings.NewReader("x")); r.status != 409 {
		t.Errorf("write over a folder = %d %s", r.status, r.body)
	}

	// X-File-Name and X-Folder-Name.
	if r := f.do("POST", "/docs/", strings.NewReader("via header"), "X-File-Name", "h.txt"); r.status != 201 || r.json(t)["path"] != "docs/h.txt" {
		t.Errorf("X-File-Name = %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/docs/", strings.NewReader("x"), "X-File-Name", "../escape.txt"); r.status != 400 {
		t.Errorf("X-File-Name with a slash = %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/", strings.NewReader(`{"resource":[]}`), "X-Folder-Name", "made", "Content-Type", "application/json"); r.status != 201 || r.json(t)["path"] != "made/" {
		t.Errorf("X-Folder-Name = %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/", nil, "X-Folder-Name", "made"); r.status != 409 {
		t.Errorf("existing folder = %d %s", r.status, r.body)
	}

	// No body: the folder of the path, parents included.
	if r := f.do("POST", "/a/b/c/", nil); r.status != 201 || string(bytes.TrimSpace(r.body)) != `{"name":"c","path":"a/b/c/"}` {
		t.Errorf("mkdir -p = %d %s", r.status, r.body)
	}
	if fi, err := os.Stat(filepath.Join(f.root, "a/b/c")); err != nil || !fi.IsDir() {
		t.Errorf("folder not made: %v", err)
	}

	// JSON entries.
	body := `{"resource":[
		{"name":"sub","type":"folder"},
		{"name":"sub/plain.txt","type":"file","content":"text"},
		{"name":"b64.bin","type":"file","content":"` + base64.StdEncoding.EncodeToString([]byte{0, 1, 2}) + `","is_base64":true},
		{"name":"old.txt","type":"file","content":"x"},
		{"name":"../out","type":"folder"},
		{"name":"copy.txt","source_path":"docs/new.txt"},
		{"name":"moved.txt","source_path":"docs/h.txt","delete_source":true}
	]}`
	r = f.do("POST", "/docs/?check_exist=true", strings.NewReader(body), "Content-Type", "application/json")
	if r.status != 201 {
		t.Fatalf("entries = %d %s", r.status, r.body)
	}
	var res struct {
		Resource []struct {
			Name, Path, Type string
			Error            *struct{ Message string }
		}
	}
	_ = json.Unmarshal(r.body, &res)
	if len(res.Resource) != 7 {
		t.Fatalf("entries result %s", r.body)
	}
	for i, wantErr := range []bool{false, false, false, true, true, false, false} {
		if (res.Resource[i].Error != nil) != wantErr {
			t.Errorf("entry %d: error %v, want error %v (%s)", i, res.Resource[i].Error, wantErr, r.body)
		}
	}
	if res.Resource[0].Path != "docs/sub/" || res.Resource[1].Path != "docs/sub/plain.txt" {
		t.Errorf("entry paths %s", r.body)
	}
	if got, _ := f.read("docs/b64.bin"); got != "\x00\x01\x02" {
		t.Errorf("base64 content %q", got)
	}
	if got, _ := f.read("docs/copy.txt"); got != "fresh" {
		t.Errorf("copy %q", got)
	}
	if _, ok := f.read("docs/h.txt"); ok {
		t.Error("moved source still there")
	}
	if got, _ := f.read("docs/moved.txt"); got != "via header" {
		t.Errorf("moved %q", got)
	}
	if r := f.do("POST", "/docs/", strings.NewReader(`{"resource":[`), "Content-Type", "application/json"); r.status != 400 {
		t.Errorf("bad JSON = %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/docs/", strings.NewReader("raw bytes"), "Content-Type", "application/octet-stream"); r.status != 400 {
		t.Errorf("raw body to a folder without a name = %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/docs/?url=http://127.0.0.1/x", nil); r.status != 400 {
		t.Errorf("url upload = %d %s", r.status, r.body)
	}
	if r := f.do("PATCH", "/docs/a.txt", strings.NewReader("{}")); r.status != 501 {
		t.Errorf("PATCH = %d %s", r.status, r.body)
	}
}

func multipartBody(t *testing.T, parts map[string]string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("note", "ignored")
	for _, name := range []string{"a b!.txt", "second.txt", "../../evil.sh"} {
		content, ok := parts[name]
		if !ok {
			continue
		}
		w, _ := mw.CreateFormFile("files", name)
		_, _ = io.WriteString(w, content)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

func TestMultipart(t *testing.T) {
	forEachKind(t, testMultipart)
}

func testMultipart(t *testing.T, f *fixture) {
	body, ct := multipartBody(t, map[string]string{"a b!.txt": "one", "second.txt": "two", "../../evil.sh": "three"})
	r := f.do("POST", "/", body, "Content-Type", ct)
	if r.status != 201 {
		t.Fatalf("upload = %d %s", r.status, r.body)
	}
	if d := cmp.Diff([]string{"ab.txt", "second.txt", "evil.sh"}, names(t, r)); d != "" {
		t.Errorf("uploaded (-want +got):\n%s", d)
	}
	for name, want := range map[string]string{"ab.txt": "one", "second.txt": "two", "evil.sh": "three"} {
		if got, _ := f.read(name); got != want {
			t.Errorf("%s = %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "evil.sh")); err == nil {
		t.Error("upload escaped the root")
	}

	// One upload to a file path; two are refused and leave nothing.
	body, ct = multipartBody(t, map[string]string{"second.txt": "single"})
	if r := f.do("POST", "/single.txt", body, "Content-Type", ct); r.status != 201 {
		t.Errorf("single upload = %d %s", r.status, r.body)
	}
	if got, _ := f.read("single.txt"); got != "single" {
		t.Errorf("single content %q", got)
	}
	body, ct = multipartBody(t, map[string]string{"a b!.txt": "x", "second.txt": "y"})
	if r := f.do("POST", "/double.txt", body, "Content-Type", ct); r.status != 400 || !strings.Contains(r.message(t), "Multiple files") {
		t.Errorf("double upload = %d %s", r.status, r.body)
	}
	if _, ok := f.read("double.txt"); ok {
		t.Error("refused upload left a file")
	}
}

func TestAbandonedUploadLeavesNothing(t *testing.T) {
	forEachKind(t, testAbandonedUploadLeavesNothing)
}

func testAbandonedUploadLeavesNothing(t *testing.T, f *fixture) {
	f.write("keep.txt", "original")
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("POST", f.srv.URL+"/f/keep.txt", pr)
		resp, err := f.srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	_, _ = pw.Write(bytes.Repeat([]byte("x"), 1<<20))
	time.Sleep(100 * time.Millisecond)
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
	// The server notices the broken body; give it a moment to clean up.
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, _ := os.ReadDir(f.root)
		if len(entries) == 1 || time.Now().After(deadline) {
			if len(entries) != 1 {
				t.Errorf("leftovers: %v", entries)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, _ := f.read("keep.txt"); got != "original" {
		t.Errorf("abandoned upload changed the file: %q", got)
	}
}

func TestDelete(t *testing.T) {
	forEachKind(t, testDelete)
}

func testDelete(t *testing.T, f *fixture) {
	f.write("a.txt", "a")
	f.write("full/x.txt", "x")
	f.write("full/y/z.txt", "z")
	f.write("list/1.txt", "1")
	f.write("list/2.txt", "2")
	f.write("keep/k.txt", "k")
	_ = os.MkdirAll(filepath.Join(f.root, "empty"), 0o755)

	if r := f.do("DELETE", "/a.txt", nil); r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"name":"a.txt","path":"a.txt"}` {
		t.Errorf("delete file = %d %s", r.status, r.body)
	}
	if r := f.do("DELETE", "/a.txt", nil); r.status != 404 || strings.Contains(r.message(t), f.root) {
		t.Errorf("missing file = %d %s", r.status, r.body)
	}
	if r := f.do("DELETE", "/full/", nil); r.status != 409 {
		t.Errorf("non-empty folder = %d %s", r.status, r.body)
	}
	if _, ok := f.read("full/y/z.txt"); !ok {
		t.Error("refused delete removed something")
	}
	if r := f.do("DELETE", "/full/?force=true", nil); r.status != 200 || r.json(t)["path"] != "full/" {
		t.Errorf("force = %d %s", r.status, r.body)
	}
	if r := f.do("DELETE", "/empty/", nil); r.status != 200 {
		t.Errorf("empty folder = %d %s", r.status, r.body)
	}
	if r := f.do("DELETE", "/keep/?content_only=true&force=true", nil); r.status != 200 {
		t.Errorf("content_only = %d %s", r.status, r.body)
	}
	if entries, err := os.ReadDir(filepath.Join(f.root, "keep")); err != nil || len(entries) != 0 {
		t.Errorf("content_only left %v, %v", entries, err)
	}
	r := f.do("DELETE", "/list/", strings.NewReader(`{"resource":[{"name":"1.txt"},{"path":"list/2.txt"},{"name":"3.txt"}]}`), "Content-Type", "application/json")
	if r.status != 200 {
		t.Fatalf("delete list = %d %s", r.status, r.body)
	}
	var res struct{ Resource []map[string]any }
	_ = json.Unmarshal(r.body, &res)
	if len(res.Resource) != 3 || res.Resource[0]["error"] != nil || res.Resource[1]["error"] != nil || res.Resource[2]["error"] == nil {
		t.Errorf("delete list result %s", r.body)
	}
	if r := f.do("DELETE", "/", nil); r.status != 400 || r.message(t) != "No resources given for delete." {
		t.Errorf("root = %d %s", r.status, r.body)
	}
	if r := f.do("DELETE", "/gone/", nil); r.status != 404 {
		t.Errorf("missing folder = %d %s", r.status, r.body)
	}
}

// TestPathEscapes sends the traversal corpus at every verb; nothing outside
// the root may be read, listed, written or deleted.
func TestPathEscapes(t *testing.T) {
	forEachKind(t, testPathEscapes)
}

func testPathEscapes(t *testing.T, f *fixture) {
	secret := filepath.Join(f.dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("in/ok.txt", "ok")
	corpus := []string{
		"/%2e%2e/secret.txt", "/in/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt", "/in%2f..%2f..%2fsecret.txt",
		"/%2E%2E/secret.txt", "/in/..%5c..%5csecret.txt", "/in/ok.txt%00.png", "/in//ok.txt",
		"/./in/ok.txt", "/in\\..\\..\\secret.txt",
	}
	// Links on a remote server are the server's own business (its chroot
	// is the boundary); locally, os.Root refuses links that lead outside.
	if f.kind == "local" {
		if err := os.Symlink(secret, filepath.Join(f.root, "link.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(f.dir, filepath.Join(f.root, "linkdir")); err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, "/link.txt", "/linkdir/secret.txt", "/linkdir/")
	}
	for _, p := range corpus {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			var body io.Reader
			if method == "POST" || method == "PUT" {
				body = strings.NewReader("pwned")
			}
			r := f.do(method, p, body)
			if r.status != 400 {
				t.Errorf("%s %s = %d %s, want 400", method, p, r.status, r.body)
			}
			if bytes.Contains(r.body, []byte("secret")) && method == "GET" && !bytes.Contains(r.body, []byte("error")) {
				t.Errorf("%s %s leaked the file", method, p)
			}
		}
	}
	// Raw ".." that no client cleans.
	for _, p := range []string{"/../secret.txt", "/in/../../secret.txt"} {
		if code := f.rawDo(p); code < 300 || code >= 500 {
			t.Errorf("raw GET %s = %d, want a 3xx or 4xx", p, code)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "secret" {
		t.Errorf("the file outside the root changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "pwned")); err == nil {
		t.Error("a write escaped the root")
	}
	// Listings leave out links that lead outside.
	if d := cmp.Diff([]string{"in/"}, names(t, f.do("GET", "/", nil))); d != "" {
		t.Errorf("root listing (-want +got):\n%s", d)
	}
}

func TestCleanPath(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true}, {"/", "", true}, {"a/b/", "a/b", true}, {"a b/ü.txt", "a b/ü.txt", true},
		{"..", "", false}, {"a/../b", "", false}, {"a//b", "", false}, {"./a", "", false},
		{"a\x00b", "", false}, {"a\\b", "", false}, {"a/\x7f", "", false}, {strings.Repeat("a", 2000), "", false},
		{".portcullis-upload-x", "", false},
	} {
		got, err := files.CleanPath(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
	for in, want := range map[string]string{
		"report (1).pdf": "report1.pdf", "../../x.sh": "x.sh", `C:\a\b.txt`: "b.txt", "...": "", "a..b": "a.b", "ü.txt": "txt",
	} {
		if got := files.SanitizeFileName(in); got != want {
			t.Errorf("SanitizeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "a/./b", "a\x00", "%2e%2e", "a//b/", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := files.CleanPath(p)
		if err != nil {
			return
		}
		if filepath.IsAbs(got) || strings.Contains("/"+got+"/", "/../") || strings.Contains("/"+got+"/", "/./") || strings.ContainsAny(got, "\x00\\") {
			t.Fatalf("CleanPath(%q) = %q accepted", p, got)
		}
		if clean := filepath.Clean("/r/" + got); got != "" && !strings.HasPrefix(clean, "/r/") {
			t.Fatalf("CleanPath(%q) = %q leaves the root", p, got)
		}
	})
}
