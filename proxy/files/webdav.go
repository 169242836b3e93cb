package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/studio-b12/gowebdav"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// WebDAVConfig is the configuration of a webdav_file service, with
// DreamFactory's keys.
type WebDAVConfig struct {
	// BaseURI is the server's address (http or https), with or without a
	// path.
	BaseURI string `json:"base_uri"`
	// Username and Password sign in; AuthType is basic (default), digest,
	// or none.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	AuthType string `json:"auth_type,omitempty"`
	// Timeout bounds each exchange except the streaming of a body, in
	// seconds (default 30).
	Timeout int `json:"timeout,omitempty"`
	// Container is a path prefix below BaseURI.
	Container string `json:"container,omitempty"`
	// PublicPath lists files and folders served without credentials at
	// /storage/{service}/{path} (see the package doc).
	PublicPath []string `json:"public_path,omitempty"`
	// Encoding and Proxy are DreamFactory keys accepted and ignored.
	Encoding string `json:"encoding,omitempty"`
	Proxy    string `json:"proxy,omitempty"`
}

// ParseWebDAVConfig reads and checks a webdav_file configuration,
// reporting every problem at once.
func ParseWebDAVConfig(raw json.RawMessage) (WebDAVConfig, error) {
	var c WebDAVConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, []string{"base_uri", "username", "password", "auth_type", "timeout", "container", "public_path", "encoding", "proxy"}); err != nil {
		errs = append(errs, err)
	}
	if u, err := url.Parse(c.BaseURI); c.BaseURI == "" {
		errs = append(errs, errors.New("base_uri: required"))
	} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, errors.New("base_uri: must be an http or https URL"))
	} else if u.User != nil {
		errs = append(errs, errors.New("base_uri: put credentials in username and password, not in the URL"))
	}
	switch strings.ToLower(c.AuthType) {
	case "", "basic", "digest", "none":
	case "ntlm":
		errs = append(errs, errors.New("auth_type: ntlm is not supported (use basic or digest)"))
	default:
		errs = append(errs, fmt.Errorf("auth_type: %q is not one of basic, digest, none", c.AuthType))
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("timeout: must not be negative"))
	}
	if c.Container != "" {
		if err := checkRemoteContainer(c.Container); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Proxy != "" {
		errs = append(errs, errors.New("proxy: not supported; Portcullis uses the process's HTTPS_PROXY settings"))
	}
	return c, errors.Join(errs...)
}

// WebDAV is a [Storage] on a WebDAV server, below a container path, with
// gowebdav. Basic authentication is sent with every request
// (preemptively), so uploads stream; gowebdav's negotiating
// authenticator, needed for digest, holds an upload in memory to replay
// it, so digest services cap nothing beyond the pipeline's upload cap and
// should be used for small files. Reads are ranged GETs, so range
// requests reach the server.
type WebDAV struct {
	client *gowebdav.Client
	http   *http.Client
	cfg    WebDAVConfig
}

var _ Storage = (*WebDAV)(nil)

