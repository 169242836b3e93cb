package rws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// exchange is one request forwarded by [Proxy.forward]: its plan and the
// 1xx hook, in one allocation.
type exchange struct {
	plan
	trace httptrace.ClientTrace
	mu    sync.Mutex
	done  bool // RoundTrip has returned: the 1xx hook leaves w alone

	// For the direct transport, whose exchanges end when forwardDirect
	// returns, so that the exchange goes back to the pool with these: the
	// outbound request, its header map (kept, cleared, between uses) and
	// the answer's body.
	req    http.Request
	header http.Header
	body   directBody
}

// exchanges pools the exchanges of the direct transport. An exchange
// that went through http.Transport or ReverseProxy is never put back: their
// goroutines may call its 1xx hook after the handler has returned.
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// recycle clears x for its next request and puts it back in the pool.
func (x *exchange) recycle() {
	h := x.header
	if len(h) > 32 {
		h = nil
	}
	clear(h)
	*x = exchange{header: h}
	exchanges.Put(x)
}

// hopHeader reports whether k is a hop-by-hop header (RFC 9110 section
// 7.6.1 and RFC 2616 section 13.5.1), never forwarded, as in
// httputil.ReverseProxy's list; the headers a Connection header names go
// too.
func hopHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// forwardedHeader reports whether k is one of the client's forwarding
// headers, replaced by the proxy's own (see [Proxy.setHeaders]).
func forwardedHeader(k string) bool {
	switch k {
	case "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto":
		return true
	}
	return false
}

// needsReverseProxy reports whether r is forwarded by httputil.ReverseProxy
// rather than by [Proxy.forward]: a protocol upgrade (WebSocket, h2c), which
// ReverseProxy answers by hijacking the connection, or a request without a
// cancellation signal, which ReverseProxy watches through CloseNotifier.
func needsReverseProxy(w http.ResponseWriter, r *http.Request, ctx context.Context) bool {
	if httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade") {
		return true
	}
	if ctx.Done() == nil {
		//lint:ignore SA1019 ReverseProxy watches CloseNotifier when the context cannot be cancelled
		_, ok := w.(http.CloseNotifier)
		return ok
	}
	return false
}

// useDirect reports whether r goes through the direct transport: the
// upstream is plain HTTP (see [newDirectTransport]), r has no body, asks
// for no protocol upgrade, and can be cancelled (or has a time limit), so
// that nothing would send it to ReverseProxy.
func (p *Proxy) useDirect(w http.ResponseWriter, r *http.Request) bool {
	if p.direct == nil || r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		return false
	}
	if httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade") {
		return false
	}
	return p.cfg.Timeout > 0 || !needsReverseProxy(w, r, r.Context())
}

// outbound returns the request sent upstream for r: built once from the
// plan, with a header map that shares the client's values.
func (p *Proxy) outbound(r *http.Request, pl *plan, h http.Header) http.Request {
	return http.Request{
		Method: r.Method,
		URL:    &pl.url,
		Proto:  r.Proto, ProtoMajor: r.ProtoMajor, ProtoMinor: r.ProtoMinor,
		Header:           p.outboundHeader(r, pl, h),
		ContentLength:    r.ContentLength,
		TransferEncoding: r.TransferEncoding,
		Host:             pl.host,
		Trailer:          r.Trailer.Clone(),
		RemoteAddr:       r.RemoteAddr,
	}
}

// forward sends the planned request upstream and streams the answer back,
// doing what httputil.ReverseProxy with Rewrite does for a request that is
// not a protocol upgrade, without its per-request copies: the outbound
// request is built once from the plan, and the upstream's header values
// are handed to the response as they are. ctx carries the exchange's
// timeout.
func (p *Proxy) forward(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange) {
	pl := &x.plan
	req := p.outbound(r, pl, nil)
	if r.ContentLength != 0 && r.Body != nil {
		// The transport closes the body it was given when the exchange
		// fails; the client's body is the server's to close.
		body := &clientBody{body: r.Body}
		req.Body = body
		defer body.Close()
	}
	x.trace.Got1xxResponse = x.got1xx
	// WithContext copies the request once, the only way to give it its
	// context.
	out := req.WithContext(httptrace.WithClientTrace(ctx, &x.trace))

	res, err := p.transport.RoundTrip(out)
	x.mu.Lock()
	x.done = true
	x.mu.Unlock()
	if err != nil {
		p.fail(w, out, pl, err)
		return
	}
	if err := p.respond(w, r, res, pl); err != nil {
		p.fail(w, out, pl, err)
	}
}

