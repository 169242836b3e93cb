package files

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// Defaults of a Handler.
const (
	// DefaultMaxInlineBytes caps a file returned inside JSON
	// (include_properties=true&content=true) or written from JSON content.
	DefaultMaxInlineBytes int64 = 16 << 20
	// DefaultMaxListEntries caps a listing (full_tree, zip, as_access_list).
	DefaultMaxListEntries = 100_000
)

// Handler serves a [Storage] with DreamFactory's file service API: list,
// read, create, replace and delete files and folders. See the package doc
// for the routes. It is an http.Handler usable alone (the path below its
// mount point is the file path) or as a service's backend (the path is
// the request's [service.Target] resource).
type Handler struct {
	// Name is the service's name, for messages.
	Name string
	// Storage is the tree served.
	Storage Storage
	// MaxInlineBytes caps files carried inside JSON; 0 means
	// DefaultMaxInlineBytes.
	MaxInlineBytes int64
	// MaxListEntries caps listings, and the entries of a zip unpacked
	// with extract=true; 0 means DefaultMaxListEntries.
	MaxListEntries int
	// MaxExtractBytes caps what a zip unpacked with extract=true may
	// hold; 0 means DefaultMaxExtractBytes.
	MaxExtractBytes int64
	// Logger receives failures that are not the client's; nil discards.
	Logger *slog.Logger
	// PublicPaths are the files and folders served without credentials
	// by ServePublic (the service's public_path).
	PublicPaths []string
}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.Handler(h.serve).ServeHTTP(w, r)
}

// Close closes the storage.
func (h *Handler) Close() error { return h.Storage.Close() }

func (h *Handler) maxInline() int64 {
	if h.MaxInlineBytes > 0 {
		return h.MaxInlineBytes
	}
	return DefaultMaxInlineBytes
}

func (h *Handler) maxList() int {
	if h.MaxListEntries > 0 {
		return h.MaxListEntries
	}
	return DefaultMaxListEntries
}

// target is the file or folder a request names.
type target struct {
	path   string // cleaned, no leading or trailing slash; "" is the root
	folder bool   // the path ended with "/" or is the root
}

// display is the path as responses show it: folders end with "/".
func (t target) display() string {
	if t.folder && t.path != "" {
		return t.path + "/"
	}
	return t.path
}

// requestTarget reads the path a request names and checks it.
func requestTarget(r *http.Request) (target, error) {
	escaped := strings.ToLower(r.URL.EscapedPath())
	for _, bad := range []string{"%2f", "%5c", "%00"} {
		if strings.Contains(escaped, bad) {
			return target{}, apierr.BadRequest("Invalid path: encoded slashes, backslashes and NUL bytes are not allowed.")
		}
	}
	raw := r.URL.Path
	if t := service.TargetFrom(r.Context()); t != nil {
		raw = t.Resource
	}
	p, err := CleanPath(raw)
	if err != nil {
		return target{}, err
	}
	return target{path: p, folder: p == "" || strings.HasSuffix(r.URL.Path, "/")}, nil
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	t, err := requestTarget(r)
	if err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if t.folder {
			return h.getFolder(w, r, t)
		}
		return h.getFile(w, r, t)
	case http.MethodPost, http.MethodPut:
		// DreamFactory handles PUT exactly as POST on file services.
		if t.folder {
			return h.postFolder(w, r, t)
		}
		return h.postFile(w, r, t)
	case http.MethodPatch:
		if t.folder {
			return apierr.NotImplemented("Updating folder properties is not implemented for current file system.")
		}
		return apierr.NotImplemented("Updating file properties is not implemented for current file system.")
	case http.MethodDelete:
		return h.delete(w, r, t)
	}
	return apierr.MethodNotAllowed(r.Method)
}

// storageErr turns a Storage error into the envelope's error. notFound is
// the 404 message; no server path ever appears in a message.
func (h *Handler) storageErr(err error, notFound string) error {
	var ae *apierr.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, fs.ErrNotExist):
		return apierr.NotFound("%s", notFound).WithCause(err)
	case errors.Is(err, ErrEscapes):
		return apierr.BadRequest("File operation refused: path escapes the storage root.").WithCause(err)
	case errors.As(err, new(*upstream.NotAllowedError)):
		return apierr.BadGateway("File service '%s' points at an address that the upstream allow list does not permit.", h.Name).WithCause(err)
	case errors.Is(err, ErrUnavailable):
		return apierr.Unavailable("File service '%s' cannot reach its storage now; try again later.", h.Name).WithCause(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return apierr.As(err)
	}
	if h.Logger != nil {
		h.Logger.Error("file service: storage failed", "service", h.Name, "err", err)
	}
	return apierr.InternalMsg("File service '%s' failed to complete the operation.", h.Name).WithCause(err)
}

// entry is one file or folder as listings and results show it, in
// DreamFactory's key order.
type entry struct {
	Path          string `json:"path"`
	ContentType   string `json:"content_type,omitempty"`
	LastModified  string `json:"last_modified,omitempty"`
	ContentLength *int64 `json:"content_length,omitempty"`
	Name          string `json:"name"`
	Type          string `json:"type"`
}

// httpTime formats a time as DreamFactory does (RFC 1123, GMT).
func httpTime(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// contentType names a file's type from its extension.
func contentType(name string) string {
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// describe makes the listing entry of fi found at p (cleaned), named
// relative to the listed folder by rel.
func describe(p, rel string, fi fs.FileInfo) entry {
	if fi.IsDir() {
		return entry{Path: p + "/", LastModified: httpTime(fi.ModTime()), Name: rel, Type: "folder"}
	}
	size := fi.Size()
	return entry{Path: p, ContentType: contentType(fi.Name()), LastModified: httpTime(fi.ModTime()),
		ContentLength: &size, Name: rel, Type: "file"}
}

// boolParam reads a boolean query parameter as DreamFactory does (true, 1,
// yes, on), with a default for an absent one.
func boolParam(r *http.Request, name string, def bool) bool {
	v, ok := r.URL.Query()[name]
	if !ok || len(v) == 0 {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v[0])) {
	case "true", "1", "yes", "on", "":
		return true
	}
	return false
}

// etag is a strong validator built from a file's size and modification
// time, as most static file servers make it.
func etag(fi fs.FileInfo) string {
	return `"` + strconv.FormatInt(fi.ModTime().UnixNano(), 36) + "-" + strconv.FormatInt(fi.Size(), 36) + `"`
}

// notFoundFile is the 404 message for a missing file.
func notFoundFile(p string) string {
	return fmt.Sprintf("The specified file '%s' was not found in storage.", p)
}

// notFoundFolder is the 404 message for a missing folder.
func notFoundFolder(p string) string {
	return fmt.Sprintf("Folder '%s' does not exist in storage.", p)
}

// peekBody reports whether r has a body, without consuming it.
func peekBody(r *http.Request) (*bufio.Reader, bool, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, false, nil
	}
	br := bufio.NewReaderSize(r.Body, 64<<10)
	if _, err := br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) {
			return br, false, nil
		}
		return nil, false, apierr.As(err)
	}
	return br, true, nil
}
