package guard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Options configures the stage. Zero values turn the matching guard off.
type Options struct {
	// MaxInFlight caps the requests running at once.
	MaxInFlight int
	// MaxBodyInFlight caps the request-body bytes being read at once.
	MaxBodyInFlight int64
	// MaxBody is the largest single body (the pipeline's body cap); a body
	// of unknown length reserves up to this much as it is read.
	MaxBody int64
	// WriteTimeout is how long one write to the client may block.
	WriteTimeout time.Duration
	// RetryAfter is the Retry-After sent with a 503; default 1s.
	RetryAfter time.Duration
	// Streams, when set, reports requests whose body the backend streams
	// to its destination without holding it (file uploads): those bodies
	// are not counted against MaxBodyInFlight.
	Streams func(*http.Request) bool
	// QueueWait is how long a request waits for a free slot before it is
	// refused, so that a short burst queues instead of failing.
	QueueWait time.Duration
}

// Guard is the stage with its counters, readable for metrics and tests.
type Guard struct {
	opts     Options
	slots    *semaphore.Weighted // nil: no cap
	inFlight atomic.Int64
	bodies   atomic.Int64
}

// New returns the guard; Stage puts it in a pipeline.
func New(opts Options) (*Guard, error) {
	if opts.MaxInFlight < 0 || opts.MaxBodyInFlight < 0 || opts.WriteTimeout < 0 || opts.MaxBody < 0 {
		return nil, errors.New("guard: limits must not be negative")
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = time.Second
	}
	g := &Guard{opts: opts}
	if opts.MaxInFlight > 0 {
		g.slots = semaphore.NewWeighted(int64(opts.MaxInFlight))
	}
	return g, nil
}

// take takes a slot of sem, waiting up to wait for one; it returns false
// when none came free or ctx ended. A free slot is taken under the
// semaphore's mutex (about 100 instructions for a take and its release,
// against 400 for a channel's send and receive); a wait costs a context
// with a timer.
func take(ctx context.Context, sem *semaphore.Weighted, wait time.Duration) bool {
	if sem.TryAcquire(1) {
		return true
	}
	if wait <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return sem.Acquire(ctx, 1) == nil
}

// InFlight is the number of requests running now.
func (g *Guard) InFlight() int64 { return g.inFlight.Load() }

// BodyBytes is the number of request-body bytes reserved now.
func (g *Guard) BodyBytes() int64 { return g.bodies.Load() }

// Busy is the 503 the guard answers when a cap is reached, with
// Retry-After set to after (at least one second).
func Busy(after time.Duration, format string, args ...any) *apierr.Error {
	e := apierr.Unavailable(format, args...)
	secs := int64((after + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	e.Header = http.Header{"Retry-After": []string{strconv.FormatInt(secs, 10)}}
	return e
}

// Stage wraps next with the guard.
func (g *Guard) Stage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.slots != nil {
			if !take(r.Context(), g.slots, g.opts.QueueWait) {
				apierr.Write(w, Busy(g.opts.RetryAfter, "The server is busy (%d requests in flight); try again later.", g.opts.MaxInFlight))
				return
			}
			defer g.slots.Release(1)
		}
		g.inFlight.Add(1)
		defer g.inFlight.Add(-1)
		if r.Body != nil && r.Body != http.NoBody {
			b := &body{ReadCloser: r.Body, g: g}
			defer b.release()
			if g.opts.Streams != nil && g.opts.Streams(r) {
				b.fixed = true // nothing reserved: the body is never held
			} else if g.opts.MaxBodyInFlight > 0 && r.ContentLength > 0 {
				if !b.reserve(r.ContentLength) {
					apierr.Write(w, Busy(g.opts.RetryAfter, "The server is receiving too much data; try again later."))
					return
				}
				b.fixed = true
			}
			r.Body = b
		}
		if d := g.opts.WriteTimeout; d > 0 && canSetWriteDeadline(w) {
			dw := deadlineWriters.Get().(*deadlineWriter)
			*dw = deadlineWriter{ResponseWriter: w, d: d}
			dw.extend()
			defer func() {
				// The server flushes what is buffered after the handler
				// returns: give that flush the full timeout too.
				dw.extend()
				*dw = deadlineWriter{} // keeps no reference to the response
				deadlineWriters.Put(dw)
			}()
			w = dw
		}
		next.ServeHTTP(w, r)
	})
}

// body counts the bytes of one request body against the guard's cap.
type body struct {
	io.ReadCloser
	g        *Guard
	mu       sync.Mutex
	reserved int64
	fixed    bool // the declared length is reserved; reads add nothing
}

