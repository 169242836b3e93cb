package rws

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// NotAllowedError is returned when the upstream allow list forbids the
// address a service points at; the proxy answers it with 502.
type NotAllowedError = upstream.NotAllowedError

// Proxy forwards requests to one remote HTTP service. It is an
// http.Handler usable alone (in front of any URL) or as the backend of an
// rws service; Close releases its idle connections.
type Proxy struct {
	cfg       Config
	base      *url.URL
	basicAuth string // from base_url's userinfo
	transport *http.Transport
	direct    *directTransport       // for requests without a body to a plain-HTTP upstream; nil when none
	rp        *httputil.ReverseProxy // for protocol upgrades (see needsReverseProxy)
	errLog    *log.Logger
	cache     *cache // nil when caching is off
	lookups   bool   // some header or parameter value holds a lookup
	// configured holds the canonical names of every configured header.
	configured http.Header
}

// New builds a Proxy from cfg; it validates cfg and never connects.
func New(cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("rws: invalid config: %w", err)
	}
	cfg = cfg.withDefaults()
	base, _ := parseBaseURL(cfg.BaseURL)
	allow, _ := upstream.ParseAllowList(cfg.UpstreamAllow)
	p := &Proxy{cfg: cfg, base: base, configured: http.Header{}}
	if u := base.User; u != nil {
		pw, _ := u.Password()
		p.basicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw))
		b := *base
		b.User = nil
		p.base = &b
	}
	for _, h := range cfg.Headers {
		name := http.CanonicalHeaderKey(h.Name)
		p.configured[name] = nil
		p.lookups = p.lookups || strings.Contains(h.Value, "{")
	}
	for _, q := range cfg.Parameters {
		p.lookups = p.lookups || strings.Contains(q.Value, "{")
	}

	tr := allow.Transport()
	// The exchange's context carries Timeout from the start, so a header
	// timer of the same length, which the transport starts later (once
	// the request is written), would never fire first: the transport gets
	// one only for a shorter HeaderTimeout.
	if cfg.HeaderTimeout > 0 && (cfg.Timeout <= 0 || cfg.HeaderTimeout < cfg.Timeout) {
		tr.ResponseHeaderTimeout = cfg.HeaderTimeout
	}
	// The client's Accept-Encoding (or its absence) goes upstream as sent
	// and the upstream's Content-Encoding comes back as it is, as reverse
	// proxies do. Left on, the transport would add "Accept-Encoding: gzip"
	// to every request that has none and unzip the answer, sending the
	// client a body without its length.
	tr.DisableCompression = true
	p.transport = tr
	p.direct = newDirectTransport(p.base, tr)
	if cfg.CacheEnabled {
		p.cache = newCache(cfg)
	}
	p.errLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      tr,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		BufferPool:     copyBuffers,
		ErrorLog:       p.errLog,
	}
	return p, nil
}

// copyBuffers lends the ReverseProxy its response copy buffers, which it
// would otherwise allocate (32 KiB) for every response.
var copyBuffers httputil.BufferPool = bufferPool{}

// copyBufferSize is the size of one copy buffer, ReverseProxy's own.
const copyBufferSize = 32 << 10

// bufferPool is an [httputil.BufferPool] over a sync.Pool of fixed-size
// arrays: a slice handed back converts to its array pointer without an
// allocation.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

func (bufferPool) Get() []byte { return buffers.Get().(*[copyBufferSize]byte)[:] }

func (bufferPool) Put(b []byte) {
	if cap(b) >= copyBufferSize {
		buffers.Put((*[copyBufferSize]byte)(b[:copyBufferSize]))
	}
}

// Close releases the proxy's idle upstream connections.
func (p *Proxy) Close() error {
	p.transport.CloseIdleConnections()
	if p.direct != nil {
		p.direct.closeIdle()
	}
	return nil
}

// FlushCache drops every cached response (DELETE /system/cache).
func (p *Proxy) FlushCache(context.Context) error {
	if p.cache != nil {
		p.cache.flush()
	}
	return nil
}

// plan is what one request is forwarded as; ServeHTTP computes it and
// forward (or, for an upgrade, the ReverseProxy hooks through the
// context) reads it.
type plan struct {
	url      url.URL
	host     string      // Host header override, "" for the URL's
	set      http.Header // configured headers to set, nil when none
	omit     []string    // configured headers left out (unresolved lookup)
	dropCORS bool        // the pipeline already set CORS headers
	// w is the client's response. The headers it holds before the
	// upstream answers are those the pipeline set (X-Request-Id,
	// X-RateLimit-*, CORS): they win over the upstream's of the same name
	// (see preset).
	w http.ResponseWriter
	// presetKeys lists those headers once snapped is set: when a 1xx
	// answer is about to clear w's header map, or before ReverseProxy
	// takes the request.
	presetKeys []string
	snapped    bool
	requestID  string // the pipeline's request id, forwarded upstream
	prefix     string // the public path the base URL is exposed at
	cacheKey   string // "" when the response is not to be cached
	parentCtx  context.Context
	// vals backs the single-valued headers setHeaders adds upstream.
	vals [6]string
}

