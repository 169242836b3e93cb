package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Forwarder builds the reverse proxy of the url form. The composition root
// supplies one built on proxy/rws, so that a remote MCP server gets the
// configured headers, parameters and lookups, the platform's credentials
// stripped, the upstream allow list and the error statuses of an rws
// service (503 unreachable, 504 silent, 502 refused by the allow list).
type Forwarder interface {
	// ValidateForward checks a forwarding configuration: base_url,
	// headers and parameters as an rws service takes them.
	ValidateForward(config json.RawMessage) error
	// NewForward returns a handler that forwards each request below the
	// service svc to config's base_url plus the request's resource path,
	// streaming the answer as it arrives. headerTimeout bounds the wait
	// for the response headers (0: none); bodies are not bounded.
	NewForward(svc *store.Service, deps service.Deps, config json.RawMessage, headerTimeout time.Duration) (ForwardHandler, error)
}

// ForwardHandler is a Forwarder's proxy: Close releases its connections.
type ForwardHandler interface {
	http.Handler
	Close() error
}

// maxAnnounced bounds the message endpoints remembered from the remote
// server's endpoint events.
const maxAnnounced = 64

// remote is the url form's backend. The service root forwards to the
// configured URL. The HTTP+SSE transport's endpoint event, which names
// where the client posts its messages, is rewritten to a path below the
// service; such a path is forwarded to the same path on the remote host,
// and no other path below the service is.
type remote struct {
	name   string
	url    *url.URL
	base   ForwardHandler // forwards to the configured URL
	origin ForwardHandler // forwards to the configured URL's scheme and host
	logger *slog.Logger

	audit *Audit // nil: tool calls are not recorded
	now   func() time.Time
	seq   atomic.Uint64 // numbers the requests that name no session

	mu        sync.Mutex
	announced map[string]bool                    // remote paths named by endpoint events
	pending   map[string]map[string]*pendingCall // tool calls awaiting their answer, by session key and id
	npending  int
}

var _ service.Backend = (*remote)(nil)

func newRemote(svc *store.Service, deps service.Deps, cfg Config, f Forwarder, audit *Audit, now func() time.Time) (*remote, error) {
	base, err := f.NewForward(svc, deps, cfg.Forward, cfg.HeaderTimeout)
	if err != nil {
		return nil, err
	}
	var fwd map[string]json.RawMessage
	_ = json.Unmarshal(cfg.Forward, &fwd)
	o := *cfg.URL
	o.Path, o.RawPath, o.RawQuery = "/", "", ""
	fwd["base_url"], _ = json.Marshal(o.String())
	oc, _ := json.Marshal(fwd)
	origin, err := f.NewForward(svc, deps, oc, cfg.HeaderTimeout)
	if err != nil {
		base.Close()
		return nil, err
	}
	logger := deps.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &remote{name: svc.Name, url: cfg.URL, base: base, origin: origin, logger: logger.With("service", svc.Name),
		audit: audit, now: now, announced: map[string]bool{}, pending: map[string]map[string]*pendingCall{}}, nil
}

// Close releases both proxies' connections.
func (rm *remote) Close() error {
	rm.base.Close()
	return rm.origin.Close()
}

// ServeHTTP forwards the request, rewriting endpoint events of an event
// stream as they pass.
func (rm *remote) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reached(r.Context())
	rest := ""
	if t := service.TargetFrom(r.Context()); t != nil {
		rest = t.Resource
	}
	h := rm.base
	if rest != "" {
		rm.mu.Lock()
		ok := rm.announced["/"+rest]
		rm.mu.Unlock()
		if !ok {
			apierr.Write(w, apierr.NotFound("Service '%s' forwards to its remote MCP server at its root only; '%s' is not a message endpoint the server announced.", rm.name, rest))
			return
		}
		h = rm.origin
	}
	ww := &watcher{ResponseWriter: w, off: true}
	var streamKey string
	rewrite := func(data string) string {
		public, key := rm.endpoint(r, rest, data)
		streamKey = key
		return public
	}
	switch {
	case rm.audit != nil && r.Method == http.MethodPost:
		remotePath := rm.url.Path
		if rest != "" {
			remotePath = "/" + rest
		}
		key := sessionKey(remotePath, r.URL.Query())
		session := key != ""
		if !session {
			key = "request " + strconv.FormatUint(rm.seq.Add(1), 10)
		}
		ids := rm.startCalls(r, key)
		if len(ids) == 0 {
			break
		}
		ww.off = false
		ww.onData = func(b []byte) { rm.answered(key, parseMessages(b)) }
		defer func() {
			ww.end()
			status := ww.status
			if status == 0 {
				status = http.StatusOK
			}
			rm.finish(key, ids, status, session)
		}()
	case rm.audit != nil && r.Method == http.MethodGet:
		// An HTTP+SSE event stream: answers to the calls posted to its
		// session's message endpoint arrive here.
		ww.off = false
		ww.onData = func(b []byte) {
			if streamKey != "" && rm.awaiting(streamKey) {
				rm.answered(streamKey, parseMessages(b))
			}
		}
		defer func() {
			if streamKey != "" {
				rm.streamClosed(streamKey)
			}
		}()
	}
	h.ServeHTTP(&eventWriter{ResponseWriter: ww, rewrite: rewrite}, r)
}