func (b *body) reserve(n int64) bool {
	if b.g.opts.MaxBodyInFlight <= 0 {
		return true
	}
	if b.g.bodies.Add(n) > b.g.opts.MaxBodyInFlight {
		b.g.bodies.Add(-n)
		return false
	}
	b.mu.Lock()
	b.reserved += n
	b.mu.Unlock()
	return true
}

func (b *body) release() {
	b.mu.Lock()
	n := b.reserved
	b.reserved = 0
	b.mu.Unlock()
	b.g.bodies.Add(-n)
}

// Read reserves what it reads when the length was not declared. A read
// that fails because the client stopped sending (it closed the connection
// mid-upload) is the client's doing: apierr.ClientClosed, logged as 499.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.fixed && !b.reserve(int64(n)) {
		return 0, Busy(b.g.opts.RetryAfter, "The server is receiving too much data; try again later.")
	}
	if err != nil && err != io.EOF {
		var ae *apierr.Error
		var mbe *http.MaxBytesError
		if !errors.As(err, &ae) && !errors.As(err, &mbe) {
			err = apierr.ClientClosed(err)
		}
	}
	return n, err
}

// deadlineWriter moves the connection's write deadline forward before
// writes, so each write has WriteTimeout to complete. Writers are pooled:
// one serves a single request and goes back once its handler returned.
type deadlineWriter struct {
	http.ResponseWriter
	d    time.Duration
	last time.Time // when the deadline was last set
}

var deadlineWriters = sync.Pool{New: func() any { return new(deadlineWriter) }}

// canSetWriteDeadline reports whether http.ResponseController can set
// w's write deadline: w or a writer below it (Unwrap) has
// SetWriteDeadline, looked for as the controller does. A writer without
// one (httptest.ResponseRecorder) is not wrapped: every call would fail
// with a new error.
func canSetWriteDeadline(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// extend sets the deadline to now+d; it skips the call when the last one
// is recent enough (an eighth of d), keeping per-write cost low. The
// check reads only the monotonic clock (time.Since of a time.Now), which
// is what comparing two time.Now readings used; the wall clock is read
// when the deadline moves.
func (w *deadlineWriter) extend() {
	if !w.last.IsZero() && time.Since(w.last) < w.d/8 {
		return
	}
	now := time.Now()
	w.last = now
	_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(now.Add(w.d))
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

// Flush flushes the underlying writer.
func (w *deadlineWriter) Flush() {
	w.extend()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController and apierr reach the writer below.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Slots caps concurrent requests per key.
type Slots struct {
	max  int
	wait time.Duration
	m    sync.Map // key → *semaphore.Weighted
}

// NewSlots returns slots allowing max requests per key, a request waiting
// up to wait for one to come free; max 0 allows any.
func NewSlots(max int, wait time.Duration) *Slots { return &Slots{max: max, wait: wait} }

func (s *Slots) sem(key string) *semaphore.Weighted {
	v, ok := s.m.Load(key)
	if !ok {
		v, _ = s.m.LoadOrStore(key, semaphore.NewWeighted(int64(s.max)))
	}
	return v.(*semaphore.Weighted)
}

// Acquire takes a slot for key, waiting for one as configured; it returns
// false when none came free (or ctx ended). Every true must be matched by
// a Release.
func (s *Slots) Acquire(ctx context.Context, key string) bool {
	if s == nil || s.max <= 0 {
		return true
	}
	return take(ctx, s.sem(key), s.wait)
}

// Slot is a slot taken by Enter, given back by its Release.
type Slot struct{ sem *semaphore.Weighted }

// Enter is Acquire returning the slot, whose Release gives it back
// without looking the key up again. The zero Slot (no cap) releases
// nothing.
func (s *Slots) Enter(ctx context.Context, key string) (Slot, bool) {
	if s == nil || s.max <= 0 {
		return Slot{}, true
	}
	sem := s.sem(key)
	if !take(ctx, sem, s.wait) {
		return Slot{}, false
	}
	return Slot{sem}, true
}

// Release gives the slot back.
func (sl Slot) Release() {
	if sl.sem != nil {
		sl.sem.Release(1)
	}
}

// Release gives back a slot taken by Acquire.
func (s *Slots) Release(key string) {
	if s == nil || s.max <= 0 {
		return
	}
	s.sem(key).Release(1)
}

// Max is the per-key cap (0: none).
func (s *Slots) Max() int {
	if s == nil {
		return 0
	}
	return s.max
}
