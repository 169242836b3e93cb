package rws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Type is the rws service type: a remote HTTP service behind the
// platform's security. Its zero value is ready to use.
type Type struct {
	// Now is the clock of the services' caches; nil means time.Now.
	Now func() time.Time
}

var _ service.Type = Type{}

// Info names the type as the spec lists it.
func (Type) Info() service.Info {
	for _, info := range service.Generic {
		if info.Name == "rws" {
			return info
		}
	}
	return service.Info{Name: "rws", Label: "HTTP Service", Group: service.GroupRemote}
}

// ValidateConfig checks a service's configuration; see ParseConfig and
// ParseDoc.
func (Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(config)
	_, derr := ParseDoc(config)
	return errors.Join(err, derr)
}

// New builds the backend of svc. Named lookups come from the registry's
// configuration in force at each request, so a changed lookup applies
// without rebuilding the service.
func (t Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	cfg.Now = t.Now
	doc, err := ParseDoc(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	p, err := NewService(svc, deps, cfg)
	if err != nil {
		return nil, err
	}
	return &documented{Proxy: p, doc: doc}, nil
}

// NewService builds the Proxy of the platform service svc from cfg: cfg's
// Name, UpstreamAllow, Version, Logger and Lookups are filled from svc and
// deps (the lookups of the caller's identity and the system's lookups, as
// an rws service has them). Other backends that forward to a configured
// URL (the mcp type's url form) build their proxy with it.
func NewService(svc *store.Service, deps service.Deps, cfg Config) (*Proxy, error) {
	cfg.Name = svc.Name
	cfg.UpstreamAllow = deps.UpstreamAllow
	cfg.Version = deps.Version
	if deps.Logger != nil {
		cfg.Logger = deps.Logger.With("service", svc.Name)
	}
	if reg := deps.Registry; reg != nil {
		cfg.Lookups = func(r *http.Request) map[string]string {
			return SnapshotLookups(reg.Snapshot(), caller.IdentityFrom(r.Context()))
		}
	}
	return New(cfg)
}