// preset reports whether the pipeline set response header k before the
// proxy ran.
func (pl *plan) preset(k string) bool {
	if pl.snapped {
		return slices.Contains(pl.presetKeys, k)
	}
	_, ok := pl.w.Header()[k]
	return ok
}

// snapshotPreset records the headers the pipeline set, before w's header
// map changes.
func (pl *plan) snapshotPreset() {
	if pl.snapped {
		return
	}
	h := pl.w.Header()
	pl.presetKeys = make([]string, 0, len(h))
	for k := range h {
		pl.presetKeys = append(pl.presetKeys, k)
	}
	pl.snapped = true
}

type planKey struct{}

// ServeHTTP forwards r to the upstream and streams its answer back.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := exchanges.Get().(*exchange)
	pl := &x.plan
	if err := p.plan(r, pl); err != nil {
		apierr.Write(w, err)
		return
	}
	pl.w = w
	h := w.Header()
	_, pl.dropCORS = h["Access-Control-Allow-Origin"]
	pl.requestID = h.Get("X-Request-Id")
	if pl.cacheKey != "" && !noCache(r) {
		if e, ok := p.cache.get(pl.cacheKey); ok {
			serveCached(w, e, p.cfg.Now(), pl)
			return
		}
	}
	ctx := r.Context()
	pl.parentCtx = ctx
	if p.useDirect(w, r) {
		p.forwardDirect(w, r, x)
		// Not reached when the answer's stream was aborted (a panic):
		// that exchange is left to the collector.
		x.recycle()
		return
	}
	if p.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
	}
	if needsReverseProxy(w, r, ctx) {
		pl.snapshotPreset()
		p.rp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, planKey{}, pl)))
		return
	}
	p.forward(ctx, w, r, x)
}

// noCache reports whether the client asked for a fresh answer.
func noCache(r *http.Request) bool {
	for _, v := range r.Header.Values("Cache-Control") {
		if strings.Contains(strings.ToLower(v), "no-cache") {
			return true
		}
	}
	return strings.EqualFold(r.Header.Get("Pragma"), "no-cache")
}

// plan computes the outbound URL, the headers to inject and the cache key
// into pl.
func (p *Proxy) plan(r *http.Request, pl *plan) error {
	rest, err := resourcePath(r)
	if err != nil {
		return err
	}
	var values map[string]string
	if p.lookups {
		values = p.lookupValues(r)
	}

	pl.url = *p.base
	u := &pl.url
	escaped := p.base.EscapedPath()
	if rest != "" {
		escaped = strings.TrimSuffix(escaped, "/") + "/" + rest
	} else if escaped == "" {
		escaped = "/"
	}
	u.Path, err = url.PathUnescape(escaped)
	if err != nil {
		return apierr.BadRequest("Invalid resource path.").WithCause(err)
	}
	u.RawPath = escaped
	prefix := forwardedPrefix(r, rest)
	withKey := p.cache != nil && r.Method == http.MethodGet
	var keyQuery []string
	u.RawQuery, keyQuery = p.query(r, values, withKey)
	u.Fragment, u.RawFragment = "", ""

	pl.prefix = prefix
	for _, h := range p.cfg.Headers {
		if !h.Verbs.Has(r.Method) {
			continue
		}
		name := http.CanonicalHeaderKey(h.Name)
		if h.PassFromClient {
			vs := r.Header.Values(name)
			if name == "Authorization" && len(vs) > 0 && platformBearer(r) {
				vs = nil
			}
			if len(vs) > 0 {
				pl.setHeader(name, append([]string(nil), vs...))
				continue
			}
		}
		v, ok := "", false
		if h.Value != "" {
			v, ok = substitute(h.Value, values)
			ok = ok && !strings.ContainsAny(v, "\r\n\x00")
		}
		if !ok {
			pl.omit = append(pl.omit, name)
			delete(pl.set, name)
			continue
		}
		if name == "Host" {
			pl.host = v
			continue
		}
		pl.setHeader(name, []string{v})
	}

	if withKey {
		role := ""
		if id := caller.IdentityFrom(r.Context()); id != nil {
			role = fmt.Sprintf("%d", id.RoleID)
		}
		injected := pl.set.Clone()
		if injected == nil {
			injected = http.Header{}
		}
		if pl.host != "" {
			injected.Set("Host", pl.host)
		}
		pl.cacheKey = cacheKey(p.cfg.Name, escaped, keyQuery, role, injected, r)
	}
	return nil
}