// endpoint rewrites the data of an endpoint event (a URL relative to the
// remote request's) to the public address that reaches it through the
// service. The request's own credentials in the query (api_key,
// session_token) are carried over, since the client replaces its query
// with the endpoint's.
//
// It also returns the session key of the endpoint (see sessionKey).
func (rm *remote) endpoint(r *http.Request, rest, data string) (string, string) {
	from := rm.url
	if rest != "" {
		from = rm.url.ResolveReference(&url.URL{Path: "/" + rest})
	}
	u, err := from.Parse(strings.TrimSpace(data))
	if err != nil || u.Scheme != rm.url.Scheme || u.Host != rm.url.Host {
		rm.logger.Warn("mcp: endpoint event not rewritten: it names another server", "endpoint", data)
		return data, ""
	}
	public := publicPrefix(r, rest)
	if u.Path != rm.url.Path && u.Path != "" && u.Path != "/" {
		rm.mu.Lock()
		if len(rm.announced) < maxAnnounced || rm.announced[u.Path] {
			rm.announced[u.Path] = true
			public += u.EscapedPath()
		}
		rm.mu.Unlock()
	}
	q := u.Query()
	key := sessionKey(u.Path, q)
	in := r.URL.Query()
	for _, k := range []string{"api_key", "session_token"} {
		if v := in.Get(k); v != "" && !q.Has(k) {
			q.Set(k, v)
		}
	}
	if len(q) > 0 {
		public += "?" + q.Encode()
	}
	return public, key
}

// publicPrefix is the path the client reached the service root at: the
// path of its request line without the resource below the service.
func publicPrefix(r *http.Request, rest string) string {
	p := r.URL.EscapedPath()
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "" {
		p = u.EscapedPath()
	}
	p = strings.TrimRight(p, "/")
	if rest != "" {
		for _, cand := range []string{"/" + rest, "/" + (&url.URL{Path: rest}).EscapedPath()} {
			if q, ok := strings.CutSuffix(p, cand); ok {
				return q
			}
		}
	}
	return p
}

// eventWriter passes a response through unchanged and unbuffered, except
// that in an event stream (text/event-stream) the data of "endpoint"
// events is rewritten. Only the event being read is held, until the blank
// line that ends it arrives; once an endpoint event has passed, the rest
// of the stream is written as it comes.
type eventWriter struct {
	http.ResponseWriter
	rewrite func(data string) string

	checked, events, done bool
	line                  []byte   // a partial line held back
	held                  [][]byte // the lines of the event being read
	endpointEvent         bool     // the event being read is "endpoint"
}

func (e *eventWriter) check() {
	if !e.checked {
		e.checked = true
		ct := strings.ToLower(e.Header().Get("Content-Type"))
		e.events = strings.HasPrefix(strings.TrimSpace(ct), "text/event-stream")
	}
}

// WriteHeader records whether the answer is an event stream.
func (e *eventWriter) WriteHeader(code int) {
	e.check()
	e.ResponseWriter.WriteHeader(code)
}

// Write passes p on, rewriting endpoint events of an event stream.
func (e *eventWriter) Write(p []byte) (int, error) {
	e.check()
	if !e.events || e.done {
		return e.ResponseWriter.Write(p)
	}
	n := len(p)
	var out bytes.Buffer
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			e.line = append(e.line, p...)
			break
		}
		line := append(e.line, p[:i+1]...)
		e.line = nil
		p = p[i+1:]
		out.Write(e.event(line))
		if e.done {
			out.Write(e.line)
			out.Write(p)
			e.line = nil
			break
		}
	}
	if _, err := e.ResponseWriter.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return n, nil
}

// event handles one complete line of the stream and returns what to
// write. The lines of an event are held until the blank line that ends
// it (a client acts on an event only then), and an endpoint event's data
// is rewritten; comment lines pass at once.
func (e *eventWriter) event(line []byte) []byte {
	text := strings.TrimRight(string(line), "\r\n")
	switch {
	case strings.HasPrefix(text, ":"):
		return line
	case text != "":
		if v, ok := strings.CutPrefix(text, "event:"); ok {
			e.endpointEvent = strings.TrimSpace(v) == "endpoint"
		}
		e.held = append(e.held, line)
		return nil
	}
	var out bytes.Buffer
	if !e.endpointEvent {
		for _, l := range e.held {
			out.Write(l)
		}
	} else {
		var data []string
		for _, l := range e.held {
			d := strings.TrimRight(string(l), "\r\n")
			if v, ok := strings.CutPrefix(d, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			} else {
				out.Write(l)
			}
		}
		fmt.Fprintf(&out, "data: %s\n", e.rewrite(strings.Join(data, "\n")))
		e.done = true
	}
	out.Write(line)
	e.held, e.endpointEvent = nil, false
	return out.Bytes()
}

// Flush sends what has been written to the client.
func (e *eventWriter) Flush() {
	_ = http.NewResponseController(e.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (e *eventWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
