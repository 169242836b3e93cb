package cache

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Types returns the cache service types: cache_redis and cache_memcached.
func Types() []service.Type { return []service.Type{RedisType{}, MemcachedType{}} }

// info finds a generic type's description by name.
func info(name, label string) service.Info {
	for _, i := range service.Generic {
		if i.Name == name {
			return i
		}
	}
	return service.Info{Name: name, Label: label, Group: service.GroupCache}
}

// RedisType is the cache_redis service type. Its zero value is ready to
// use.
type RedisType struct{}

var _ service.Type = RedisType{}

// Info names the type as the spec lists it.
func (RedisType) Info() service.Info { return info("cache_redis", "Redis Cache") }

// ValidateConfig checks a cache_redis configuration; see ParseRedisConfig.
func (RedisType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseRedisConfig(config)
	return err
}

// New builds the backend of svc; it connects on the first request.
func (RedisType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseRedisConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	return newBackend(svc, deps, NewRedis(cfg.ClientOptions(), cfg.Options.Prefix), cfg.TTL()), nil
}

// MemcachedType is the cache_memcached service type. Its zero value is
// ready to use.
type MemcachedType struct{}

var _ service.Type = MemcachedType{}

// Info names the type as the spec lists it.
func (MemcachedType) Info() service.Info { return info("cache_memcached", "Memcached Cache") }

// ValidateConfig checks a cache_memcached configuration; see
// ParseMemcachedConfig.
func (MemcachedType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseMemcachedConfig(config)
	return err
}

// New builds the backend of svc; it connects on the first request.
func (MemcachedType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseMemcachedConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	return newBackend(svc, deps, NewMemcached(cfg.Servers(), cfg.Options), cfg.TTL()), nil
}

func newBackend(svc *store.Service, deps service.Deps, s Store, ttl time.Duration) *backend {
	h := &Handler{Name: svc.Name, Store: s, TTL: ttl}
	if deps.Logger != nil {
		h.Logger = deps.Logger.With("service", svc.Name)
	}
	return &backend{Handler: h}
}

// backend is a Handler documented as a service.
type backend struct {
	*Handler
}

var (
	_ service.Backend    = (*backend)(nil)
	_ service.Documenter = (*backend)(nil)
)

// ServeHTTP answers a request below the service.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.Handler.ServeHTTP(w, r) }

// OpenAPI documents the cache API.
func (b *backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(), nil }
