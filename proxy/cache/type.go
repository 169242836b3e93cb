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
	return service.GenericInfo(name, service.Info{Name: name, Label: label, Group: service.GroupCache})
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

// ConfigSchema describes a cache_redis configuration.
func (RedisType) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{
		{Name: "host", Label: "Host", Type: "string", Required: true, Description: "The Redis server's host name or address."},
		{Name: "port", Label: "Port", Type: "integer", Default: 6379},
		{Name: "password", Label: "Password", Type: "password", Description: "The server's password (AUTH), if it has one."},
		{Name: "database_index", Label: "Database index", Type: "integer", Default: 0, Description: "The Redis database (SELECT n)."},
		{Name: "default_ttl", Label: "Default TTL", Type: "integer", Default: int(DefaultTTL.Seconds()), Description: "Seconds a value lives when the request gives no ttl."},
		{Name: "options", Label: "Options", Type: "object", Description: "Client settings: prefix (put before every key), username (Redis 6 ACL), tls (boolean), dial_timeout, read_timeout, write_timeout (seconds), pool_size."},
	}
}

// ConfigSchema describes a cache_memcached configuration.
func (MemcachedType) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{
		{Name: "host", Label: "Host", Type: "string", Required: true, Description: "The memcached server's host name or address, or a comma-separated list of host[:port] that keys are spread over."},
		{Name: "port", Label: "Port", Type: "integer", Default: 11211},
		{Name: "default_ttl", Label: "Default TTL", Type: "integer", Default: int(DefaultTTL.Seconds()), Description: "Seconds a value lives when the request gives no ttl."},
		{Name: "options", Label: "Options", Type: "object", Description: "Client settings: prefix (put before every key), timeout (seconds per operation, default 0.5), max_idle_conns."},
	}
}
