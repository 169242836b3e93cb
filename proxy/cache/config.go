package cache

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// DefaultTTL is how long a value lives when neither the request (?ttl=)
// nor the service (default_ttl) says: 300 seconds, as in DreamFactory.
const DefaultTTL = 300 * time.Second

// RedisConfig is the configuration of a cache_redis service, with
// DreamFactory's keys.
type RedisConfig struct {
	Host     string       `json:"host"`
	Port     service.Port `json:"port,omitempty"`
	Password string       `json:"password,omitempty"`
	// DatabaseIndex selects the Redis database (SELECT n).
	DatabaseIndex int `json:"database_index,omitempty"`
	// DefaultTTL is in seconds; 0 means DefaultTTL.
	DefaultTTL int          `json:"default_ttl,omitempty"`
	Options    RedisOptions `json:"options,omitzero"`
}

// RedisOptions are the client settings DreamFactory passes through as
// "options"; Portcullis knows these.
type RedisOptions struct {
	// Username signs in with Redis 6 ACLs (with the password).
	Username string `json:"username,omitempty"`
	// Prefix is put before every key, to share a database between services.
	Prefix string `json:"prefix,omitempty"`
	// TLS connects with TLS, verifying the server against the system's
	// roots.
	TLS bool `json:"tls,omitempty"`
	// DialTimeout, ReadTimeout and WriteTimeout are in seconds (defaults
	// 5, 3, 3).
	DialTimeout  float64 `json:"dial_timeout,omitempty"`
	ReadTimeout  float64 `json:"read_timeout,omitempty"`
	WriteTimeout float64 `json:"write_timeout,omitempty"`
	// PoolSize caps the connections (default 10 per CPU).
	PoolSize int `json:"pool_size,omitempty"`
}

var (
	redisKeys        = []string{"host", "port", "password", "database_index", "default_ttl", "options"}
	redisOptionKeys  = []string{"username", "prefix", "tls", "dial_timeout", "read_timeout", "write_timeout", "pool_size"}
	memcachedKeys    = []string{"host", "port", "default_ttl", "options"}
	memcachedOptKeys = []string{"prefix", "timeout", "max_idle_conns"}
)

// ParseRedisConfig reads and checks a cache_redis configuration, reporting
// every problem at once.
func ParseRedisConfig(raw json.RawMessage) (RedisConfig, error) {
	var c RedisConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, redisKeys); err != nil {
		errs = append(errs, err)
	}
	if err := service.DecodeConfig(options(raw), &c.Options, redisOptionKeys); err != nil {
		errs = append(errs, prefixErr("options", err))
	}
	if err := service.CheckHost(c.Host); err != nil {
		errs = append(errs, err)
	}
	if err := c.Port.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.DatabaseIndex < 0 {
		errs = append(errs, errors.New("database_index: must not be negative"))
	}
	if c.DefaultTTL < 0 {
		errs = append(errs, errors.New("default_ttl: must not be negative (seconds)"))
	}
	o := c.Options
	for _, t := range []struct {
		key string
		v   float64
	}{{"dial_timeout", o.DialTimeout}, {"read_timeout", o.ReadTimeout}, {"write_timeout", o.WriteTimeout}} {
		if t.v < 0 {
			errs = append(errs, fmt.Errorf("options.%s: must not be negative (seconds)", t.key))
		}
	}
	if o.PoolSize < 0 {
		errs = append(errs, errors.New("options.pool_size: must not be negative"))
	}
	return c, errors.Join(errs...)
}

// ClientOptions are the go-redis options of the configuration.
func (c RedisConfig) ClientOptions() *redis.Options {
	seconds := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	o := &redis.Options{
		Addr:         net.JoinHostPort(c.Host, strconv.Itoa(c.Port.Or(6379))),
		Username:     c.Options.Username,
		Password:     c.Password,
		DB:           c.DatabaseIndex,
		DialTimeout:  seconds(c.Options.DialTimeout),
		ReadTimeout:  seconds(c.Options.ReadTimeout),
		WriteTimeout: seconds(c.Options.WriteTimeout),
		PoolSize:     c.Options.PoolSize,
		// A server that is down must not hold requests for long: one try.
		MaxRetries: 1,
	}
	if c.Options.TLS {
		o.TLSConfig = &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	}
	return o
}

// TTL is the service's default lifetime of a value.
func (c RedisConfig) TTL() time.Duration { return ttlOr(c.DefaultTTL) }

// MemcachedConfig is the configuration of a cache_memcached service.
type MemcachedConfig struct {
	// Host is a server, or a comma-separated list of servers (host or
	// host:port) that keys are spread over.
	Host       string           `json:"host"`
	Port       service.Port     `json:"port,omitempty"`
	DefaultTTL int              `json:"default_ttl,omitempty"`
	Options    MemcachedOptions `json:"options,omitzero"`
}

// MemcachedOptions are the client settings Portcullis knows.
type MemcachedOptions struct {
	// Prefix is put before every key.
	Prefix string `json:"prefix,omitempty"`
	// Timeout bounds each network operation, in seconds (default 0.5).
	Timeout float64 `json:"timeout,omitempty"`
	// MaxIdleConns is how many idle connections are kept per server
	// (default 2).
	MaxIdleConns int `json:"max_idle_conns,omitempty"`
}

// ParseMemcachedConfig reads and checks a cache_memcached configuration,
// reporting every problem at once.
func ParseMemcachedConfig(raw json.RawMessage) (MemcachedConfig, error) {
	var c MemcachedConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, memcachedKeys); err != nil {
		errs = append(errs, err)
	}
	if err := service.DecodeConfig(options(raw), &c.Options, memcachedOptKeys); err != nil {
		errs = append(errs, prefixErr("options", err))
	}
	for _, h := range strings.Split(c.Host, ",") {
		if err := service.CheckHost(h); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Port.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.DefaultTTL < 0 {
		errs = append(errs, errors.New("default_ttl: must not be negative (seconds)"))
	}
	if c.Options.Timeout < 0 {
		errs = append(errs, errors.New("options.timeout: must not be negative (seconds)"))
	}
	if c.Options.MaxIdleConns < 0 {
		errs = append(errs, errors.New("options.max_idle_conns: must not be negative"))
	}
	if len(c.Options.Prefix) > 200 {
		errs = append(errs, errors.New("options.prefix: at most 200 bytes"))
	}
	for _, b := range []byte(c.Options.Prefix) {
		if b <= ' ' || b == 0x7f {
			errs = append(errs, errors.New("options.prefix: no spaces or control characters"))
			break
		}
	}
	return c, errors.Join(errs...)
}

// Servers lists the configured servers as host:port.
func (c MemcachedConfig) Servers() []string {
	var out []string
	for _, h := range strings.Split(c.Host, ",") {
		h = strings.TrimSpace(h)
		if _, _, err := net.SplitHostPort(h); err == nil {
			out = append(out, h)
			continue
		}
		out = append(out, net.JoinHostPort(h, strconv.Itoa(c.Port.Or(11211))))
	}
	return out
}

// TTL is the service's default lifetime of a value.
func (c MemcachedConfig) TTL() time.Duration { return ttlOr(c.DefaultTTL) }

func ttlOr(seconds int) time.Duration {
	if seconds > 0 {
		return time.Duration(seconds) * time.Second
	}
	return DefaultTTL
}

// options returns the "options" member of a configuration (nil when there
// is none or the configuration is not an object; DecodeConfig reports
// that).
func options(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(raw), &m) != nil {
		return nil
	}
	return m["options"]
}

func prefixErr(prefix string, err error) error {
	return fmt.Errorf("%s: %w", prefix, err)
}