// setHeader records a configured header to send.
func (pl *plan) setHeader(name string, vs []string) {
	if pl.set == nil {
		pl.set = http.Header{}
	}
	pl.set[name] = vs
}

// resourcePath returns the escaped path below the service, as the client
// sent it (encoded slashes and a trailing slash kept). Inside a Portcullis
// pipeline that is the part of the path after /api/v2/{service}; alone (or
// behind stages that target the whole path), the whole path of the request
// (mount it with http.StripPrefix). A "." or
// ".." segment, even encoded, is refused so that no path climbs above the
// base URL's.
func resourcePath(r *http.Request) (string, error) {
	ep := r.URL.EscapedPath()
	rest := strings.TrimPrefix(ep, "/")
	if t := service.TargetFrom(r.Context()); t != nil {
		// The router's shape, /api/v2/{service}/{resource}; or a stack
		// without the router whose target is the whole path (see
		// rbac.FixedService). Else re-escape the target's resource. (The
		// two shapes never both match: the resource would have to equal
		// the whole path and a shorter part of it.)
		matched := false
		if seg, cand, ok := serviceSegment(ep); ok && t.Service != nil {
			svc, err1 := url.PathUnescape(seg)
			dec, err2 := url.PathUnescape(cand)
			if err1 == nil && err2 == nil && svc == t.Service.Name && strings.Trim(dec, "/") == t.Resource {
				rest, matched = cand, true
			}
		}
		if !matched {
			if dec, err := url.PathUnescape(rest); err == nil && strings.Trim(dec, "/") == t.Resource {
				matched = true
			}
		}
		if !matched {
			parts := t.Segments()
			for i, s := range parts {
				parts[i] = url.PathEscape(s)
			}
			rest = strings.Join(parts, "/")
		}
	}
	rest = strings.TrimLeft(rest, "/")
	if strings.IndexByte(rest, '%') < 0 {
		// Every segment is its own decoded form: the split at '/' and
		// '\\' below comes to one over the whole path.
		if hasDotPart(rest) {
			return "", apierr.BadRequest("Invalid resource path: '.' and '..' segments are not allowed.")
		}
		return rest, nil
	}
	for seg := range strings.SplitSeq(rest, "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return "", apierr.BadRequest("Invalid resource path: %v", err)
		}
		if hasDotPart(dec) {
			return "", apierr.BadRequest("Invalid resource path: '.' and '..' segments are not allowed.")
		}
	}
	return rest, nil
}

// serviceSegment splits an escaped path of the router's shape,
// /api/v2/{service}/{resource}, into its fourth segment (the service) and
// what follows it; ok is false when the path has fewer than three slashes.
func serviceSegment(ep string) (seg, rest string, ok bool) {
	i := 0
	for range 3 {
		j := strings.IndexByte(ep[i:], '/')
		if j < 0 {
			return "", "", false
		}
		i += j + 1
	}
	seg, rest, _ = strings.Cut(ep[i:], "/")
	return seg, rest, true
}

// hasDotPart reports whether a decoded segment, split at '/' and '\\',
// holds a "." or ".." part.
func hasDotPart(dec string) bool {
	for len(dec) > 0 {
		i := strings.IndexAny(dec, "/\\")
		part := dec
		if i >= 0 {
			part, dec = dec[:i], dec[i+1:]
		} else {
			dec = ""
		}
		if part == "." || part == ".." {
			return true
		}
	}
	return false
}

