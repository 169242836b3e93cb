package files_test

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/files"
)

// zipEntry is one entry of a zip built for a test.
type zipEntry struct {
	name, content string
	mode          fs.FileMode
}

// makeZip builds a zip of entries (stored, not compressed, so tests can
// find an entry's bytes).
func makeZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Store}
		if e.mode != 0 {
			hdr.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var siteZip = []zipEntry{{name: "index.html", content: "<h1>hi</h1>"}, {name: "css/"}, {name: "css/site.css", content: "body{}"}, {name: "js/app.js", content: "go()"}, {name: "empty/"}}

// TestExtract: extract=true unpacks an uploaded zip into the folder, as
// DreamFactory does, in each upload form, with clean=true emptying the
// folder first; anything that is not a zip is stored as it is.
func TestExtract(t *testing.T) {
	forEachKind(t, func(t *testing.T, f *fixture) {
		f.write("site/old.txt", "old")
		data := makeZip(t, siteZip...)
		r := f.do("POST", "/site/?extract=true&clean=true", bytes.NewReader(data), "X-File-Name", "site.zip")
		if r.status != http.StatusCreated {
			t.Fatalf("extract = %d %s", r.status, r.body)
		}
		if got := r.json(t); got["name"] != "site" || got["path"] != "site/" || got["type"] != "folder" {
			t.Errorf("answer = %s", r.body)
		}
		for name, want := range map[string]string{"site/index.html": "<h1>hi</h1>", "site/css/site.css": "body{}", "site/js/app.js": "go()"} {
			if got, ok := f.read(name); !ok || got != want {
				t.Errorf("%s = %q, %v", name, got, ok)
			}
		}
		if fi, err := os.Stat(filepath.Join(f.root, "site/empty")); err != nil || !fi.IsDir() {
			t.Errorf("empty folder not created: %v", err)
		}
		for _, gone := range []string{"site/old.txt", "site/site.zip"} {
			if _, ok := f.read(gone); ok {
				t.Errorf("%s is still there", gone)
			}
		}

		// A multipart upload: the zip unpacked, the text file stored.
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		w, _ := mw.CreateFormFile("files", "more.zip")
		_, _ = w.Write(makeZip(t, zipEntry{name: "more/a.txt", content: "A"}))
		w, _ = mw.CreateFormFile("files", "plain.txt")
		_, _ = w.Write([]byte("PK is not enough"))
		mw.Close()
		r = f.do("POST", "/site/?extract=true", &buf, "Content-Type", mw.FormDataContentType())
		if r.status != http.StatusCreated || len(names(t, r)) != 2 {
			t.Fatalf("multipart extract = %d %s", r.status, r.body)
		}
		if got, _ := f.read("site/more/a.txt"); got != "A" {
			t.Errorf("multipart zip not unpacked: %q", got)
		}
		if got, _ := f.read("site/plain.txt"); got != "PK is not enough" {
			t.Errorf("plain file = %q", got)
		}
		if _, ok := f.read("site/index.html"); !ok {
			t.Error("extract without clean emptied the folder")
		}

		// A zip sent to a file's path unpacks into that file's folder.
		r = f.do("POST", "/site/pkg.zip?extract=true", bytes.NewReader(makeZip(t, zipEntry{name: "pkg.txt", content: "P"})))
		if r.status != http.StatusCreated {
			t.Fatalf("extract at a file path = %d %s", r.status, r.body)
		}
		if got, _ := f.read("site/pkg.txt"); got != "P" {
			t.Errorf("pkg.txt = %q", got)
		}

		// Not a zip: stored as it is, extract or not.
		r = f.do("POST", "/site/?extract=true", strings.NewReader("just text"), "X-File-Name", "notes.txt")
		if r.status != http.StatusCreated {
			t.Fatalf("non-zip with extract = %d %s", r.status, r.body)
		}
		if got, _ := f.read("site/notes.txt"); got != "just text" {
			t.Errorf("notes.txt = %q", got)
		}
		// Without extract a zip is a file like any other.
		r = f.do("POST", "/site/", bytes.NewReader(data), "X-File-Name", "kept.zip")
		if got, _ := f.read("site/kept.zip"); r.status != http.StatusCreated || got != string(data) {
			t.Errorf("zip without extract = %d, stored %d bytes", r.status, len(got))
		}
	})
}

// TestExtractRefusesBeforeWriting: a hostile or broken archive is refused
// as a whole, before anything is written or cleaned.
func TestExtractRefusesBeforeWriting(t *testing.T) {
	corrupt := makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: "bad.txt", content: "hello world"})
	corrupt = bytes.Replace(corrupt, []byte("hello world"), []byte("jello world"), 1)
	cases := []struct {
		name   string
		zip    []byte
		query  string
		status int
		msg    string
	}{
		{"zip slip", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: "../evil.txt", content: "x"}), "", 400, "'../evil.txt' has an invalid path"},
		{"deep zip slip", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: "a/../../evil.txt", content: "x"}), "", 400, "invalid path"},
		{"absolute", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: "/etc/evil", content: "x"}), "", 400, "absolute or Windows path"},
		{"windows", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: `..\evil.txt`, content: "x"}), "", 400, "absolute or Windows path"},
		{"link", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: "link", content: "/etc/passwd", mode: fs.ModeSymlink | 0o777}), "", 400, "is a link"},
		{"reserved name", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: ".portcullis-upload-x", content: "x"}), "", 400, "invalid path"},
		{"corrupt entry", corrupt, "", 400, "'bad.txt' is corrupt"},
		{"not a zip", []byte("PK\x03\x04 but nothing else"), "", 400, "not a valid zip file"},
		{"existing with check_exist", makeZip(t, zipEntry{name: "good.txt", content: "good"}, zipEntry{name: "keep.txt", content: "new"}), "&check_exist=true", 409, "'dir/keep.txt' already exists"},
	}
	forEachKind(t, func(t *testing.T, f *fixture) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f.write("dir/keep.txt", "kept")
				r := f.do("POST", "/dir/?extract=true&clean=true"+c.query, bytes.NewReader(c.zip), "X-File-Name", "up.zip")
				if r.status != c.status || !strings.Contains(r.message(t), c.msg) {
					t.Fatalf("= %d %s, want %d %q", r.status, r.body, c.status, c.msg)
				}
				if got, _ := f.read("dir/keep.txt"); got != "kept" {
					t.Errorf("the folder was cleaned or changed: keep.txt = %q", got)
				}
				for _, p := range []string{"dir/good.txt", "evil.txt", "dir/evil.txt", "dir/up.zip", "dir/link"} {
					if _, ok := f.read(p); ok {
						t.Errorf("a refused extract left %s", p)
					}
				}
				if _, err := os.Lstat(filepath.Join(f.dir, "evil.txt")); err == nil {
					t.Error("zip slip wrote outside the root")
				}
			})
		}
	})
}

