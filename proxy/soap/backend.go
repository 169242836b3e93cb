package soap

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	ntlmssp "github.com/Azure/go-ntlmssp"
	"github.com/beevik/etree"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// maxAnswerBytes bounds a SOAP answer.
const maxAnswerBytes = 32 << 20

// Settings is what a backend is built from besides its configuration.
type Settings struct {
	// Name is the service's name, for messages.
	Name string
	// DataDir is the data directory; bare WSDL names are read from
	// DataDir/storage/wsdl.
	DataDir string
	// UpstreamAllow restricts the addresses the backend may reach.
	UpstreamAllow []string
	// Logger receives failed calls; nil discards.
	Logger *slog.Logger
	// Now is the clock (WSSE Created, cache expiry); nil means time.Now.
	Now func() time.Time
	// Nonce returns a WSSE nonce; nil means 16 random bytes.
	Nonce func() []byte
}

// Backend serves one soap service.
type Backend struct {
	set    Settings
	cfg    *Config
	opts   *Options
	ref    string // URL or file path of the WSDL
	dir    string
	client *http.Client

	loadMu sync.Mutex
	mu     sync.Mutex
	defs   *Definitions

	cache resultCache
}

var _ service.Backend = (*Backend)(nil)

// New builds a backend; it does not fetch the WSDL (that happens on the
// first request).
func New(cfg *Config, opts *Options, set Settings) (*Backend, error) {
	allow, err := upstream.ParseAllowList(set.UpstreamAllow)
	if err != nil {
		return nil, err
	}
	if set.Now == nil {
		set.Now = time.Now
	}
	if set.Nonce == nil {
		set.Nonce = newNonce
	}
	if set.Logger == nil {
		set.Logger = slog.New(slog.DiscardHandler)
	}
	tr := allow.Transport()
	var rt http.RoundTripper = tr
	if opts.NTLMUser != "" {
		// NTLM authenticates a connection: HTTP/1.1 only.
		tr.ForceAttemptHTTP2 = false
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		rt = ntlmssp.Negotiator{RoundTripper: tr}
	}
	b := &Backend{set: set, cfg: cfg, opts: opts, client: &http.Client{Transport: rt},
		dir: filepath.Join(set.DataDir, "storage", "wsdl")}
	if cfg.WSDL != "" {
		b.ref = cfg.WSDL
		if !strings.ContainsAny(cfg.WSDL, `/\`) {
			b.ref = filepath.Join(b.dir, cfg.WSDL)
		}
	}
	b.cache.init(set.Now)
	return b, nil
}

// Close releases idle connections.
func (b *Backend) Close() error {
	b.client.CloseIdleConnections()
	return nil
}

// FlushCache forgets the WSDL and the cached results.
func (b *Backend) FlushCache(context.Context) error {
	b.forget()
	return nil
}

func (b *Backend) forget() {
	b.mu.Lock()
	b.defs = nil
	b.mu.Unlock()
	b.cache.flush()
}

// auth sets the configured HTTP credentials on a request to the service.
func (b *Backend) auth(req *http.Request) {
	switch {
	case b.opts.NTLMUser != "":
		req.SetBasicAuth(b.opts.NTLMUser, b.opts.NTLMPassword) // the Negotiator reads them
	case b.opts.Login != "":
		req.SetBasicAuth(b.opts.Login, b.opts.Password)
	}
	if b.opts.UserAgent != "" {
		req.Header.Set("User-Agent", b.opts.UserAgent)
	}
	for k, v := range b.opts.HTTPHeaders {
		req.Header.Set(k, v)
	}
}

// Definitions returns the service's WSDL, loading it when not cached.
func (b *Backend) Definitions(ctx context.Context) (*Definitions, error) {
	if b.ref == "" {
		return &Definitions{Version: b.version(""), Endpoint: b.opts.Location, byName: map[string]*Operation{}}, nil
	}
	b.mu.Lock()
	d := b.defs
	b.mu.Unlock()
	if d != nil {
		return d, nil
	}
	b.loadMu.Lock()
	defer b.loadMu.Unlock()
	b.mu.Lock()
	d = b.defs
	b.mu.Unlock()
	if d != nil {
		return d, nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	l := &loader{client: &http.Client{Transport: authOnHost{rt: b.client.Transport, host: hostOf(b.ref), set: b.auth}}, dir: b.dir}
	d, err := l.load(ctx, b.ref, b.opts.Version)
	if err != nil {
		return nil, &wsdlError{err: err}
	}
	if b.opts.CacheWSDL {
		b.mu.Lock()
		b.defs = d
		b.mu.Unlock()
	}
	return d, nil
}

// wsdlError is a WSDL that could not be loaded.
type wsdlError struct{ err error }

func (e *wsdlError) Error() string { return e.err.Error() }
func (e *wsdlError) Unwrap() error { return e.err }

func hostOf(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	return u.Host
}

// authOnHost adds credentials to requests for one host only (the WSDL's;
// imported schemas elsewhere get none).
type authOnHost struct {
	rt   http.RoundTripper
	host string
	set  func(*http.Request)
}

func (a authOnHost) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == a.host {
		req = req.Clone(req.Context())
		a.set(req)
	}
	return a.rt.RoundTrip(req)
}

func (b *Backend) version(wsdl string) string {
	if b.opts.Version != "" {
		return b.opts.Version
	}
	if wsdl != "" {
		return wsdl
	}
	return "1.1"
}

// ServeHTTP serves the service's root (operation list) and its
// operations.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := b.serve(w, r); err != nil {
		e := b.classify(err, r.Context())
		if e.Status >= 500 {
			b.set.Logger.WarnContext(r.Context(), "soap call failed", "service", b.set.Name, "status", e.Status, "error", err)
		}
		apierr.Write(w, e)
	}
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) error {
	var segs []string
	if t := service.TargetFrom(r.Context()); t != nil {
		segs = t.Segments()
	}
	q := r.URL.Query()
	if truthy(q.Get("refresh")) {
		b.forget()
	}
	switch len(segs) {
	case 0:
		if r.Method != http.MethodGet {
			return apierr.MethodNotAllowed(r.Method)
		}
		d, err := b.Definitions(r.Context())
		if err != nil {
			return err
		}
		if truthy(q.Get("as_access_list")) {
			// The components a role's access may name, as other services
			// answer it: the root, everything, then each operation.
			list := []string{"", "*"}
			for _, op := range d.Operations {
				list = append(list, op.Name)
			}
			return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": list})
		}
		return apierr.WriteJSON(w, http.StatusOK, listOperations(d, q.Get("fields")))
	case 1:
	default:
		return apierr.NotFound("Function '%s' does not exist on this service.", strings.Join(segs, "/"))
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return apierr.MethodNotAllowed(r.Method)
	}
	d, err := b.Definitions(r.Context())
	if err != nil {
		return err
	}
	op, ok := d.Lookup(segs[0])
	if !ok {
		if b.ref != "" {
			return apierr.NotFound("Function '%s' does not exist on this service.", segs[0])
		}
		op = &Operation{Name: segs[0], RPC: true, Encoded: true, Namespace: b.opts.URI, Action: strings.TrimSuffix(b.opts.URI, "/") + "#" + segs[0]}
	}
	args, err := arguments(r)
	if err != nil {
		return err
	}
	var key string
	if r.Method == http.MethodGet && b.cfg.CacheEnabled {
		key = cacheKey(r, op.Name)
		if body, ok := b.cache.get(key); ok {
			w.Header().Set("Content-Type", "application/json")
			_, err := w.Write(body)
			return err
		}
	}
	result, err := b.Call(r.Context(), d, op, args, r.Method == http.MethodPost, r.URL.Query())
	if err != nil {
		return err
	}
	body, err := json.Marshal(result)
	if err != nil {
		return apierr.Internal(err)
	}
	if key != "" {
		b.cache.put(key, body, b.cfg.cacheTTL())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// listOperations answers GET /{service}: {resource:[{name}]}, or every
// detail with fields=*.
func listOperations(d *Definitions, fields string) map[string]any {
	list := make([]map[string]any, 0, len(d.Operations))
	for _, op := range d.Operations {
		item := map[string]any{"name": op.Name}
		if fields == "*" {
			item["description"] = op.Doc
			item["action"] = op.Action
			item["style"] = map[bool]string{true: "rpc", false: "document"}[op.RPC]
			item["access"] = []string{http.MethodGet, http.MethodPost}
		}
		list = append(list, item)
	}
	return map[string]any{"resource": list}
}

// arguments reads the call's argument object: the JSON body of a POST,
// the query string of a GET.
func arguments(r *http.Request) (map[string]any, error) {
	if r.Method == http.MethodGet {
		args := map[string]any{}
		for k, vs := range r.URL.Query() {
			if k == "refresh" {
				continue
			}
			if len(vs) == 1 {
				args[k] = vs[0]
				continue
			}
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = v
			}
			args[k] = list
		}
		return args, nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apierr.PayloadTooLarge(mbe.Limit)
		}
		return nil, apierr.BadRequest("Could not read the request body.").WithCause(err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, apierr.InvalidJSON(err)
	}
	args, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return map[string]any{}, nil
		}
		return nil, apierr.BadRequest("The request body must be a JSON object of the operation's parameters.")
	}
	return args, nil
}

// Call sends op with args and returns its result as JSON. strict refuses
// argument keys the operation does not have; query is the incoming query
// string, for headers whose data names a parameter.
func (b *Backend) Call(ctx context.Context, d *Definitions, op *Operation, args map[string]any, strict bool, query url.Values) (any, error) {
	version := b.version(d.Version)
	env := newEnvelope(version)
	env.strict = strict
	env.types, env.typeNS = d.types, d.typeNS
	b.headers(env, query)
	if op.Input == nil && b.ref == "" {
		env.body = env.env.CreateElement("soap:Body")
		wrap := env.body.CreateElement("m:" + op.Name)
		wrap.CreateAttr("xmlns:m", op.Namespace)
		untyped(wrap, args)
	} else if err := env.call(op, args); err != nil {
		return nil, err
	}
	payload, err := env.bytes()
	if err != nil {
		return nil, apierr.Internal(err)
	}
	endpoint := b.opts.Location
	if endpoint == "" {
		endpoint = d.Endpoint
	}
	if endpoint == "" {
		return nil, apierr.InternalMsg("Service '%s' has no endpoint: the WSDL names no address and options.location is not set.", b.set.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(string(payload)))
	if err != nil {
		return nil, apierr.InternalMsg("Service '%s' has an invalid endpoint.", b.set.Name).WithCause(err)
	}
	if version == "1.2" {
		ct := "application/soap+xml; charset=utf-8"
		if op.Action != "" {
			ct += `; action="` + op.Action + `"`
		}
		req.Header.Set("Content-Type", ct)
	} else {
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		req.Header.Set("SOAPAction", `"`+op.Action+`"`)
	}
	b.auth(req)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, &callError{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, &callError{err: err}
	}
	if len(data) > maxAnswerBytes {
		return nil, apierr.BadGateway("Service '%s' answered with more than %d bytes.", b.set.Name, maxAnswerBytes)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "multipart/") {
		if data, err = unpackXOP(ct, data); err != nil {
			return nil, apierr.BadGateway("Service '%s' sent an MTOM answer that could not be read: %v", b.set.Name, err)
		}
	}
	parsed, perr := parseResponse(data)
	if perr != nil {
		if resp.StatusCode >= 300 {
			return nil, apierr.BadGateway("Service '%s' answered with HTTP status %d.", b.set.Name, resp.StatusCode)
		}
		return nil, apierr.BadGateway("Service '%s' did not answer with a SOAP envelope.", b.set.Name).WithCause(perr)
	}
	if f := parsed.fault; f != nil {
		e := &apierr.Error{Status: http.StatusInternalServerError, Message: fmt.Sprintf("%s [Fault code:%s]", f.String, f.Code)}
		if n, err := strconv.Atoi(f.Code); err == nil && n > 0 {
			e.Code = n
		}
		if f.Detail != nil {
			e.Context = map[string]any{"detail": f.Detail}
		}
		return nil, e
	}
	if resp.StatusCode >= 300 {
		return nil, apierr.BadGateway("Service '%s' answered with HTTP status %d.", b.set.Name, resp.StatusCode)
	}
	return result(op, parsed.body), nil
}

// result shapes the answer: a document/literal response element's
// content, or for rpc the parts; a lone scalar is named <Operation>Result.
func result(op *Operation, body []*etree.Element) any {
	out := newObj()
	if len(body) == 0 {
		return out
	}
	if op.RPC {
		for _, k := range body[0].ChildElements() {
			var n *node
			for _, p := range op.Output {
				if p.Name == k.Tag {
					n = p
				}
			}
			name := k.Tag
			if len(op.Output) == 1 || (op.Output == nil && len(body[0].ChildElements()) == 1) {
				name = op.Name + "Result"
			}
			out.set(name, decode(k, n))
		}
		return out
	}
	if len(op.Output) <= 1 {
		var n *node
		if len(op.Output) == 1 {
			n = op.Output[0]
		}
		v := decode(body[0], n)
		if o, ok := v.(*obj); ok {
			return o
		}
		out.set(op.Name+"Result", v)
		return out
	}
	for _, k := range body {
		var n *node
		for _, p := range op.Output {
			if p.Name == k.Tag {
				n = p
			}
		}
		out.set(k.Tag, decode(k, n))
	}
	return out
}

// headers adds the configured SOAP headers.
func (b *Backend) headers(env *envelope, query url.Values) {
	var user, pass string
	hasWSSE := false
	for _, h := range b.cfg.Headers {
		if strings.EqualFold(h.Type, "wsse") {
			hasWSSE = true
			if strings.EqualFold(h.Name, "username") {
				user = fmt.Sprint(h.Data)
			} else {
				pass = fmt.Sprint(h.Data)
			}
			continue
		}
		data := headerData(h.Data, query)
		if h.Namespace == "" || h.Name == "" || data == nil || data == "" {
			continue
		}
		env.genericHeader(h.Namespace, h.Name, data, bool(h.MustUnderstand), h.Actor)
	}
	if hasWSSE {
		env.wsse(user, pass, b.cfg.WSSEUsernameToken, b.set.Now(), b.set.Nonce())
	}
}

// headerPrefix marks header data taken from the incoming query string.
const headerPrefix = "plat:"

// headerData resolves a header's data: JSON text is parsed, and string
// values "plat:<param>" take the query parameter.
func headerData(v any, query url.Values) any {
	if s, ok := v.(string); ok {
		var parsed any
		if err := json.Unmarshal([]byte(s), &parsed); err == nil {
			if _, isObj := parsed.(map[string]any); isObj {
				v = parsed
			}
		}
	}
	switch x := v.(type) {
	case string:
		if p, ok := strings.CutPrefix(x, headerPrefix); ok {
			return query.Get(p)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = headerData(val, query)
		}
		return out
	}
	return v
}

// callError is a failed exchange with the service (network).
type callError struct{ err error }

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// classify turns an error into the envelope.
func (b *Backend) classify(err error, ctx context.Context) *apierr.Error {
	name := b.set.Name
	var ae *apierr.Error
	var ie *inputError
	var na *upstream.NotAllowedError
	var dnsErr *net.DNSError
	var netErr net.Error
	var we *wsdlError
	var fe *fetchError
	var ce *callError
	isNet := errors.As(err, &fe) || errors.As(err, &ce)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ie):
		return apierr.BadRequest("%s", ie.msg)
	case ctx.Err() != nil:
		return apierr.ClientClosed(err)
	case errors.As(err, &na):
		return apierr.BadGateway("Service '%s' points at an address that the upstream allow list does not permit.", name).WithCause(err)
	case isNet && errors.Is(err, context.DeadlineExceeded):
		return apierr.GatewayTimeout("Service '%s' did not answer within %s.", name, b.opts.Timeout).WithCause(err)
	case isNet && errors.As(err, &netErr) && netErr.Timeout():
		return apierr.GatewayTimeout("Service '%s' did not answer in time.", name).WithCause(err)
	case isNet && errors.As(err, &dnsErr):
		return apierr.Unavailable("Service '%s' is unreachable: its host name does not resolve.", name).WithCause(err)
	case isNet && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return apierr.Unavailable("Service '%s' is unreachable.", name).WithCause(err)
	case errors.As(err, &we):
		return apierr.InternalMsg("Unexpected SOAP Service Exception:\n%s", we.err.Error()).WithCause(err)
	case isNet:
		return apierr.BadGateway("Service '%s' failed to answer with a valid HTTP response.", name).WithCause(err)
	}
	return apierr.Internal(err)
}

// cacheKey keys a GET result by caller role, operation and query.
func cacheKey(r *http.Request, op string) string {
	role := int64(0)
	if id := caller.IdentityFrom(r.Context()); id != nil {
		role = id.RoleID
	}
	q := r.URL.Query()
	q.Del("refresh")
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d\x00%s", role, strings.ToLower(op))
	for _, k := range keys {
		for _, v := range q[k] {
			sb.WriteString("\x00" + k + "=" + v)
		}
	}
	return sb.String()
}

// resultCache holds GET results until they expire.
type resultCache struct {
	mu    sync.Mutex
	now   func() time.Time
	items map[string]cachedResult
}

type cachedResult struct {
	body    []byte
	expires time.Time
}

// maxCached bounds the entries of one service's cache.
const maxCached = 1024

func (c *resultCache) init(now func() time.Time) {
	c.now = now
	c.items = map[string]cachedResult{}
}

func (c *resultCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok || !c.now().Before(it.expires) {
		return nil, false
	}
	return it.body, true
}

func (c *resultCache) put(key string, body []byte, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.items) >= maxCached {
		for k, it := range c.items {
			if !now.Before(it.expires) {
				delete(c.items, k)
			}
		}
		if len(c.items) >= maxCached {
			c.items = map[string]cachedResult{}
		}
	}
	c.items[key] = cachedResult{body: body, expires: now.Add(ttl)}
}

func (c *resultCache) flush() {
	c.mu.Lock()
	c.items = map[string]cachedResult{}
	c.mu.Unlock()
}
