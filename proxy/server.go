package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/handlers/guard"
	scriptstage "github.com/portcullis-dev/portcullis/handlers/script"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/mail"
	"github.com/portcullis-dev/portcullis/proxy/mcp"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// Option changes how New assembles a Server.
type Option func(*options)

type options struct {
	types []service.Type
}

// WithTypes adds service types (or replaces built-in ones of the same name).
func WithTypes(types ...service.Type) Option {
	return func(o *options) { o.types = append(o.types, types...) }
}

// Server is a running Portcullis instance: an http.Handler for /healthz,
// /metrics and /api/v2/. Close it to stop watching the configuration and
// release every backend.
type Server struct {
	cfg       Config
	logger    *slog.Logger
	store     *store.Store
	ownsStore bool

	types map[string]service.Type
	infos []service.Info

	// limitStore holds the rate-limit counters for the server's life;
	// redis is its client when the server opened it (Config.RedisURL).
	limitStore *limiter.Store
	redis      *redis.Client

	state    atomic.Pointer[state]
	reloadMu sync.Mutex
	// scriptDir watches DataDir/scripts (see scripts.go).
	scriptDir *script.Dir
	// releaseWorkers lets the external script workers go at Shutdown
	// (script.HoldWorkers).
	releaseWorkers func()

	metrics *prometheus.Registry
	// audit is the log of MCP tool calls (GET /_internal/ai/audit-stream).
	audit *mcp.Audit
	api   http.Handler // the /api/v2 pipeline
	root  http.Handler // everything

	// slots caps the requests in flight per service.
	slots *guard.Slots

	// draining is set by Drain.
	draining atomic.Bool

	// scriptQueue runs queued event scripts after their response.
	scriptQueue *scriptstage.Queue

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds a Server from cfg: it opens the system store (creating and
// migrating it when needed), loads the configuration, builds the backends
// and starts watching for changes. It does not seed the store: run Init (or
// `portcullis init`) for a fresh instance.
func New(ctx context.Context, cfg Config, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("proxy: invalid config: %w", err)
	}
	cfg = cfg.withDefaults()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, metrics: prometheus.NewRegistry()}
	s.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := s.openLimitStore(ctx); err != nil {
		return nil, err
	}

	s.types = map[string]service.Type{}
	s.audit = newAudit(s.metrics)
	s.scriptQueue = newScriptQueue(cfg, s.metrics)
	logs, err := logship.NewMetrics(s.metrics)
	if err != nil {
		s.closeLimitStore()
		return nil, err
	}
	for _, t := range append(defaultTypes(s.limitStore, s.audit, mail.New(s, cfg.PublicURL), logs), o.types...) {
		s.types[t.Info().Name] = t
	}
	seen := map[string]bool{}
	for _, t := range s.types {
		s.infos = append(s.infos, t.Info())
		seen[t.Info().Name] = true
	}
	for _, info := range service.Generic {
		if !seen[info.Name] {
			s.infos = append(s.infos, info)
		}
	}

	s.store = cfg.Store
	if s.store == nil {
		if err := ensureDataDir(cfg.DataDir); err != nil {
			s.closeLimitStore()
			return nil, err
		}
		st, err := store.Open(ctx, cfg.SystemDB)
		if err != nil {
			s.closeLimitStore()
			return nil, fmt.Errorf("proxy: %w", err)
		}
		s.store, s.ownsStore = st, true
	}
	api, root, err := s.pipeline()
	if err != nil {
		s.closeStore()
		return nil, err
	}
	s.api, s.root = api, root
	s.openScriptDir()
	s.releaseWorkers = script.HoldWorkers()
	if err := s.reload(ctx, true); err != nil {
		s.scriptDir.Close()
		s.releaseWorkers()
		s.closeStore()
		return nil, fmt.Errorf("proxy: load configuration: %w", err)
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.wg.Add(1)
	go s.watch(wctx)
	return s, nil
}

// ensureDataDir creates the data directory's folders.
func ensureDataDir(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, "storage"), filepath.Join(dir, "storage", "wsdl"), filepath.Join(dir, "scripts")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return fmt.Errorf("proxy: create data directory: %w", err)
		}
	}
	return nil
}

// Init seeds a fresh system store (built-in services and apps, the first
// administrator); see store.Store.Init. It is idempotent.
func Init(ctx context.Context, cfg Config, opts store.InitOptions) (store.InitResult, error) {
	cfg = cfg.withDefaults()
	st := cfg.Store
	if st == nil {
		if err := ensureDataDir(cfg.DataDir); err != nil {
			return store.InitResult{}, err
		}
		var err error
		st, err = store.Open(ctx, cfg.SystemDB)
		if err != nil {
			return store.InitResult{}, fmt.Errorf("proxy: %w", err)
		}
		defer st.Close()
	}
	return st.Init(ctx, opts)
}

// ServeHTTP serves /healthz, /metrics and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Connection", "close")
	}
	if isCleanAPIPath(r) {
		s.api.ServeHTTP(w, r) // what the root mux would pick, without its path matching
		return
	}
	s.root.ServeHTTP(w, r)
}

// isCleanAPIPath reports whether r is for /api/v2 or below with a path the
// root mux would not clean or redirect (no empty, "." or ".." segments),
// so that it can skip the mux: every such path goes to the /api/v2
// pipeline anyway.
func isCleanAPIPath(r *http.Request) bool {
	p := r.URL.Path
	if r.Method == http.MethodConnect || !strings.HasPrefix(p, "/api/v2") || (len(p) > 7 && p[7] != '/') {
		return false
	}
	return !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")
}

// Store returns the system store.
func (s *Server) Store() *store.Store { return s.store }

// Config returns the configuration the server runs with, defaults filled.
func (s *Server) Config() Config { return s.cfg }

// closeWait is how long Close lets the requests still running on a
// backend finish before it closes the backend under them.
const closeWait = 5 * time.Second

// Close stops the configuration watcher and closes every backend (after its
// requests drain, for at most closeWait) and the store New opened.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	return s.Shutdown(ctx)
}

// Shutdown is Close waiting for requests still running on the backends
// until ctx ends; then the backends are closed under them. It always
// returns, and releases everything.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Drain()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	s.scriptDir.Close()
	s.scriptQueue.Close()
	if st := s.state.Load(); st != nil {
		var wg sync.WaitGroup
		for name, e := range st.entries {
			if e.live != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if e.live.close(ctx) {
						s.logger.Warn("closed a backend with requests still running", "service", name)
					}
				}()
			}
		}
		wg.Wait()
	}
	if s.releaseWorkers != nil {
		// The last server of the process stops the external script
		// workers: no interpreter outlives it.
		s.releaseWorkers()
	}
	return s.closeStore()
}

// Drain marks the instance as stopping: /healthz answers 503 so that load
// balancers stop sending, and every response asks the client to close its
// connection, so keep-alive connections end cleanly after their current
// request instead of being cut while idle.
func (s *Server) Drain() { s.draining.Store(true) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

func (s *Server) closeStore() error {
	s.closeLimitStore()
	if s.ownsStore && s.store != nil {
		return s.store.Close()
	}
	return nil
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "shutting down"})
		return
	}
	if s.state.Load() == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "starting"})
		return
	}
	if err := s.store.DB.PingContext(r.Context()); err != nil && !errors.Is(err, context.Canceled) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "system database unreachable"})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": s.cfg.Version})
}

func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{})
}
