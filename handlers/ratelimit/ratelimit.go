package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// MsgExceeded is the message of the 429 envelope, DreamFactory's text with
// its trailing space.
const MsgExceeded = "API limit(s) exceeded. "

// MsgUnavailable is the message of the 503 sent when the counters cannot be
// reached and Options.FailClosed is set.
const MsgUnavailable = "Rate limits cannot be checked right now; try again shortly."

// Header names the stage sets.
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderRetryAfter = "Retry-After"
)

// Canonical forms of the header names, for direct map writes.
var (
	keyLimit     = http.CanonicalHeaderKey(HeaderLimit)
	keyRemaining = http.CanonicalHeaderKey(HeaderRemaining)
	keyReset     = http.CanonicalHeaderKey(HeaderReset)
)

// ErrorLogInterval is the shortest time between two log lines about the
// counters being unreachable; failures in between are counted and reported
// with the next line.
const ErrorLogInterval = 10 * time.Second

// Options configures the stage.
type Options struct {
	// Limits returns the Engine in force, or nil when no limit is defined;
	// required. It is called once per request.
	Limits func() *limiter.Engine
	// Logger receives the errors of the counter store; nil means
	// slog.Default().
	Logger *slog.Logger
	// Registerer, when set, receives the stage's metrics:
	// portcullis_ratelimit_rejected_total (requests answered 429) and
	// portcullis_ratelimit_errors_total (requests the store could not count).
	Registerer prometheus.Registerer
	// FailClosed answers 503 when the counters cannot be reached; by
	// default such requests go on uncounted (see the package doc).
	FailClosed bool
	// Now is the clock used to space out error log lines; nil means
	// time.Now. (Windows and resets are timed by the limiter store.)
	Now func() time.Time
}

// Exceeded describes, in the 429's context, one limit that rejected the
// request. The fields are those of the limit record (/system/limit), with
// null for the ones its type does not use, plus the window's end.
type Exceeded struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	Type      string  `json:"type"`
	KeyText   string  `json:"key_text"`
	Rate      int64   `json:"rate"`
	Period    string  `json:"period"`
	UserID    *int64  `json:"user_id"`
	RoleID    *int64  `json:"role_id"`
	ServiceID *int64  `json:"service_id"`
	Endpoint  *string `json:"endpoint"`
	Verb      *string `json:"verb"`
	// Reset is when this limit's window ends (Unix seconds).
	Reset int64 `json:"reset"`
}

// NewExceeded returns the context entry of an exceeded outcome.
func NewExceeded(o limiter.Outcome) Exceeded {
	l := o.Limit
	id := func(v int64) *int64 {
		if v <= 0 {
			return nil
		}
		return &v
	}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return Exceeded{
		ID: l.ID, Name: l.Name, Type: string(l.Type), KeyText: l.KeyText(), Rate: l.Rate, Period: string(l.Period),
		UserID: id(l.UserID), RoleID: id(l.RoleID), ServiceID: id(l.ServiceID),
		Endpoint: str(l.Endpoint), Verb: str(l.Verb), Reset: o.Reset,
	}
}

// Static returns a Limits source for a fixed list of limits counted in
// store (a new memory store when nil), for programs that configure the stage
// in Go without a system database. The limits are validated as limiter.New
// validates them: every one needs a unique positive ID.
func Static(limits []limiter.Limit, store *limiter.Store) (func() *limiter.Engine, error) {
	e, err := limiter.New(limits, store)
	if err != nil {
		return nil, err
	}
	return func() *limiter.Engine { return e }, nil
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Limits == nil {
		return nil, errors.New("ratelimit: Limits is required")
	}
	s := &stage{limits: opts.Limits, failClosed: opts.FailClosed, log: opts.Logger, now: opts.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if opts.Registerer != nil {
		s.rejected = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "portcullis_ratelimit_rejected_total",
			Help: "Requests rejected with 429 because a rate limit was exceeded.",
		})
		s.errors = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "portcullis_ratelimit_errors_total",
			Help: "Requests whose rate limits could not be counted (counter store unreachable).",
		})
		for _, c := range []prometheus.Collector{s.rejected, s.errors} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, errors.Join(errors.New("ratelimit: register metrics"), err)
			}
		}
	}
	return s.wrap, nil
}

type stage struct {
	limits     func() *limiter.Engine
	failClosed bool
	log        *slog.Logger
	now        func() time.Time
	rejected   prometheus.Counter // nil without a Registerer
	errors     prometheus.Counter

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int64

	limitText, resetText lastText
}

// lastText formats a number that seldom changes (a header's limit, its
// window's reset) and keeps the text of the last one, so that the requests
// of a window share one string.
type lastText struct{ p atomic.Pointer[numText] }

type numText struct {
	n    int64
	text string
}

