package rws

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// directTransport exchanges a request without a body with a plain-HTTP
// upstream in the caller's goroutine. http.Transport runs every exchange
// through two goroutines of its connection (one writes the request, one
// reads the answer) and hands the request and the answer between them and
// the caller over channels; for a small answer those hand-offs, their
// wake-ups and the contexts and timers around them cost about as much as
// the exchange itself (see the package documentation).
//
// It is the same HTTP/1.1 as the Transport's: the request is written by
// [http.Request.Write] and the answer read by [http.ReadResponse], the two
// functions the Transport itself uses, over the same dialer, buffer sizes,
// header-size limit, idle pool bounds and retry rules. What it does
// differently is how it waits: the exchange's time limits are deadlines on
// the connection rather than timers and contexts of its own, and the
// end of the client's request aborts the exchange by moving those
// deadlines to the past.
//
// [Proxy.ServeHTTP] uses it only for what it can do exactly as the
// Transport would: http:// base URLs with an ASCII host and no
// environment proxy, and requests without a body (see [Proxy.useDirect]).
// Everything else, and every https:// upstream (TLS, HTTP/2), goes through
// the Transport.
type directTransport struct {
	addr          string // host:port dialled, the Transport's canonicalAddr
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	headerTimeout time.Duration // the Transport's ResponseHeaderTimeout
	idleTimeout   time.Duration
	maxIdle       int

	mu    sync.Mutex
	idle  []*directConn // most recently used last
	sweep *time.Timer   // closes connections idle for idleTimeout; armed while idle is not empty
	armed bool
}

// maxHeaderBytes is the Transport's default MaxResponseHeaderBytes.
const maxHeaderBytes = 10 << 20

// bufferSize is the Transport's default read and write buffer size.
const bufferSize = 4 << 10

// newDirectTransport returns a directTransport for base beside tr (whose
// dialer, timeouts and pool bounds it takes), or nil when base is not a
// URL it can serve exactly as tr would: not http://, a host name that is
// not ASCII (the Transport converts it to punycode), or a proxy from the
// environment that applies to it.
func newDirectTransport(base *url.URL, tr *http.Transport) *directTransport {
	if base.Scheme != "http" || base.Host == "" || tr.DialContext == nil {
		return nil
	}
	host := base.Hostname()
	for i := range len(host) {
		if host[i] >= 0x80 {
			return nil
		}
	}
	if tr.Proxy != nil {
		if u, err := tr.Proxy(&http.Request{Method: http.MethodGet, URL: base, Header: http.Header{}}); u != nil || err != nil {
			return nil
		}
	}
	port := base.Port()
	if port == "" {
		port = "80"
	}
	maxIdle := tr.MaxIdleConnsPerHost
	if maxIdle <= 0 {
		maxIdle = http.DefaultMaxIdleConnsPerHost
	}
	if tr.MaxIdleConns > 0 && tr.MaxIdleConns < maxIdle {
		maxIdle = tr.MaxIdleConns
	}
	return &directTransport{
		addr:          net.JoinHostPort(host, port),
		dial:          tr.DialContext,
		headerTimeout: tr.ResponseHeaderTimeout,
		idleTimeout:   tr.IdleConnTimeout,
		maxIdle:       maxIdle,
	}
}

// directConn is one kept-alive connection of a directTransport. It is
// used by one exchange at a time: taken from the pool, given back when its
// answer has been read to the end.
type directConn struct {
	t      *directTransport
	conn   net.Conn
	raw    syscall.RawConn // for the liveness check; nil when the connection has none
	br     *bufio.Reader   // reads through the connection's header limit (Read)
	bw     *bufio.Writer   // writes through Write, which counts
	limit  int64           // bytes the answer's headers may still take
	nwrite int64
	idleAt time.Time
	reused bool

	// The exchange in progress.
	parent   context.Context
	deadline time.Time   // the whole exchange's, zero for none
	stop     func() bool // stops the watch on parent; nil when parent cannot end
	deadSet  bool        // a deadline is set on the connection
	abortFn  func()      // abort, as a func value made once
	peekFn   func(uintptr) bool
	peekOK   bool
	peekBuf  [1]byte
}

// Read reads from the connection within the header limit, as the
// Transport's persistConn.Read.
func (c *directConn) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		return 0, fmt.Errorf("read limit of %d bytes exhausted", maxHeaderBytes)
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.conn.Read(p)
	c.limit -= int64(n)
	return n, err
}