// forwardDirect is forward for a request [Proxy.useDirect] accepts, over
// the direct transport: the same request, the same answer, the same
// errors. The time limit is the connection's deadline rather than a
// context, and informational answers are relayed from the caller's
// goroutine.
func (p *Proxy) forwardDirect(w http.ResponseWriter, r *http.Request, x *exchange) {
	pl := &x.plan
	x.req = p.outbound(r, pl, x.header)
	x.header = x.req.Header
	req := &x.req
	var deadline time.Time
	if p.cfg.Timeout > 0 {
		deadline = time.Now().Add(p.cfg.Timeout)
	}
	res, err := p.direct.roundTrip(req, pl.parentCtx, deadline, x.got1xx, &x.body)
	if err == nil {
		err = p.respond(w, r, res, pl)
		if err == nil {
			return
		}
	}
	// Failed: the outbound request, with the context the Transport's
	// would have had (expired when the time limit has passed), for the
	// classification and the log.
	ctx := pl.parentCtx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	p.fail(w, req.WithContext(ctx), pl, err)
}

// respond streams the upstream's answer res to w. An answer that cannot be
// relayed (a protocol switch nobody asked for) is returned as an error for
// the caller to answer; a failure while streaming aborts the response.
func (p *Proxy) respond(w http.ResponseWriter, r *http.Request, res *http.Response, pl *plan) error {
	if res.StatusCode == http.StatusSwitchingProtocols {
		// The request asked for no upgrade (those go to ReverseProxy).
		p.filterResponse(res, pl)
		res.Body.Close()
		return fmt.Errorf("backend tried to switch protocol %q when %q was requested", upgradeType(res.Header), "")
	}
	removeHopByHopHeaders(res.Header)
	p.filterResponse(res, pl)

	h := w.Header()
	shareHeader(h, res.Header)
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, len(res.Trailer))
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)

	if err := p.copyBody(w, res); err != nil {
		defer res.Body.Close()
		// Streaming, all that can be done is to abort the response so the
		// client sees it truncated (ReverseProxy does the same).
		if r.Context().Value(http.ServerContextKey) == nil {
			p.errLog.Printf("suppressing panic for copyResponse error in test; copy error: %v", err)
			return nil
		}
		panic(http.ErrAbortHandler)
	}
	res.Body.Close() // now, to populate res.Trailer
	if len(res.Trailer) > 0 {
		// Force chunking, so no Content-Length is computed for a short body.
		_ = http.NewResponseController(w).Flush()
	}
	if len(res.Trailer) == announced {
		shareHeader(h, res.Trailer)
		return nil
	}
	for k, vs := range res.Trailer {
		for _, v := range vs {
			h.Add(http.TrailerPrefix+k, v)
		}
	}
	return nil
}

// got1xx relays an informational answer (103 Early Hints and the like) to
// the client while the exchange waits for the final one, as ReverseProxy
// does.
func (x *exchange) got1xx(code int, header textproto.MIMEHeader) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return nil
	}
	x.snapshotPreset()
	h := x.w.Header()
	for k, vs := range header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	x.w.WriteHeader(code)
	// WriteHeader does not clear the header map after a 1xx answer.
	clear(h)
	return nil
}

