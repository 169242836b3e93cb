// Package script is the event-script stage: it runs the scripts attached to
// a request's pre_process events before the backend and to its
// post_process events after it, through the engine of package
// [github.com/portcullis-dev/portcullis/script].
//
// A request to a service with no script attached costs one map lookup. A
// pre_process script may change the request (method aside: parameters,
// headers, payload) or answer it by setting event.response with content;
// a post_process script may change the response. Both need the script's
// allow_event_modification; aborting with an error does not. Scripts reach
// the platform through platform.api: inner calls through the /api/v2
// pipeline as the caller with the script requestor bit, exempt from rate
// limits, nested at most Options.MaxDepth deep.
//
// Queued scripts ({event}.queued, such as db._table.todo.post.queued) run
// after the response has been written and flushed, on a [Queue]: a bounded
// pool of goroutines (QueueOptions.Workers) behind a bounded queue
// (QueueOptions.Size). They see the event with the final response, change
// nothing, and a failure is logged. A full queue drops the script, logs it
// and counts it (QueueOptions.Dropped); the response is never delayed. A
// script named with the bare event (db._table.todo.post) runs
// synchronously after the post_process scripts, as in DreamFactory.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/scriptevent"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// DefaultMaxDepth bounds nested platform.api calls when Options.MaxDepth
// is zero.
const DefaultMaxDepth = scriptevent.DefaultMaxDepth

// DefaultMaxResponse bounds the response a post_process script sees when
// Options.MaxResponse is zero; a larger response goes to the client
// unchanged and the script is skipped (and logged).
const DefaultMaxResponse int64 = 16 << 20

// Options configures the stage.
type Options struct {
	// Engine returns the scripts in force; required. Called once per
	// request.
	Engine func() *script.Engine
	// API returns the /api/v2 pipeline for platform.api; nil leaves
	// platform.api failing with an error.
	API func() http.Handler
	// Logger receives skipped scripts; nil means slog.Default().
	Logger *slog.Logger
	// MaxDepth bounds nested platform.api calls (a script that calls its
	// own event); zero means DefaultMaxDepth.
	MaxDepth int
	// MaxResponse bounds the response body a post_process script sees;
	// zero means DefaultMaxResponse.
	MaxResponse int64
	// Queue runs the queued scripts ({event}.queued) after the response;
	// nil gives the stage a queue of its own with the default bounds.
	Queue *Queue
	// Snapshot returns the configuration in force, for the lookups a
	// script sees and has substituted; nil means none.
	Snapshot func() *store.Snapshot
}

type stage struct {
	o Options
}

// New builds the stage.
func New(o Options) (func(http.Handler) http.Handler, error) {
	if o.Engine == nil {
		return nil, errors.New("script stage: Options.Engine is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxResponse <= 0 {
		o.MaxResponse = DefaultMaxResponse
	}
	if o.Queue == nil {
		o.Queue = NewQueue(QueueOptions{Logger: o.Logger})
	}
	s := &stage{o: o}
	return s.wrap, nil
}

func (s *stage) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := s.o.Engine()
		t := service.TargetFrom(r.Context())
		if t == nil || t.Service == nil || !e.HasService(t.Service.Name) {
			next.ServeHTTP(w, r)
			return
		}
		s.serve(e, t, w, r, next)
	})
}

func (s *stage) serve(e *script.Engine, t *service.Target, w http.ResponseWriter, r *http.Request, next http.Handler) {
	svc := t.Service.Name
	var hooks [8]script.Script
	pre, post, queued := e.Fired(hooks[:], svc, t.Resource, r.Method)
	if len(pre) == 0 && len(post) == 0 && len(queued) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	ctx := r.Context()
	plat := &scriptevent.Platform{Handler: s.o.API, MaxDepth: s.o.MaxDepth, ID: caller.IdentityFrom(ctx), Snapshot: s.o.Snapshot}
	req, err := scriptevent.RequestEvent(r, t)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	ev := map[string]any{"request": req, "resource": t.Resource}
	changed := false
	for _, sc := range pre {
		res, _, err := e.Run(ctx, sc.Name, ev, plat)
		if err != nil {
			apierr.Write(w, scriptevent.RunError(err))
			return
		}
		if !sc.AllowModification {
			continue
		}
		if res.Request != nil {
			ev["request"] = res.Request
			changed = true
		}
		if res.Response != nil {
			if _, has := res.Response["content"]; has {
				scriptevent.WriteResponse(w, res.Response, nil)
				ev["response"] = res.Response
				s.enqueue(w, r, e, queued, ev, plat)
				return
			}
		}
	}
	if changed {
		r, err = applyRequest(r, ev["request"].(map[string]any))
		if err != nil {
			apierr.Write(w, err)
			return
		}
	}
	if len(post) == 0 && len(queued) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	// The post_process and queued scripts see the request as it came,
	// whatever the backend does to it.
	script.Resolve(ev)
	buf := &buffer{w: w, header: http.Header{}, max: s.o.MaxResponse}
	next.ServeHTTP(buf, r)
	if buf.passed {
		s.o.Logger.Warn("post_process and queued scripts skipped: response too large", "service", svc, "resource", t.Resource, "max", s.o.MaxResponse)
		return
	}
	status := buf.status
	if status == 0 {
		status = http.StatusOK
	}
	var content any
	if len(bytes.TrimSpace(buf.body.Bytes())) > 0 {
		if err := json.Unmarshal(buf.body.Bytes(), &content); err != nil {
			content = buf.body.String()
		}
	}
	resp := map[string]any{"status_code": status, "content": content, "headers": scriptevent.HeaderMap(buf.header),
		"content_type": buf.header.Get("Content-Type")}
	ev["response"] = resp
	modified := false
	for _, sc := range post {
		res, _, err := e.Run(ctx, sc.Name, ev, plat)
		if err != nil {
			apierr.Write(w, scriptevent.RunError(err))
			return
		}
		if sc.AllowModification && res.Response != nil {
			ev["response"] = res.Response
			modified = true
		}
		if sc.AllowModification && res.Request != nil {
			ev["request"] = res.Request
		}
	}
	if !modified {
		scriptevent.CopyHeader(w.Header(), buf.header)
		w.WriteHeader(status)
		_, _ = w.Write(buf.body.Bytes())
	} else {
		scriptevent.WriteResponse(w, ev["response"].(map[string]any), buf.header)
	}
	s.enqueue(w, r, e, queued, ev, plat)
}