// Write writes to the connection, counting what it wrote.
func (c *directConn) Write(p []byte) (int, error) {
	n, err := c.conn.Write(p)
	c.nwrite += int64(n)
	return n, err
}

// abort ends the exchange when the client's request ends: every read and
// write on the connection fails at once.
func (c *directConn) abort() { _ = c.conn.SetDeadline(aLongTimeAgo) }

var aLongTimeAgo = time.Unix(1, 0)

// errDirectClosedBody is what a read of an answer's body returns after
// Close, as the Transport's.
var errDirectClosedBody = errors.New("http: read on closed response body")

// roundTrip sends req, which has no body, and reads the answer's headers,
// relaying informational answers to got1xx; body is where the answer's
// body is kept, which must outlive the reading of it. deadline bounds the whole
// exchange, the answer's body included (zero: no bound); the end of
// parent aborts it. The answer's body gives the connection back to the
// pool when it has been read to its end. Errors are the Transport's for
// the same failures, except that time limits show as the connection's
// deadline errors (see [directConn.readErr]).
func (t *directTransport) roundTrip(req *http.Request, parent context.Context, deadline time.Time,
	got1xx func(int, textproto.MIMEHeader) error, body *directBody) (*http.Response, error) {
	if err := validateHeaders(req.Header); err != "" {
		return nil, fmt.Errorf("net/http: invalid header %s", err)
	}
	if !validMethod(req.Method) {
		return nil, fmt.Errorf("net/http: invalid method %q", req.Method)
	}
	for {
		if err := parent.Err(); err != nil {
			return nil, context.Cause(parent)
		}
		c, err := t.get(parent, deadline)
		if err != nil {
			return nil, err
		}
		res, retry, err := c.exchange(req, parent, deadline, got1xx, body)
		if err == nil {
			return res, nil
		}
		if !retry {
			return nil, err
		}
	}
}

// validateHeaders is the Transport's check of outgoing headers.
func validateHeaders(h http.Header) string {
	for k, vv := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Sprintf("field name %q", k)
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Sprintf("field value for %q", k)
			}
		}
	}
	return ""
}

// validMethod reports whether m is a token, as the Transport requires.
func validMethod(m string) bool {
	if m == "" {
		return true
	}
	for i := range len(m) {
		if !httpguts.IsTokenRune(rune(m[i])) {
			return false
		}
	}
	return true
}

// replayable reports whether req may be sent again after a kept-alive
// connection failed before the first byte of its answer
// (http.Request.isReplayable, for a request without a body).
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	_, ok1 := req.Header["Idempotency-Key"]
	_, ok2 := req.Header["X-Idempotency-Key"]
	return ok1 || ok2
}

// get returns an idle connection that is still open, or dials one.
func (t *directTransport) get(parent context.Context, deadline time.Time) (*directConn, error) {
	var now time.Time
	t.mu.Lock()
	for n := len(t.idle); n > 0; n = len(t.idle) {
		c := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if now.IsZero() {
			now = time.Now()
		}
		if now.Sub(c.idleAt) < t.idleTimeout && c.alive() {
			c.reused = true
			return c, nil
		}
		_ = c.conn.Close()
		t.mu.Lock()
	}
	t.mu.Unlock()

	ctx := parent
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(parent, deadline)
		defer cancel()
	}
	conn, err := t.dial(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	c := &directConn{t: t, conn: conn}
	c.br = bufio.NewReaderSize(c, bufferSize)
	c.bw = bufio.NewWriterSize(c, bufferSize)
	if sc, ok := conn.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	c.abortFn = c.abort
	c.peekFn = c.peek
	return c, nil
}

// put keeps c for the next exchange, or closes it when the pool is full.
func (t *directTransport) put(c *directConn) {
	c.idleAt = time.Now()
	t.mu.Lock()
	if len(t.idle) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.conn.Close()
		return
	}
	t.idle = append(t.idle, c)
	if !t.armed && t.idleTimeout > 0 {
		t.armed = true
		if t.sweep == nil {
			t.sweep = time.AfterFunc(t.idleTimeout, t.sweepIdle)
		} else {
			t.sweep.Reset(t.idleTimeout)
		}
	}
	t.mu.Unlock()
}

