package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// entry is one service's live backend, or the error its requests get.
type entry struct {
	svc         *store.Service
	fingerprint string
	backend     service.Backend
	err         error

	// mu is held for reading by every request using the backend and for
	// writing by the closer, so a backend is closed only after its
	// requests have drained.
	mu     sync.RWMutex
	closed bool
}

// acquire locks e for a request; it returns false when e has been closed
// (the caller then looks the service up again in the newer state).
func (e *entry) acquire() bool {
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return false
	}
	return true
}

func (e *entry) release() { e.mu.RUnlock() }

func (e *entry) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	if e.backend != nil {
		_ = e.backend.Close()
	}
}

// state is the immutable configuration in force: the snapshot and the
// backends built from it.
type state struct {
	snap    *store.Snapshot
	entries map[string]*entry
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
	next := &state{snap: snap, entries: make(map[string]*entry, len(snap.Services))}
	reused := map[*entry]bool{}
	for _, svc := range snap.Services {
		fp := fingerprint(svc)
		if old != nil {
			if e, ok := old.entries[svc.Name]; ok && e.fingerprint == fp {
				e.svc = svc
				next.entries[svc.Name] = e
				reused[e] = true
				continue
			}
		}
		next.entries[svc.Name] = s.build(ctx, svc, fp)
	}
	s.state.Store(next)
	if old != nil {
		for _, e := range old.entries {
			if !reused[e] {
				go e.close()
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
	e.backend = b
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

// Snapshot returns the configuration in force.
func (s *Server) Snapshot() *store.Snapshot { return s.state.Load().snap }

// Backend returns the live backend of a service.
func (s *Server) Backend(name string) (service.Backend, bool) {
	e, ok := s.state.Load().entries[name]
	if !ok || e.backend == nil {
		return nil, false
	}
	return e.backend, true
}

// Handler returns the /api/v2 pipeline for inner calls.
func (s *Server) Handler() http.Handler { return s.api }