// NewWebDAV returns the storage for cfg (checked by ParseWebDAVConfig).
// dial, when set, replaces the network dialer.
func NewWebDAV(cfg WebDAVConfig, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *WebDAV {
	if cfg.Timeout == 0 {
		cfg.Timeout = 30
	}
	root := strings.TrimSuffix(cfg.BaseURI, "/") + "/" + strings.Trim(cfg.Container, "/")
	var auth gowebdav.Authorizer
	switch strings.ToLower(cfg.AuthType) {
	case "digest":
		auth = gowebdav.NewAutoAuth(cfg.Username, cfg.Password)
	case "none":
		auth = gowebdav.NewPreemptiveAuth(noAuth{})
	default:
		auth = gowebdav.NewPreemptiveAuth(basicAuth{user: cfg.Username, pw: cfg.Password})
	}
	c := gowebdav.NewAuthClient(root, auth)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	timeout := time.Duration(cfg.Timeout) * time.Second
	tr.ResponseHeaderTimeout = timeout
	tr.TLSHandshakeTimeout = timeout
	d := &net.Dialer{Timeout: timeout}
	tr.DialContext = d.DialContext
	if dial != nil {
		tr.DialContext = dial
	}
	c.SetTransport(tr)
	return &WebDAV{client: c, cfg: cfg, http: &http.Client{Transport: tr}}
}

// basicAuth sends HTTP basic credentials with every request; gowebdav's
// own BasicAuth has no exported constructor.
type basicAuth struct{ user, pw string }

func (b basicAuth) Authorize(_ *http.Client, rq *http.Request, _ string) error {
	rq.SetBasicAuth(b.user, b.pw)
	return nil
}

func (b basicAuth) Verify(_ *http.Client, rs *http.Response, p string) (bool, error) {
	if rs.StatusCode == http.StatusUnauthorized {
		return false, gowebdav.NewPathError("Authorize", p, rs.StatusCode)
	}
	return false, nil
}

func (b basicAuth) Close() error                  { return nil }
func (b basicAuth) Clone() gowebdav.Authenticator { return b }
func (b basicAuth) String() string                { return "BasicAuth login: " + b.user }

// noAuth sends no credentials.
type noAuth struct{}

func (noAuth) Authorize(*http.Client, *http.Request, string) error { return nil }
func (noAuth) Verify(_ *http.Client, rs *http.Response, p string) (bool, error) {
	if rs.StatusCode == http.StatusUnauthorized {
		return false, gowebdav.NewPathError("Authorize", p, rs.StatusCode)
	}
	return false, nil
}
func (noAuth) Close() error                  { return nil }
func (noAuth) Clone() gowebdav.Authenticator { return noAuth{} }
func (noAuth) String() string                { return "NoAuth" }

// davErr maps gowebdav's errors onto the Storage errors.
func davErr(err error) error {
	if err == nil {
		return nil
	}
	var se gowebdav.StatusError
	if errors.As(err, &se) {
		switch se.Status {
		case http.StatusNotFound, http.StatusConflict:
			return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		case http.StatusMethodNotAllowed, http.StatusPreconditionFailed:
			return fmt.Errorf("%w: %w", fs.ErrExist, err)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%w: %w", fs.ErrPermission, err)
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// dav names a storage name for gowebdav (relative to the root it was given).
func dav(name string) string { return "/" + name }

// Stat describes name.
func (w *WebDAV) Stat(_ context.Context, name string) (fs.FileInfo, error) {
	if name == "" {
		fi, err := w.client.Stat("/")
		return fi, davErr(err)
	}
	fi, err := w.client.Stat(dav(name))
	return fi, davErr(err)
}

// ReadDir lists the folder name, sorted by name.
func (w *WebDAV) ReadDir(_ context.Context, name string) ([]fs.FileInfo, error) {
	infos, err := w.client.ReadDir(dav(name))
	if err != nil {
		return nil, davErr(err)
	}
	out := infos[:0]
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), tempPrefix) || fi.Name() == "" {
			continue
		}
		out = append(out, fi)
	}
	slices.SortFunc(out, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Open opens the file name for reading; reads after a seek are ranged
// GETs.
func (w *WebDAV) Open(ctx context.Context, name string) (File, error) {
	fi, err := w.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a folder", fs.ErrNotExist, name)
	}
	return &davFile{w: w, name: dav(name), size: fi.Size()}, nil
}

// davFile reads a remote file from an offset, opening a ranged stream
// lazily after each seek.
type davFile struct {
	w      *WebDAV
	name   string
	size   int64
	offset int64
	rc     io.ReadCloser
}

func (f *davFile) Read(p []byte) (int, error) {
	if f.offset >= f.size {
		return 0, io.EOF
	}
	if f.rc == nil {
		var err error
		if f.offset == 0 {
			f.rc, err = f.w.client.ReadStream(f.name)
		} else {
			f.rc, err = f.w.client.ReadStreamRange(f.name, f.offset, f.size-f.offset)
		}
		if err != nil {
			return 0, davErr(err)
		}
	}
	n, err := f.rc.Read(p)
	f.offset += int64(n)
	return n, err
}

func (f *davFile) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = f.offset + offset
	case io.SeekEnd:
		abs = f.size + offset
	default:
		return 0, errors.New("webdav: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("webdav: negative position")
	}
	if abs != f.offset && f.rc != nil {
		f.rc.Close()
		f.rc = nil
	}
	f.offset = abs
	return abs, nil
}

func (f *davFile) Close() error {
	if f.rc != nil {
		return f.rc.Close()
	}
	return nil
}

// Write uploads to a hidden name next to name, then moves it into place,
// so a failed upload never replaces the file.
func (w *WebDAV) Write(ctx context.Context, name string, r io.Reader, exclusive bool) (int64, error) {
	if fi, err := w.Stat(ctx, parent(name)); err != nil || !fi.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%w: folder of %s", fs.ErrNotExist, name)
		}
		return 0, err
	}
	if fi, err := w.Stat(ctx, name); err == nil && (exclusive || fi.IsDir()) {
		return 0, fmt.Errorf("%w: %s", fs.ErrExist, name)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := dav(join(parent(name), tempPrefix+hex.EncodeToString(rnd[:])))
	cr := &countingReader{r: contextReader{ctx, r}}
	// Length 0 with a body is sent chunked (length unknown).
	if err := w.client.WriteStreamWithLength(tmp, cr, 0, 0o644); err != nil {
		_ = w.client.Remove(tmp)
		if cr.err != nil {
			return cr.n, cr.err
		}
		return cr.n, davErr(err)
	}
	if err := w.client.Rename(tmp, dav(name), !exclusive); err != nil {
		_ = w.client.Remove(tmp)
		return cr.n, davErr(err)
	}
	return cr.n, nil
}

// countingReader counts what it read and keeps the body's own error (a
// client that went away, a body over the cap), which gowebdav would
// otherwise report as a failed request.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// Mkdir creates the folder name.
func (w *WebDAV) Mkdir(ctx context.Context, name string) error {
	if _, err := w.Stat(ctx, name); err == nil {
		return fmt.Errorf("%w: %s", fs.ErrExist, name)
	}
	if fi, err := w.Stat(ctx, parent(name)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: folder of %s", fs.ErrNotExist, name)
	}
	return davErr(w.client.Mkdir(dav(name), 0o755))
}

// MkdirAll creates the folder name and its missing parents.
func (w *WebDAV) MkdirAll(_ context.Context, name string) error {
	return davErr(w.client.MkdirAll(dav(name), 0o755))
}

// Remove deletes a file or an empty folder.
func (w *WebDAV) Remove(ctx context.Context, name string) error {
	fi, err := w.Stat(ctx, name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		infos, err := w.ReadDir(ctx, name)
		if err != nil {
			return err
		}
		if len(infos) > 0 {
			return fmt.Errorf("%w: %s", ErrNotEmpty, name)
		}
	}
	return davErr(w.client.Remove(dav(name)))
}

// RemoveAll deletes name and everything below it (WebDAV DELETE is
// recursive).
func (w *WebDAV) RemoveAll(ctx context.Context, name string) error {
	if name == "" {
		return errors.New("webdav: refusing to remove the container itself")
	}
	if _, err := w.Stat(ctx, name); err != nil {
		return err
	}
	return davErr(w.client.RemoveAll(dav(name)))
}

// Close releases idle connections.
func (w *WebDAV) Close() error {
	w.http.CloseIdleConnections()
	return nil
}