// sweepIdle closes the connections that have been idle for idleTimeout,
// as the Transport's per-connection idle timers do, and runs again when
// the oldest of the others will be.
func (t *directTransport) sweepIdle() {
	now := time.Now()
	t.mu.Lock()
	n := 0
	for n < len(t.idle) && now.Sub(t.idle[n].idleAt) >= t.idleTimeout {
		n++
	}
	stale := append([]*directConn(nil), t.idle[:n]...)
	t.idle = append(t.idle[:0], t.idle[n:]...)
	clear(t.idle[len(t.idle):cap(t.idle)])
	if len(t.idle) > 0 {
		t.sweep.Reset(t.idleTimeout - now.Sub(t.idle[0].idleAt))
	} else {
		t.armed = false
	}
	t.mu.Unlock()
	for _, c := range stale {
		_ = c.conn.Close()
	}
}

// closeIdle closes the idle connections.
func (t *directTransport) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		_ = c.conn.Close()
	}
}

// alive reports whether an idle connection can carry a request: the
// upstream has neither closed it nor sent anything unasked (the
// Transport's read loop notices both while the connection is idle).
func (c *directConn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.raw == nil {
		return true
	}
	c.peekOK = false
	if err := c.raw.Read(c.peekFn); err != nil {
		return false
	}
	return c.peekOK
}

// exchange writes req and reads the answer's headers on c. On failure c is
// closed, and retry says whether the request may go on another
// connection, by the Transport's rules: c was kept alive, and nothing of
// the request was written, or nothing of the answer read and the request
// is replayable.
func (c *directConn) exchange(req *http.Request, parent context.Context, deadline time.Time,
	got1xx func(int, textproto.MIMEHeader) error, body *directBody) (res *http.Response, retry bool, err error) {
	c.parent, c.deadline = parent, deadline
	if parent.Done() != nil {
		c.stop = context.AfterFunc(parent, c.abortFn)
	}
	if !deadline.IsZero() {
		_ = c.conn.SetDeadline(deadline)
		c.deadSet = true
	}
	start := c.nwrite
	c.limit = maxHeaderBytes
	if err = writeRequest(c.bw, req); err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		err = c.readErr(err)
		c.close()
		return nil, c.reused && c.nwrite == start, err
	}

	rd := deadline
	if c.t.headerTimeout > 0 {
		if hd := time.Now().Add(c.t.headerTimeout); rd.IsZero() || hd.Before(rd) {
			rd = hd
		}
	}
	if !rd.Equal(deadline) {
		_ = c.conn.SetReadDeadline(rd)
		c.deadSet = true
	}
	if _, err = c.br.Peek(1); err != nil {
		err = c.readErr(err)
		c.close()
		return nil, c.reused && replayable(req), err
	}
	for {
		res, err = http.ReadResponse(c.br, req)
		if err != nil {
			if c.limit <= 0 {
				err = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHeaderBytes)
			}
			err = c.readErr(err)
			c.close()
			return nil, false, err
		}
		code := res.StatusCode
		if code < 100 || code > 199 || code == http.StatusSwitchingProtocols {
			break
		}
		if got1xx != nil {
			if err = got1xx(code, textproto.MIMEHeader(res.Header)); err != nil {
				c.close()
				return nil, false, err
			}
			c.limit = maxHeaderBytes
		}
	}
	c.limit = math.MaxInt64
	if !rd.Equal(deadline) {
		_ = c.conn.SetReadDeadline(deadline)
	}
	if res.Body == http.NoBody {
		// HEAD, 204, 304: nothing follows the headers.
		c.release(!res.Close && res.StatusCode != http.StatusSwitchingProtocols)
		return res, false, nil
	}
	*body = directBody{c: c, rc: res.Body, res: res}
	res.Body = body
	return res, false, nil
}

// readErr is what a failed read or write on c reports: the end of the
// client's request, or the whole exchange's deadline, as the Transport
// reports them (the context's error), else err.
func (c *directConn) readErr(err error) error {
	if c.parent.Err() != nil {
		return context.Cause(c.parent)
	}
	if !c.deadline.IsZero() && errors.Is(err, errDeadline) && !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return err
}

// errDeadline is a connection's deadline error (os.ErrDeadlineExceeded).
var errDeadline error = deadlineErr()