// outboundHeader returns the headers sent upstream: the client's, minus
// hop-by-hop, forwarding and platform-credential headers, plus the
// proxy's (see [Proxy.setHeaders]). The values are the client's slices,
// which neither side modifies. They are put in h, which must be empty,
// or in a new map when h is nil.
func (p *Proxy) outboundHeader(r *http.Request, pl *plan, h http.Header) http.Header {
	if h == nil {
		h = make(http.Header, p.outboundSize(r, pl))
	}
	for k, vs := range r.Header {
		if !dropped(k) {
			h[k] = vs
		}
	}
	for _, f := range r.Header["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	// Tell an upstream that cares that the proxy passes trailers on, when
	// the client said it takes them (ReverseProxy's rule).
	if httpguts.HeaderValuesContainsToken(r.Header["Te"], "trailers") {
		h["Te"] = []string{"trailers"}
	}
	p.setHeaders(r, h, pl)
	return h
}

// outboundSize is the number of names outboundHeader may put in its map
// (at most: a configured header may replace the client's), so that the
// map is made once and, up to eight names, as a single small map.
func (p *Proxy) outboundSize(r *http.Request, pl *plan) int {
	n := 3 + len(pl.set) // X-Forwarded-For, -Host and -Proto
	if pl.requestID != "" {
		n++
	}
	if pl.prefix != "" {
		n++
	}
	if p.basicAuth != "" {
		n++
	}
	if _, ok := r.Header["User-Agent"]; !ok {
		n++
	}
	for k := range r.Header {
		if !dropped(k) {
			n++
		}
	}
	return n
}

// dropped reports whether a client request header is left out of the
// outbound request before the proxy adds its own: hop-by-hop, forwarding
// and platform-credential headers.
func dropped(k string) bool {
	return hopHeader(k) || forwardedHeader(k) || stripped(k)
}

// setHeaders applies the plan to an outbound header from which the
// hop-by-hop, forwarding and platform-credential headers are gone:
// configured headers left out or set, X-Forwarded-For, -Host, -Proto and
// -Prefix, the request id, the base URL's credentials, and an empty
// User-Agent when the client sent none (so Go's is not sent either).
func (p *Proxy) setHeaders(in *http.Request, h http.Header, pl *plan) {
	for _, n := range pl.omit {
		h.Del(n)
	}
	// The single values set here share the plan's array; each slice is
	// capped at its length, so appending to one never reaches the next.
	vals := pl.vals[:0]
	one := func(k, v string) {
		vals = append(vals, v)
		n := len(vals)
		h[k] = vals[n-1 : n : n]
	}
	if ip, _, err := net.SplitHostPort(in.RemoteAddr); err == nil {
		one("X-Forwarded-For", ip)
	} else {
		delete(h, "X-Forwarded-For")
	}
	one("X-Forwarded-Host", in.Host)
	if in.TLS == nil {
		one("X-Forwarded-Proto", "http")
	} else {
		one("X-Forwarded-Proto", "https")
	}
	if pl.requestID != "" {
		one("X-Request-Id", pl.requestID)
	}
	delete(h, "X-Forwarded-Prefix")
	if pl.prefix != "" {
		one("X-Forwarded-Prefix", pl.prefix)
	}
	for k, vs := range pl.set {
		h[k] = vs
	}
	if p.basicAuth != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", p.basicAuth)
	}
	if _, ok := h["User-Agent"]; !ok {
		one("User-Agent", "")
	}
}

// removeHopByHopHeaders removes the hop-by-hop headers of an upstream
// response, as ReverseProxy does.
func removeHopByHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for k := range h {
		if hopHeader(k) {
			delete(h, k)
		}
	}
}

// upgradeType returns the protocol a Connection: Upgrade header asks for.
func upgradeType(h http.Header) string {
	if !httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// shareHeader adds src's values to dst, handing over src's slices for the
// names dst does not hold. src is an upstream response's header, owned by
// the exchange; its slices are capped, so a later Add copies.
func shareHeader(dst, src http.Header) {
	for k, vs := range src {
		if old, ok := dst[k]; ok {
			dst[k] = append(old, vs...)
		} else {
			dst[k] = vs
		}
	}
}

// copyBody streams the upstream's body to the client with a pooled
// buffer. Event streams and bodies of unknown length are flushed as each
// chunk arrives, and their headers at once (ReverseProxy's rule). It
// returns a write error or a read error other than EOF.
func (p *Proxy) copyBody(w http.ResponseWriter, res *http.Response) error {
	var dst io.Writer = w
	if streamed(res) {
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		dst = flushWriter{w: w, rc: rc}
	}
	buf := copyBuffers.Get()
	defer copyBuffers.Put(buf)
	for {
		nr, rerr := res.Body.Read(buf)
		if rerr != nil && rerr != io.EOF && rerr != context.Canceled {
			p.errLog.Printf("httputil: ReverseProxy read error during body copy: %v", rerr)
		}
		if nr > 0 {
			nw, werr := dst.Write(buf[:nr])
			if werr != nil {
				return werr
			}
			if nw != nr {
				return io.ErrShortWrite
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// streamed reports whether a response is flushed chunk by chunk: an event
// stream, or a body of unknown length.
func streamed(res *http.Response) bool {
	if res.ContentLength == -1 {
		return true
	}
	ct := res.Header.Get("Content-Type")
	base, _, _ := strings.Cut(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(base), "text/event-stream") {
		return false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}

// flushWriter flushes after every write.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	_ = f.rc.Flush()
	return n, err
}

// clientBody keeps the transport from closing the client's body (the
// server's to close) and refuses reads once the handler is done with it,
// as ReverseProxy's wrapper does.
type clientBody struct {
	body   io.ReadCloser
	closed atomic.Bool
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errors.New("rws: read of the client's body after the exchange")
	}
	return b.body.Read(p)
}

func (b *clientBody) Close() error {
	b.closed.Store(true)
	return nil
}
