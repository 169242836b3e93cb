package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// DefaultMaxReplyBytes bounds the body of an inner call's reply when
// InnerCall.MaxReplyBytes is zero.
const DefaultMaxReplyBytes int64 = 16 << 20

// ErrReplyTooLarge is returned by Call when a reply's body exceeds the
// call's MaxReplyBytes.
var ErrReplyTooLarge = errors.New("inner call: reply too large")

// InnerCall is one request a backend or engine sends through the platform's
// own /api/v2 pipeline on a caller's behalf (an MCP tool, an event script's
// platform.api).
type InnerCall struct {
	// Method is the HTTP method; "" means GET.
	Method string
	// Path is the path below /api/v2/, as in "db/_table/todo" or
	// "db/_table/todo/5"; it may carry a query ("db/_table/todo?limit=5").
	// Segments are sent as written: escape them with url.PathEscape.
	Path string
	// Query is added to the path's own query.
	Query url.Values
	// Body is sent as the request body with Content-Type
	// application/json; nil sends none.
	Body []byte
	// Header holds extra request headers (never credentials: the caller's
	// identity travels in the context).
	Header http.Header
	// MaxReplyBytes bounds the reply body; zero means
	// DefaultMaxReplyBytes.
	MaxReplyBytes int64
}

// InnerReply is what the pipeline answered.
type InnerReply struct {
	// Status is the HTTP status.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Body is the response body.
	Body []byte
}

// Call runs c through h (the /api/v2 pipeline: [Registry.Handler]) as the
// caller id, and returns the reply. The request carries id in its context,
// marked with caller.WithInner, so the API key and session stages keep it
// instead of reading credentials; RBAC, rate limits (unless id is an
// administrator or a script: see the ratelimit stage), scripts and the
// backend then treat it exactly as a client's request with those
// credentials. Cancelling ctx cancels the call. An error is returned only
// when the call could not be made or its reply exceeds MaxReplyBytes;
// every answer of the pipeline, errors included, is a reply.
func Call(ctx context.Context, h http.Handler, id *caller.Identity, c InnerCall) (*InnerReply, error) {
	if h == nil {
		return nil, errors.New("inner call: no pipeline")
	}
	if id == nil {
		return nil, errors.New("inner call: no caller identity")
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	target := "/api/v2/" + strings.TrimLeft(c.Path, "/")
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("inner call: path %q: %w", c.Path, err)
	}
	if len(c.Query) > 0 {
		q := u.Query()
		for k, vs := range c.Query {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		u.RawQuery = q.Encode()
	}
	var body io.Reader = http.NoBody
	if c.Body != nil {
		body = bytes.NewReader(c.Body)
	}
	ictx := caller.WithInner(caller.WithIdentity(ctx, id))
	req, err := http.NewRequestWithContext(ictx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("inner call: %w", err)
	}
	for k, vs := range c.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if c.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.RequestURI = u.RequestURI()
	req.RemoteAddr = "inner"
	max := c.MaxReplyBytes
	if max <= 0 {
		max = DefaultMaxReplyBytes
	}
	rec := &recorder{header: http.Header{}, max: max}
	h.ServeHTTP(rec, req)
	if rec.over {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrReplyTooLarge, max)
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &InnerReply{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}, nil
}

// recorder is the ResponseWriter of an inner call: it keeps the reply up
// to max bytes.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	max    int64
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if int64(r.body.Len()+len(p)) > r.max {
		r.over = true
		return 0, ErrReplyTooLarge
	}
	return r.body.Write(p)
}

// Flush is a no-op: the reply is read once the call returns.
func (r *recorder) Flush() {}
