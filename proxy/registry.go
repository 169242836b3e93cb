package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/portcullis-dev/portcullis/handlers/cors"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// entry is one service in a state: its record and its live backend, or
// the error its requests get. Entries are never changed after a state is
// published; a reload that keeps a backend makes a new entry sharing it.
type entry struct {
	svc         *store.Service
	fingerprint string
	live        *live
	err         error
}

// live is a backend shared by the states that use it. It counts the
// requests using it, so that it is closed once they have drained, or when
// the closer stops waiting.
type live struct {
	backend service.Backend

	mu      sync.Mutex
	running int
	closed  bool
	drained chan struct{} // set by close while requests run; closed when the last ends
}

// acquire counts a request on l; it returns false when l has been closed
// (the caller then looks the service up again in the newer state).
func (l *live) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.running++
	return true
}

func (l *live) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	if l.running == 0 && l.drained != nil {
		close(l.drained)
		l.drained = nil
	}
}

// close refuses new requests, waits until the running ones end or ctx
// ends, then closes the backend. It reports whether requests were still
// running when the backend was closed.
func (l *live) close(ctx context.Context) (abandoned bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.closed = true
	var wait chan struct{}
	if l.running > 0 {
		wait = make(chan struct{})
		l.drained = wait
	}
	l.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			abandoned = true
		}
	}
	_ = l.backend.Close()
	return abandoned
}

// replacedDrain is how long a backend replaced by a reload waits for its
// requests before it is closed under them.
const replacedDrain = 10 * time.Minute

// state is the immutable configuration in force: the snapshot and the
// backends built from it.
type state struct {
	snap    *store.Snapshot
	entries map[string]*entry
	cors    *cors.Set
	// limits is the rate-limit engine of snap's limits, over the server's
	// limiter.Store (nil only before the first load).
	limits *limiter.Engine
	// policy is the role-based access engine of snap's roles (nil only
	// before the first load).
	policy *policy.Authorizer
	// scripts is the event-script engine of snap's active scripts (nil
	// when there are none).
	scripts *script.Engine
	// logs are the connectors of the active log services, which the GELF
	// tap ships every request to.
	logs []*logship.Connector
}

// logConnector is implemented by the backends of log services.
type logConnector interface {
	LogConnector() *logship.Connector
}

// logConnectors lists the connectors of st's live log services, in name
// order.
func (st *state) logConnectors() []*logship.Connector {
	var names []string
	for name, e := range st.entries {
		if e.live != nil {
			if _, ok := e.live.backend.(logConnector); ok {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	var out []*logship.Connector
	for _, n := range names {
		out = append(out, st.entries[n].live.backend.(logConnector).LogConnector())
	}
	return out
}

func fingerprint(svc *store.Service) string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%t\x00%s\x00%s\x00%s", svc.ID, svc.Name, svc.Type, svc.IsActive,
		svc.Label, svc.Description, svc.Config)
}

// Reload reads the configuration now and swaps in a new state, reusing the
// backends of services whose configuration did not change.
func (s *Server) Reload(ctx context.Context) error {
	return s.reload(ctx, true)
}

func (s *Server) reload(ctx context.Context, force bool) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.state.Load()
	if !force && old != nil {
		v, err := s.store.Version(ctx)
		if err != nil {
			return err
		}
		if v == old.snap.Version {
			return nil
		}
	}
	snap, err := s.store.Load(ctx)
	if err != nil {
		return err
	}
	next := &state{snap: snap, entries: make(map[string]*entry, len(snap.Services)), cors: corsRules(snap, s.logger)}
	var oldLimits *limiter.Engine
	if old != nil {
		oldLimits = old.limits
	}
	next.limits = s.limitEngine(snap, oldLimits)
	next.policy = s.policyEngine(snap)
	next.scripts = s.scriptEngine(snap)
	kept := map[*live]bool{}
	for _, svc := range snap.Services {
		fp := fingerprint(svc)
		if old != nil {
			if e, ok := old.entries[svc.Name]; ok && e.fingerprint == fp {
				next.entries[svc.Name] = &entry{svc: svc, fingerprint: fp, live: e.live, err: e.err}
				if e.live != nil {
					kept[e.live] = true
				}
				continue
			}
		}
		next.entries[svc.Name] = s.build(ctx, svc, fp)
	}
	next.logs = next.logConnectors()
	s.state.Store(next)
	s.resetStale(ctx, oldLimits, staleLimits(oldLimits, next.limits))
	if old != nil {
		for _, e := range old.entries {
			if e.live != nil && !kept[e.live] {
				go func(l *live) {
					ctx, cancel := context.WithTimeout(context.Background(), replacedDrain)
					defer cancel()
					l.close(ctx)
				}(e.live)
			}
		}
	}
	s.logger.Debug("configuration loaded", "version", snap.Version, "services", len(snap.Services))
	return nil
}

// build makes the entry for one service. Failures are kept as the error its
// requests get, so one bad service never stops the others.
func (s *Server) build(ctx context.Context, svc *store.Service, fp string) *entry {
	e := &entry{svc: svc, fingerprint: fp}
	if !svc.IsActive {
		e.err = apierr.Forbidden("Service %s is deactivated.", svc.Name)
		return e
	}
	typ, ok := s.types[svc.Type]
	if !ok {
		e.err = apierr.NotImplemented("Service type '%s' is not implemented by this build.", svc.Type)
		return e
	}
	b, err := typ.New(ctx, svc, s.deps())
	if err != nil {
		s.logger.Error("service configuration error", "service", svc.Name, "type", svc.Type, "error", err)
		e.err = apierr.InternalMsg("Service '%s' has a configuration error: %v", svc.Name, err).WithCause(err)
		return e
	}
	e.live = &live{backend: b}
	return e
}

func (s *Server) deps() service.Deps {
	return service.Deps{
		Store:         s.store,
		Registry:      s,
		DataDir:       s.cfg.DataDir,
		Logger:        s.logger,
		Version:       s.cfg.Version,
		UpstreamAllow: s.cfg.UpstreamAllow,
		PublicURL:     s.cfg.PublicURL,
		Access:        accessChecker{s},
		ScriptTimeout: s.cfg.ScriptTimeout,
	}
}

// watch polls the configuration version until ctx ends.
func (s *Server) watch(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.reload(ctx, false); err != nil && ctx.Err() == nil {
				s.logger.Warn("configuration reload failed", "error", err)
			}
		}
	}
}

// Types lists every service type the build knows, implemented or listed.
func (s *Server) Types() []service.Info {
	out := make([]service.Info, 0, len(s.infos))
	out = append(out, s.infos...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Type returns an implemented type by name.
func (s *Server) Type(name string) (service.Type, bool) {
	t, ok := s.types[name]
	return t, ok
}

// Snapshot returns the configuration in force, or nil while the first one
// is being loaded (backends built by that load may ask).
func (s *Server) Snapshot() *store.Snapshot {
	if st := s.state.Load(); st != nil {
		return st.snap
	}
	return nil
}

// Backend returns the live backend of a service.
func (s *Server) Backend(name string) (service.Backend, bool) {
	e, ok := s.state.Load().entries[name]
	if !ok || e.live == nil {
		return nil, false
	}
	return e.live.backend, true
}

// Handler returns the /api/v2 pipeline for inner calls.
func (s *Server) Handler() http.Handler { return s.api }
