package sqldb

import (
	"context"
	"encoding/json"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Type is a database service type: sqlite, pgsql or mysql.
type Type struct {
	kind dialects.Kind
	info service.Info
}

// Types returns the service types of this package: sqlite, pgsql and
// mysql (MariaDB too).
func Types() []service.Type {
	return []service.Type{NewType(dialects.SQLite), NewType(dialects.Postgres), NewType(dialects.MySQL)}
}

// NewType returns the service type for kind.
func NewType(kind dialects.Kind) *Type {
	t := &Type{kind: kind, info: service.Info{Name: string(kind), Group: service.GroupDatabase}}
	for _, g := range service.Generic {
		if g.Name == string(kind) {
			t.info = g
		}
	}
	return t
}

// Info names and describes the type.
func (t *Type) Info() service.Info { return t.info }

// ValidateConfig checks a service's config object and reports every
// problem at once.
func (t *Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(t.kind, config)
	return err
}

// New builds the backend for svc. It does not connect: the pool is opened
// by the first request that needs it.
func (t *Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseConfig(t.kind, svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	b, err := newBackend(t.kind, svc.Name, cfg, deps)
	if err != nil {
		return nil, err
	}
	b.sync.serviceID = svc.ID
	return b, nil
}