// enqueue hands the queued scripts to the queue once the response is
// written (and flushed, so that the client has it whatever the scripts
// do). They see the event as the request ended; their changes go
// nowhere; their failures are logged.
func (s *stage) enqueue(w http.ResponseWriter, r *http.Request, e *script.Engine, queued []script.Script, ev map[string]any, plat *scriptevent.Platform) {
	if len(queued) == 0 {
		return
	}
	script.Resolve(ev) // nothing of r is read on the queue
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	base := context.WithoutCancel(r.Context())
	for _, sc := range queued {
		_ = s.o.Queue.Submit(sc.Name, func(qctx context.Context) {
			ctx, cancel := context.WithCancel(base)
			defer cancel()
			stop := context.AfterFunc(qctx, cancel)
			defer stop()
			if _, _, err := e.Run(ctx, sc.Name, ev, plat); err != nil {
				s.o.Logger.Warn("queued script failed", "event", sc.Name, "err", err)
			}
		})
	}
}

// applyRequest merges event.request back into the request: parameters
// become the query, headers are set, payload becomes the JSON body.
func applyRequest(r *http.Request, req map[string]any) (*http.Request, *apierr.Error) {
	r2 := r.Clone(r.Context())
	if p, ok := req["parameters"].(map[string]any); ok {
		q := url.Values{}
		for k, v := range p {
			switch x := v.(type) {
			case []any:
				for _, e := range x {
					q.Add(k, scriptevent.Scalar(e))
				}
			case nil:
			default:
				q.Set(k, scriptevent.Scalar(x))
			}
		}
		r2.URL.RawQuery = q.Encode()
		r2.RequestURI = r2.URL.RequestURI()
	}
	if h, ok := req["headers"].(map[string]any); ok {
		for k, v := range h {
			lk := strings.ToLower(k)
			if lk == "content-length" || lk == "host" {
				continue
			}
			r2.Header.Set(k, scriptevent.Scalar(v))
		}
	}
	if p, has := req["payload"]; has && p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, apierr.InternalMsg("Script error: payload: %v", err)
		}
		r2.Body = io.NopCloser(bytes.NewReader(b))
		r2.ContentLength = int64(len(b))
		r2.Header.Set("Content-Length", strconv.Itoa(len(b)))
		r2.Header.Set("Content-Type", "application/json")
	}
	return r2, nil
}

// buffer holds the backend's response for post_process scripts, up to max
// bytes; past it everything goes straight to w (passed).
type buffer struct {
	w      http.ResponseWriter
	header http.Header
	status int
	body   bytes.Buffer
	max    int64
	passed bool
}

func (b *buffer) Header() http.Header {
	if b.passed {
		return b.w.Header()
	}
	return b.header
}

func (b *buffer) WriteHeader(code int) {
	if b.passed {
		b.w.WriteHeader(code)
		return
	}
	if b.status == 0 {
		b.status = code
	}
}

func (b *buffer) Write(p []byte) (int, error) {
	if b.passed {
		return b.w.Write(p)
	}
	if int64(b.body.Len()+len(p)) > b.max {
		b.pass()
		return b.w.Write(p)
	}
	return b.body.Write(p)
}

// pass sends what is buffered and switches to writing through.
func (b *buffer) pass() {
	b.passed = true
	scriptevent.CopyHeader(b.w.Header(), b.header)
	st := b.status
	if st == 0 {
		st = http.StatusOK
	}
	b.w.WriteHeader(st)
	_, _ = b.w.Write(b.body.Bytes())
	b.body = bytes.Buffer{}
}

// Flush passes the response through (a streaming backend).
func (b *buffer) Flush() {
	if !b.passed {
		b.pass()
	}
	if f, ok := b.w.(http.Flusher); ok {
		f.Flush()
	}
}
