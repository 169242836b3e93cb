package gelf

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Options configures the stage.
type Options struct {
	// Connectors returns the connectors in force; it is called once per
	// request and must be cheap (an atomic load). Required.
	Connectors func() []*logship.Connector
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// FindByContext makes the tap put its event in the request's context
	// for Observe when a connector ships _platform.session. Without it
	// (the default), Observe finds the event through the response
	// writer's Unwrap chain, which costs no allocation but needs every
	// stage between the tap and Observe that wraps the writer to offer
	// Unwrap() http.ResponseWriter (as http.ResponseController expects,
	// and as Portcullis's stages do). Set it for a stack with a stage
	// that does not; it costs two allocations per request.
	FindByContext bool
}

// Static returns a Connectors function for a fixed list, for a stack
// assembled in Go.
func Static(conns ...*logship.Connector) func() []*logship.Connector {
	return func() []*logship.Connector { return conns }
}

type key struct{}

// byContext is set once a tap with FindByContext exists: only such a tap
// puts an event in a context, so until then Observe does not look there
// (a lookup that would walk the whole context chain for nothing).
var byContext atomic.Bool

// tap is one request's event with the writer and body reader that fill
// it in. Taps are recycled: the last connector done with the event puts
// it back in the pool, with its body buffers, so that a request costs no
// allocation once the pool is warm.
type tap struct {
	ev      logship.Event
	w       writer
	rb      reader
	recycle func(*logship.Event)
}

var taps sync.Pool

// getTap takes a tap from the pool, or makes one.
func getTap() *tap {
	if t, ok := taps.Get().(*tap); ok {
		return t
	}
	t := new(tap)
	t.recycle = func(*logship.Event) { t.reset(); taps.Put(t) }
	return t
}

// reset empties a tap whose event every connector is done with, keeping
// its body buffers.
func (t *tap) reset() {
	reqData, respData := t.ev.Request.Data[:0], t.ev.Response.Data[:0]
	t.w = writer{}
	t.rb = reader{}
	t.ev = logship.Event{}
	t.ev.Request.Data, t.ev.Response.Data = reqData, respData
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Connectors == nil {
		return nil, errors.New("gelf: Connectors is required")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.FindByContext {
		byContext.Store(true)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conns := opts.Connectors()
			if len(conns) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			var needs logship.Needs
			for _, c := range conns {
				needs = needs.Merge(c.Needs())
			}
			t := getTap()
			ev := &t.ev
			ev.Recycle(t.recycle)
			ev.Time = now()
			ev.RequestID = caller.RequestID(r.Context())
			ev.Path, ev.Query = r.URL.Path, r.URL.RawQuery
			ev.Header = r.Header
			ev.RemoteAddr = r.RemoteAddr
			ev.Request.ContentType = r.Header.Get("Content-Type")
			ev.Request.Size = max(r.ContentLength, 0)
			body := r.Body
			if needs.RequestBody > 0 && r.Body != nil && r.Body != http.NoBody {
				t.rb = reader{ReadCloser: r.Body, body: &ev.Request, limit: needs.RequestBody}
				r.Body = &t.rb
			}
			t.w = writer{ResponseWriter: w, body: &ev.Response, limit: needs.ResponseBody, ev: ev}
			if needs.Identity && opts.FindByContext {
				r = r.WithContext(context.WithValue(r.Context(), key{}, ev))
			}
			next.ServeHTTP(&t.w, r)
			if r.Body == &t.rb {
				r.Body = body // the request keeps no reference to the recycled tap
			}
			ev.Duration = now().Sub(ev.Time)
			ev.Method = r.Method
			ev.Status = t.w.status
			if ev.Status == 0 {
				ev.Status = http.StatusOK
			}
			ev.Response.ContentType = t.w.Header().Get("Content-Type")
			for _, c := range conns {
				c.Ship(ev)
			}
			ev.Release()
		})
	}, nil
}

// Observe is the stage that records, for the tap, the target service and
// the caller's identity that the stages before it put in the context.
// Place it after the identity stages (in proxy.New it is the last one
// before the backend); a stack without it ships no _platform.session.
func Observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ev := find(w)
		if ev == nil && byContext.Load() {
			ev, _ = ctx.Value(key{}).(*logship.Event)
		}
		if ev != nil {
			ev.Identity = caller.IdentityFrom(ctx)
			if t := service.TargetFrom(ctx); t != nil && t.Service != nil {
				ev.Service, ev.Resource = t.Service.Name, t.Resource
			}
		}
		next.ServeHTTP(w, r)
	})
}

// find returns the event of the tap's writer below w, following Unwrap.
func find(w http.ResponseWriter) *logship.Event {
	for range 32 {
		switch x := w.(type) {
		case *writer:
			return x.ev
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// writer records the status and the start of the response body.
type writer struct {
	http.ResponseWriter
	status int
	body   *logship.Body
	limit  int
	ev     *logship.Event
}

func (w *writer) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.body.Size += int64(n)
	if room := w.limit - len(w.body.Data); room > 0 && n > 0 {
		if w.body.Data == nil {
			w.body.Data = make([]byte, 0, min(w.limit, max(n, 512)))
		}
		w.body.Data = append(w.body.Data, b[:min(n, room)]...)
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the server's writer (Flush,
// deadlines).
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on, for handlers that look for http.Flusher.
func (w *writer) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// reader copies the start of the request body as it is read.
type reader struct {
	io.ReadCloser
	body  *logship.Body
	limit int
	read  int64
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.read += int64(n)
	if r.read > r.body.Size {
		r.body.Size = r.read
	}
	if room := r.limit - len(r.body.Data); room > 0 && n > 0 {
		if r.body.Data == nil {
			r.body.Data = make([]byte, 0, min(r.limit, max(int(r.body.Size), n)))
		}
		r.body.Data = append(r.body.Data, p[:min(n, room)]...)
	}
	return n, err
}
