package gelf

import (
	"context"
	"errors"
	"io"
	"net/http"
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
}

// Static returns a Connectors function for a fixed list, for a stack
// assembled in Go.
func Static(conns ...*logship.Connector) func() []*logship.Connector {
	return func() []*logship.Connector { return conns }
}

type key struct{}

// tap is one request's event with the writer and body reader that fill
// it in: one allocation per tapped request.
type tap struct {
	ev logship.Event
	w  writer
	rb reader
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
			t := &tap{}
			ev := &t.ev
			ev.Time = now()
			ev.RequestID = caller.RequestID(r.Context())
			ev.Path, ev.Query = r.URL.Path, r.URL.RawQuery
			ev.Header = r.Header
			ev.RemoteAddr = r.RemoteAddr
			ev.Request.ContentType = r.Header.Get("Content-Type")
			ev.Request.Size = max(r.ContentLength, 0)
			if needs.RequestBody > 0 && r.Body != nil && r.Body != http.NoBody {
				t.rb = reader{ReadCloser: r.Body, body: &ev.Request, limit: needs.RequestBody}
				r.Body = &t.rb
			}
			t.w = writer{ResponseWriter: w, body: &ev.Response, limit: needs.ResponseBody}
			if needs.Identity {
				r = r.WithContext(context.WithValue(r.Context(), key{}, ev))
			}
			next.ServeHTTP(&t.w, r)
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
		if ev, ok := ctx.Value(key{}).(*logship.Event); ok {
			ev.Identity = caller.IdentityFrom(ctx)
			if t := service.TargetFrom(ctx); t != nil && t.Service != nil {
				ev.Service, ev.Resource = t.Service.Name, t.Resource
			}
		}
		next.ServeHTTP(w, r)
	})
}

// writer records the status and the start of the response body.
type writer struct {
	http.ResponseWriter
	status int
	body   *logship.Body
	limit  int
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