// TestExtractLimits: MaxListEntries and MaxExtractBytes bound an archive
// (a zip bomb declares little and unpacks to much).
func TestExtractLimits(t *testing.T) {
	root := t.TempDir()
	h := &files.Handler{Name: "files", Storage: files.NewLocal(root), MaxListEntries: 3, MaxExtractBytes: 1000}
	srv := httptest.NewServer(http.StripPrefix("/f", h))
	defer srv.Close()
	post := func(data []byte) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/f/?extract=true", bytes.NewReader(data))
		req.Header.Set("X-File-Name", "up.zip")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	many := makeZip(t, zipEntry{name: "1"}, zipEntry{name: "2"}, zipEntry{name: "3"}, zipEntry{name: "4"})
	if st, body := post(many); st != 400 || !strings.Contains(body, "4 entries; at most 3") {
		t.Errorf("too many entries = %d %s", st, body)
	}
	// Deflated zeros: 2,000 bytes unpacked from a few dozen.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("zeros.bin")
	_, _ = w.Write(make([]byte, 2000))
	zw.Close()
	if st, body := post(buf.Bytes()); st != 400 || !strings.Contains(body, "more than 1000 bytes") {
		t.Errorf("bomb = %d %s", st, body)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Errorf("a refused extract left %v", entries)
	}
}
