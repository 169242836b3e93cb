package logship

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Event is one finished API request, or one message written to a log
// service, as plain data. The stage fills it in and hands it to every
// connector; it must not change once shipped (connectors read it from
// their sender goroutines). Nothing in it is redacted yet: connectors
// redact while they format.
type Event struct {
	// Time is when the request arrived; Duration how long it took.
	Time     time.Time
	Duration time.Duration
	// RequestID is the request's id (X-Request-ID).
	RequestID string
	// Method is the request's verb (after verb tunnelling).
	Method string
	// Path is the URL path (/api/v2/db/_table/contact); Query the raw
	// query string.
	Path  string
	Query string
	// Service and Resource name the target (Resource without slashes at
	// either end). When Service is empty they are read from Path.
	Service  string
	Resource string
	// Header is the request's header. It is read, never written.
	Header map[string][]string
	// RemoteAddr is the client's address.
	RemoteAddr string
	// Request is the request body as far as it was captured.
	Request Body
	// Status is the response status; Response the response body as far
	// as it was captured.
	Status   int
	Response Body
	// Identity is the caller (nil when no stage identified one).
	Identity *caller.Identity

	// Message and Level are set for a message written to a log service
	// (POST /api/v2/{logsvc}); HasLevel says Level was given. A request
	// event leaves them empty and gets its level from its status.
	Message  string
	Level    Level
	HasLevel bool

	// refs counts the holders of a recycled event (see Recycle).
	refs    atomic.Int32
	release func(*Event)
}

// Recycle makes ev a recycled event: fn is called once the caller and
// every connector the event was shipped to are done with it, so that the
// caller can reuse it (from a sync.Pool, say). The caller holds one
// reference from now on, and gives it up with Release once it has
// shipped the event; each connector that queues the event holds another
// until it has sent it. An event that is not recycled needs no Release.
func (e *Event) Recycle(fn func(*Event)) {
	e.release = fn
	e.refs.Store(1)
}

// Release gives up one reference to a recycled event; the last one calls
// the function given to Recycle. It does nothing for an event that is not
// recycled.
func (e *Event) Release() {
	if e.release != nil && e.refs.Add(-1) == 0 {
		e.release(e)
	}
}

// hold takes a reference for a connector's queue.
func (e *Event) hold() {
	if e.release != nil {
		e.refs.Add(1)
	}
}

// Body is a request or response body as captured: its content type, its
// first bytes (up to the capture limit) and its whole size.
type Body struct {
	ContentType string
	// Data is the start of the body, at most the capture limit.
	Data []byte
	// Size is the body's whole length in bytes as read or written (-1
	// when unknown).
	Size int64
}

// Truncated reports whether Data is shorter than the body.
func (b *Body) Truncated() bool { return b.Size > int64(len(b.Data)) }

// target returns the event's service and resource, read from the path
// (/api/v2/{service}/{resource}) when the stage did not set them.
func (e *Event) target() (svc, resource string) {
	if e.Service != "" {
		return e.Service, e.Resource
	}
	rest, ok := strings.CutPrefix(e.Path, "/api/v2/")
	if !ok {
		return "", strings.Trim(e.Path, "/")
	}
	svc, resource, _ = strings.Cut(rest, "/")
	return svc, strings.Trim(resource, "/")
}

// Name is the event's name in DreamFactory's form:
// {service}.{resource with "/" as "."}.{verb in lower case}, e.g.
// db._table.contact.get.
func (e *Event) Name() string {
	svc, res := e.target()
	var b strings.Builder
	b.WriteString(svc)
	if res != "" {
		b.WriteByte('.')
		b.WriteString(strings.ReplaceAll(res, "/", "."))
	}
	b.WriteByte('.')
	b.WriteString(strings.ToLower(e.Method))
	return b.String()
}