// forwardedPrefix returns the public path the upstream's base path is
// exposed at: the path the client asked for (its request line, before any
// http.StripPrefix) without the resource below the service, such as
// "/api/v2/weather" or "/portcullis/api/v2/weather". "" when it cannot be
// told.
func forwardedPrefix(r *http.Request, rest string) string {
	p, ok := requestPath(r.RequestURI)
	if !ok {
		return ""
	}
	if rest != "" {
		var ok bool
		if p, ok = strings.CutSuffix(p, rest); !ok {
			return ""
		}
	}
	p = strings.TrimRight(p, "/")
	if !strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// requestPath returns the escaped path of a request line's target, as
// url.ParseRequestURI and EscapedPath give it; ok is false when the target
// does not parse. A path of plain characters (no escapes) is its own
// escaped form, read without parsing.
func requestPath(uri string) (string, bool) {
	if uri == "" {
		return "", false
	}
	p, q, _ := strings.Cut(uri, "?")
	plain := p != "" && p[0] == '/'
	for i := 0; plain && i < len(p); i++ {
		plain = plainPathByte(p[i])
	}
	for i := 0; plain && i < len(q); i++ {
		plain = q[i] >= 0x20 && q[i] != 0x7f
	}
	if plain {
		return p, true
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return "", false
	}
	return u.EscapedPath(), true
}

// plainPathByte reports whether c stands for itself in an escaped path:
// an unreserved or sub-delimiter character, ':', '@' or '/'.
func plainPathByte(c byte) bool { return plainPathBytes[c] }

var plainPathBytes = func() (t [256]bool) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[c] = true
		default:
			t[c] = strings.IndexByte("-._~!$&'()*+,;=:@/", byte(c)) >= 0
		}
	}
	return t
}()

// query builds the forwarded query (the base URL's, the client's minus
// platform credentials, exclusions and parameters the configuration
// replaces, then the configured ones) and, when withKey is set, the query
// the cache key sees. When that leaves the client's query as it was, it is
// returned as it is.
func (p *Proxy) query(r *http.Request, values map[string]string, withKey bool) (string, []string) {
	var buf [16]string
	out := buf[:0]
	var key []string
	// same: out is, so far, the client's query unchanged.
	same := p.base.RawQuery == ""
	if p.base.RawQuery != "" {
		out = append(out, p.base.RawQuery)
		if withKey {
			key = append(key, p.base.RawQuery)
		}
	}
	added := map[string]bool{}
	for _, q := range p.cfg.Parameters {
		if !q.Exclude && q.Verbs.Has(r.Method) {
			added[strings.ToLower(q.Name)] = true
		}
	}
	for piece := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if piece == "" {
			same = same && r.URL.RawQuery == ""
			continue
		}
		rawName, _, _ := strings.Cut(piece, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		if isPlatformParameter(name) || added[strings.ToLower(name)] {
			same = false
			continue
		}
		outbound, inKey := true, true
		for _, q := range p.cfg.Parameters {
			if q.Exclude && q.Verbs.Has(r.Method) && strings.EqualFold(q.Name, name) {
				outbound, inKey = q.NotOutbound, q.NotCacheKey
			}
		}
		if outbound {
			out = append(out, piece)
		} else {
			same = false
		}
		if inKey && withKey {
			key = append(key, piece)
		}
	}
	for _, q := range p.cfg.Parameters {
		if q.Exclude || !q.Verbs.Has(r.Method) {
			continue
		}
		v, ok := substitute(q.Value, values)
		if !ok {
			continue
		}
		piece := url.QueryEscape(q.Name)
		if v != "" {
			piece += "=" + url.QueryEscape(v)
		}
		if !q.NotOutbound {
			out = append(out, piece)
			same = false
		}
		if withKey {
			key = append(key, piece)
		}
	}
	if same {
		return r.URL.RawQuery, key
	}
	return strings.Join(out, "&"), key
}

// platformBearer reports whether r's Authorization header carries the
// platform session: the bearer is a JWT whose "jti" is the caller's
// session id, or the caller has a session and presented it nowhere else.
func platformBearer(r *http.Request) bool {
	id := caller.IdentityFrom(r.Context())
	if id == nil || id.SessionID == "" {
		return false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	if jwtID(strings.TrimSpace(token)) == id.SessionID {
		return true
	}
	return r.Header.Get("X-Platform-Session-Token") == "" && r.Header.Get("X-DreamFactory-Session-Token") == "" &&
		r.URL.Query().Get("session_token") == ""
}

// jwtID returns the "jti" claim of a JWT without verifying it, or "".
func jwtID(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		ID string `json:"jti"`
	}
	if json.Unmarshal(data, &claims) != nil {
		return ""
	}
	return claims.ID
}

// stripped reports whether a client request header must never reach the
// upstream: platform credentials, verb-tunnelling headers, and the
// credentials of the client's own session (Authorization, Cookie), which
// are forwarded only when a header entry passes them from the client.
func stripped(name string) bool {
	switch name {
	case "X-Platform-Api-Key", "X-Platform-Session-Token", "X-Http-Method", "X-Method-Override",
		"Authorization", "Cookie":
		return true
	}
	return strings.HasPrefix(name, "X-Dreamfactory-")
}