func (l *lastText) format(n int64) string {
	if t := l.p.Load(); t != nil && t.n == n {
		return t.text
	}
	t := &numText{n: n, text: strconv.FormatInt(n, 10)}
	l.p.Store(t)
	return t.text
}

// outcomePool holds the arrays the requests' outcomes are written to.
var outcomePool = sync.Pool{New: func() any { return new([8]limiter.Outcome) }}

func (s *stage) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		id := caller.IdentityFrom(ctx)
		if id != nil && (id.Admin || id.FromScript()) {
			next.ServeHTTP(w, r)
			return
		}
		e := s.limits()
		if e == nil {
			next.ServeHTTP(w, r)
			return
		}
		rejection, err := s.evaluate(ctx, e, w, request(r, id))
		if err != nil {
			if ctx.Err() != nil {
				return // the client is gone; nothing to answer
			}
			s.storeFailed(err)
			if s.failClosed {
				apierr.Write(w, unavailable(err))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if rejection != nil {
			if s.rejected != nil {
				s.rejected.Inc()
			}
			apierr.Write(w, rejection)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// evaluate counts req and, when a limit applies, sets the X-RateLimit-*
// headers; it returns the 429 of a rejected request, nil when the request
// may go on.
func (s *stage) evaluate(ctx context.Context, e *limiter.Engine, w http.ResponseWriter, req limiter.Request) (*apierr.Error, error) {
	// Room for the usual handful of outcomes, pooled rather than on the
	// stack, which it would grow by 1.7 KB.
	outcomes := outcomePool.Get().(*[8]limiter.Outcome)
	defer outcomePool.Put(outcomes)
	d, err := e.EvaluateInto(ctx, req, outcomes[:0])
	if err != nil || !d.Applied() {
		return nil, err
	}
	// The values and the remaining count's text are held in the room of
	// the request's caller.State (allocated without one). The limit and
	// the reset change with the configuration and once per window: their
	// text is reused from the request before.
	st := caller.StateFrom(ctx)
	var digits [20]byte
	h := w.Header()
	h[keyLimit] = st.HeaderValue(s.limitText.format(d.Limit))
	h[keyRemaining] = st.HeaderValue(st.Text(strconv.AppendInt(digits[:0], d.Remaining, 10)))
	h[keyReset] = st.HeaderValue(s.resetText.format(d.Reset))
	if !d.Allowed {
		return Rejection(d), nil // copies what it keeps of the outcomes
	}
	return nil, nil
}

// request describes r to the engine.
func request(r *http.Request, id *caller.Identity) limiter.Request {
	req := limiter.Request{Verb: r.Method}
	if id != nil {
		req.UserID, req.RoleID = id.UserID, id.RoleID
	}
	if t := service.TargetFrom(r.Context()); t != nil {
		if t.Service != nil {
			req.ServiceID, req.ServiceName = t.Service.ID, t.Service.Name
		}
		req.Endpoint = t.Resource
		if t.Verb != "" {
			req.Verb = t.Verb
		}
	}
	return req
}

// Rejection is the 429 for a rejected decision: the envelope with
// MsgExceeded, the exceeded limits in context and the Retry-After and
// X-RateLimit-* headers.
func Rejection(d limiter.Decision) *apierr.Error {
	ex := d.Exceeded()
	list := make([]Exceeded, len(ex))
	for i, o := range ex {
		list[i] = NewExceeded(o)
	}
	e := apierr.TooManyRequests(MsgExceeded).WithContext(list)
	e.Header = http.Header{}
	e.Header.Set(HeaderRetryAfter, strconv.FormatInt(max(d.RetryAfter, 1), 10))
	e.Header.Set(HeaderLimit, strconv.FormatInt(d.Limit, 10))
	e.Header.Set(HeaderRemaining, strconv.FormatInt(d.Remaining, 10))
	e.Header.Set(HeaderReset, strconv.FormatInt(d.Reset, 10))
	return e
}

// unavailable is the 503 of a fail-closed stage whose store failed.
func unavailable(cause error) *apierr.Error {
	e := apierr.Unavailable(MsgUnavailable).WithCause(cause)
	e.Header = http.Header{HeaderRetryAfter: []string{"1"}}
	return e
}

// storeFailed counts a store error and logs it, at most once per
// ErrorLogInterval.
func (s *stage) storeFailed(err error) {
	if s.errors != nil {
		s.errors.Inc()
	}
	now := s.now()
	s.mu.Lock()
	if !s.lastLog.IsZero() && now.Sub(s.lastLog) < ErrorLogInterval {
		s.suppressed++
		s.mu.Unlock()
		return
	}
	n := s.suppressed
	s.lastLog, s.suppressed = now, 0
	s.mu.Unlock()
	action := "request let through uncounted"
	if s.failClosed {
		action = "request refused with 503"
	}
	s.log.Error("rate limits could not be counted; "+action, "error", err, "failures_not_logged", n)
}
