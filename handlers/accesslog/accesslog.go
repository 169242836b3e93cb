package accesslog

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Options configures the stage.
type Options struct {
	// Logger receives one Info line per request and one Error line per 5xx;
	// required.
	Logger *slog.Logger
	// Registerer, when set, receives the request metrics.
	Registerer prometheus.Registerer
	// Now is the clock; nil means the monotonic clock (durations only:
	// one clock read at each end of a request).
	Now func() time.Time
}

// since0 is the time the monotonic clock measures requests from:
// time.Since of a time with a monotonic reading reads only that clock.
var since0 = time.Now()

// metricPair is the request counter and latency histogram of one
// service, method and status.
type metricPair struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// metricCache keeps the metrics of each service, method and status seen,
// so that a request finds its two with a lookup of the service's name, a
// switch on the method and a scan of the few statuses answered, instead of
// two hashings and checks of its label values in the vectors (and a
// sync.Map of composite keys, which hashed the three values through the
// generic hash: about 530 instructions per request against 120). Reads
// take no lock: the map of services and each method's list of statuses
// are replaced, never changed, when a combination is first seen. Entries
// are never removed, as the vectors never drop a series: the label values
// are the services that existed, the methods (seven and OTHER) and the
// statuses answered.
type metricCache struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	mu       sync.Mutex // serializes additions
	services atomic.Pointer[map[string]*serviceMetrics]
}

// serviceMetrics is one service's metrics by method (methodIndex).
type serviceMetrics struct {
	byMethod [len(methodLabels)]atomic.Pointer[[]statusMetrics]
}

// statusMetrics is the pair of one status.
type statusMetrics struct {
	status int
	pair   *metricPair
}

// methodLabels are the values of the method label, in methodIndex order.
var methodLabels = [...]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodHead, http.MethodOptions, "OTHER"}

// methodIndex is the position of a methodLabel value in methodLabels.
func methodIndex(label string) int {
	switch label {
	case http.MethodGet:
		return 0
	case http.MethodPost:
		return 1
	case http.MethodPut:
		return 2
	case http.MethodPatch:
		return 3
	case http.MethodDelete:
		return 4
	case http.MethodHead:
		return 5
	case http.MethodOptions:
		return 6
	}
	return 7
}

// of returns the metrics of service, method (a methodLabel value) and
// status.
func (c *metricCache) of(service, method string, status int) *metricPair {
	if m := c.services.Load(); m != nil {
		if sm := (*m)[service]; sm != nil {
			if list := sm.byMethod[methodIndex(method)].Load(); list != nil {
				for i := range *list {
					if (*list)[i].status == status {
						return (*list)[i].pair
					}
				}
			}
		}
	}
	return c.add(service, method, status)
}

// add finds or makes the metrics of a combination of, under the lock.
func (c *metricCache) add(service, method string, status int) *metricPair {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m map[string]*serviceMetrics
	if p := c.services.Load(); p != nil {
		m = *p
	}
	sm := m[service]
	if sm == nil {
		sm = new(serviceMetrics)
		next := make(map[string]*serviceMetrics, len(m)+1)
		for k, v := range m {
			next[k] = v
		}
		next[service] = sm
		c.services.Store(&next)
	}
	slot := &sm.byMethod[methodIndex(method)]
	var list []statusMetrics
	if p := slot.Load(); p != nil {
		list = *p
	}
	for _, e := range list {
		if e.status == status {
			return e.pair
		}
	}
	pair := &metricPair{
		requests: c.requests.WithLabelValues(service, method, strconv.Itoa(status)),
		latency:  c.latency.WithLabelValues(service, method),
	}
	next := append(list[:len(list):len(list)], statusMetrics{status, pair})
	slot.Store(&next)
	return pair
}

// record is the per-request state inner stages fill in.
type record struct {
	service string
	user    string
}

type key struct{}

// SetService names the service the request resolved to.
func SetService(ctx context.Context, name string) {
	if rec, ok := ctx.Value(key{}).(*record); ok && rec != nil {
		rec.service = name
	}
}