// rewrite is the ReverseProxy's Rewrite hook. ReverseProxy has already
// removed hop-by-hop headers and the client's Forwarded and X-Forwarded-*.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pl := pr.In.Context().Value(planKey{}).(*plan)
	out := pr.Out
	u := pl.url
	out.URL = &u
	out.Host = pl.host
	for k := range out.Header {
		if stripped(k) {
			delete(out.Header, k)
		}
	}
	p.setHeaders(pr.In, out.Header, pl)
}

// modifyResponse is the ReverseProxy's ModifyResponse hook (see
// filterResponse).
func (p *Proxy) modifyResponse(resp *http.Response) error {
	if pl, _ := resp.Request.Context().Value(planKey{}).(*plan); pl != nil {
		p.filterResponse(resp, pl)
	}
	return nil
}

// filterResponse drops the upstream's headers that the pipeline has already
// set (its request id, rate-limit and CORS headers win), and tees cacheable
// answers into the cache.
func (p *Proxy) filterResponse(resp *http.Response, pl *plan) {
	for k := range resp.Header {
		if pl.preset(k) || pl.dropCORS && strings.HasPrefix(k, "Access-Control-") {
			delete(resp.Header, k)
		}
	}
	if pl.cacheKey == "" {
		return
	}
	resp.Header.Set("X-Cache", "MISS")
	if !storable(resp, p.configured) || resp.ContentLength > p.cfg.CacheMaxEntryBytes {
		return
	}
	header := resp.Header.Clone()
	header.Del("Date")
	header.Del("X-Cache")
	key := pl.cacheKey
	resp.Body = &capture{
		ReadCloser: resp.Body, max: p.cfg.CacheMaxEntryBytes, want: resp.ContentLength,
		store: func(body []byte) { p.cache.put(key, header, body) },
	}
}

// errorHandler answers a failed exchange in the envelope: 503 when the
// upstream cannot be reached, 504 when it does not answer in time, 502 for
// any other failure (including an address the allow list forbids).
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	pl, _ := r.Context().Value(planKey{}).(*plan)
	p.fail(w, r, pl, err)
}

// fail answers the failed exchange of the outbound request r (the client's
// when it failed before one was built); pl may be nil.
func (p *Proxy) fail(w http.ResponseWriter, r *http.Request, pl *plan, err error) {
	var parent context.Context = r.Context()
	if pl != nil && pl.parentCtx != nil {
		parent = pl.parentCtx
	}
	e := p.classify(err, r.Context(), parent)
	if e.Status >= 500 {
		p.cfg.Logger.WarnContext(r.Context(), "upstream request failed", "service", p.cfg.Name,
			"method", r.Method, "url", redactURL(r.URL), "status", e.Status, "error", err)
	}
	apierr.Write(w, e)
}

// statusClientClosed is recorded when the client went away first.
const statusClientClosed = 499

func (p *Proxy) classify(err error, ctx, parent context.Context) *apierr.Error {
	name := p.cfg.Name
	var mbe *http.MaxBytesError
	var na *upstream.NotAllowedError
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &mbe):
		return apierr.PayloadTooLarge(mbe.Limit).WithCause(err)
	case parent.Err() != nil:
		return (&apierr.Error{Status: statusClientClosed, Message: "Client closed the request."}).WithCause(err)
	case errors.As(err, &na):
		return apierr.BadGateway("Service '%s' points at an address that the upstream allow list does not permit.", name).WithCause(err)
	case ctx.Err() != nil && p.cfg.Timeout > 0:
		return apierr.GatewayTimeout("Service '%s' did not answer within %s.", name, p.cfg.Timeout).WithCause(err)
	case errors.Is(err, context.DeadlineExceeded):
		// HeaderTimeout (the transport's timeout errors match
		// DeadlineExceeded) or the dial timeout.
		return apierr.GatewayTimeout("Service '%s' did not answer in time.", name).WithCause(err)
	case errors.As(err, &dnsErr) && !dnsErr.IsTimeout:
		return apierr.Unavailable("Service '%s' is unreachable: its host name does not resolve.", name).WithCause(err)
	case errors.As(err, &netErr) && netErr.Timeout():
		return apierr.GatewayTimeout("Service '%s' did not answer in time.", name).WithCause(err)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return apierr.Unavailable("Service '%s' is unreachable.", name).WithCause(err)
	default:
		return apierr.BadGateway("Service '%s' failed to answer with a valid HTTP response.", name).WithCause(err)
	}
}

// redactURL hides the query of an upstream URL in logs (it may carry
// injected secrets).
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = "…"
	}
	return c.String()
}

var (
	_ service.Backend      = (*Proxy)(nil)
	_ service.CacheFlusher = (*Proxy)(nil)
	_ io.ReadCloser        = (*capture)(nil)
)