func deadlineErr() error {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	_ = c1.SetReadDeadline(aLongTimeAgo)
	_, err := c1.Read(make([]byte, 1))
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// release ends the exchange: c goes back to the pool when reuse is set
// and nothing else stands in the way, and is closed otherwise.
func (c *directConn) release(reuse bool) {
	stopped := c.stop == nil || c.stop()
	c.stop, c.parent = nil, nil
	if !reuse || !stopped || c.br.Buffered() > 0 {
		_ = c.conn.Close()
		return
	}
	if c.deadSet {
		if c.conn.SetDeadline(time.Time{}) != nil {
			_ = c.conn.Close()
			return
		}
		c.deadSet = false
	}
	c.t.put(c)
}

// close ends a failed exchange.
func (c *directConn) close() { c.release(false) }

// directBody is an answer's body: it gives the connection back at its
// end, and closes it when the body is closed before.
type directBody struct {
	c      *directConn
	rc     io.ReadCloser
	res    *http.Response
	err    error // io.EOF or the read's error once the connection is released
	closed bool
}

func (b *directBody) Read(p []byte) (int, error) {
	switch {
	case b.closed:
		return 0, errDirectClosedBody
	case b.err != nil:
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.err = err
		// The trailer, if any, has been read into res.Trailer.
		b.c.release(!b.res.Close && b.res.StatusCode != http.StatusSwitchingProtocols)
	} else if err != nil {
		err = b.c.readErr(err)
		b.err = err
		b.c.close()
	}
	return n, err
}

func (b *directBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.err == nil {
		// Closed before its end: the Transport's body does not drain
		// either, the connection goes.
		b.err = io.EOF
		b.c.close()
	}
	return nil
}

// writeRequest writes req to bw as req.Write does (to a server, not a
// proxy, no body), byte for byte, without the formatting and the sorting
// pool that allocate there: the request line, Host, User-Agent (Go's
// unless the header is there; not sent when empty), Content-Length: 0 for
// POST, PUT and PATCH, then the other headers sorted by name, invalid
// names left out, each value with its line breaks made spaces and trimmed.
// Anything else (a body, trailers, Close, an opaque URL, CONNECT, a host
// that req.Write would convert, clear or strip of a zone) goes to
// req.Write itself. TestWriteRequestMatchesWrite compares the two.
func writeRequest(bw *bufio.Writer, req *http.Request) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if req.Body != nil || req.ContentLength != 0 || len(req.TransferEncoding) > 0 || req.Trailer != nil ||
		req.Close || req.URL.Opaque != "" || req.Method == http.MethodConnect || !plainHost(host) {
		return req.Write(bw)
	}
	path := req.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	query := req.URL.ForceQuery || req.URL.RawQuery != ""
	if hasCTL(path) || query && hasCTL(req.URL.RawQuery) {
		return errors.New("net/http: can't write control character in Request.URL")
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	bw.WriteString(method)
	bw.WriteByte(' ')
	bw.WriteString(path)
	if query {
		bw.WriteByte('?')
		bw.WriteString(req.URL.RawQuery)
	}
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\n")
	ua := "Go-http-client/1.1"
	if vs, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(vs) > 0 {
			ua = vs[0]
		}
	}
	if ua != "" {
		bw.WriteString("User-Agent: ")
		bw.WriteString(textproto.TrimString(headerNewlineToSpace.Replace(ua)))
		bw.WriteString("\r\n")
	}
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		bw.WriteString("Content-Length: 0\r\n")
	}
	var buf [24]string
	keys := buf[:0]
	for k := range req.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		for _, v := range req.Header[k] {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(textproto.TrimString(headerNewlineToSpace.Replace(v)))
			bw.WriteString("\r\n")
		}
	}
	_, err := bw.WriteString("\r\n")
	return err
}

// headerNewlineToSpace is net/http's replacer of line breaks in header
// values.
var headerNewlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// plainHost reports whether req.Write would send host as it is: ASCII
// (no punycode conversion), a valid Host header, no IPv6 zone.
func plainHost(host string) bool {
	for i := range len(host) {
		if c := host[i]; c >= 0x80 || c == '%' {
			return false
		}
	}
	return httpguts.ValidHostHeader(host)
}

// hasCTL reports whether s holds an ASCII control character.
func hasCTL(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