// SetUser names the signed-in user (an id, never a credential).
func SetUser(ctx context.Context, user string) {
	if rec, ok := ctx.Value(key{}).(*record); ok && rec != nil {
		rec.user = user
	}
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Logger == nil {
		return nil, errors.New("accesslog: Logger is required")
	}
	elapsedSince := func() time.Duration { return time.Since(since0) }
	if opts.Now != nil {
		elapsedSince = func() time.Duration { return opts.Now().Sub(since0) }
	}
	var requests *prometheus.CounterVec
	var latency *prometheus.HistogramVec
	if opts.Registerer != nil {
		requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portcullis_http_requests_total",
			Help: "HTTP requests by service, method and status.",
		}, []string{"service", "method", "status"})
		latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "portcullis_http_request_duration_seconds",
			Help:    "HTTP request latency by service and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"service", "method"})
		for _, c := range []prometheus.Collector{requests, latency} {
			if err := opts.Registerer.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					return nil, err
				}
				switch c.(type) {
				case *prometheus.CounterVec:
					requests = are.ExistingCollector.(*prometheus.CounterVec)
				case *prometheus.HistogramVec:
					latency = are.ExistingCollector.(*prometheus.HistogramVec)
				}
			}
		}
	}
	var metrics *metricCache
	if requests != nil {
		metrics = &metricCache{requests: requests, latency: latency}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := elapsedSince()
			rw := writers.Get().(*writer)
			*rw = writer{ResponseWriter: w, status: http.StatusOK}
			rec := &rw.rec
			st, fresh := caller.Ensure(r.Context())
			st.Put(key{}, rec)
			if fresh {
				r = r.WithContext(st)
			}
			ctx := r.Context()
			next.ServeHTTP(rw, r)
			defer func() {
				// The writer goes back to the pool; a context kept past
				// the response finds no record to write into.
				st.Put(key{}, (*record)(nil))
				*rw = writer{}
				writers.Put(rw)
			}()
			elapsed := elapsedSince() - start
			if rw.status >= 500 && r.Context().Err() != nil {
				// The client went away and the handler failed because of it.
				rw.status = apierr.StatusClientClosed
			}
			service := rec.service
			if service == "" {
				service = "unknown"
			}
			method := methodLabel(r.Method)
			if metrics != nil {
				m := metrics.of(service, method, rw.status)
				m.requests.Inc()
				m.latency.Observe(elapsed.Seconds())
			}
			level, msg := slog.LevelInfo, "request"
			if rw.status == apierr.StatusClientClosed {
				msg = "client closed request"
			} else if rw.status >= 500 {
				level, msg = slog.LevelError, "request failed"
			}
			if !opts.Logger.Enabled(ctx, level) {
				return // no attributes built for a line nobody keeps
			}
			attrs := []slog.Attr{
				slog.String("request_id", caller.RequestID(ctx)),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("query", RedactQuery(r.URL.RawQuery)),
				slog.String("service", service),
				slog.Int("status", rw.status),
				slog.Int64("bytes", rw.bytes),
				slog.Duration("duration", elapsed),
				slog.String("remote", r.RemoteAddr),
			}
			if rec.user != "" {
				attrs = append(attrs, slog.String("user", rec.user))
			}
			if rw.status >= 500 && rw.err != nil {
				attrs = append(attrs, slog.String("error", rw.err.Error()))
			}
			opts.Logger.LogAttrs(ctx, level, msg, attrs...)
		})
	}, nil
}

func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodHead, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// sensitive names query parameters whose values are never logged.
var sensitive = []string{"api_key", "session_token", "token", "password", "code", "ticket", "secret"}

// RedactQuery returns a raw query with credential values replaced by ***.
func RedactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "(unparsable)"
	}
	for k := range q {
		lk := strings.ToLower(k)
		for _, s := range sensitive {
			if strings.Contains(lk, s) {
				q[k] = []string{"***"}
			}
		}
	}
	return q.Encode()
}

// writers recycles the writers (with their records) of finished requests.
var writers = sync.Pool{New: func() any { return new(writer) }}

// writer records the status, size and error cause of a response, and
// holds the request's record. Writers are pooled: one serves a single
// request and goes back once its line is logged.
type writer struct {
	http.ResponseWriter
	rec         record
	status      int
	bytes       int64
	wroteHeader bool
	err         error
}

func (w *writer) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.wroteHeader = true
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// RecordError keeps the cause of an error response for the log.
func (w *writer) RecordError(err error) { w.err = err }

// Unwrap lets http.ResponseController reach the underlying writer, so
// flushing and streaming still work.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes the underlying writer when it can.
func (w *writer) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
