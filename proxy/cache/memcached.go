package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// Memcached is a [Store] over memcached servers (gomemcache). Connections
// are pooled and redialled on the next request after a failure.
type Memcached struct {
	client *memcache.Client
	prefix string
}

// NewMemcached returns a store over the servers ("host:port") with the
// options' key prefix, timeout and idle connections. It does not connect
// until the first request.
func NewMemcached(servers []string, o MemcachedOptions) *Memcached {
	c := memcache.New(servers...)
	c.Timeout = time.Duration(o.Timeout * float64(time.Second))
	c.MaxIdleConns = o.MaxIdleConns
	return &Memcached{client: c, prefix: o.Prefix}
}

// maxRelative is memcached's largest relative expiry; longer ones must be
// given as a Unix time.
const maxRelative = 30 * 24 * time.Hour

// expiration converts a TTL to memcached's expiration field.
func expiration(ttl time.Duration) int32 {
	switch {
	case ttl <= 0:
		return 0
	case ttl > maxRelative:
		return int32(time.Now().Add(ttl).Unix())
	case ttl < time.Second:
		return 1
	}
	return int32(ttl / time.Second)
}

// Get reads the keys that exist.
func (s *Memcached) Get(ctx context.Context, keys ...string) (map[string][]byte, error) {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = s.prefix + k
	}
	items, err := s.client.GetMulti(full)
	if err != nil {
		return nil, memcacheErr(err)
	}
	out := make(map[string][]byte, len(items))
	for k, it := range items {
		out[strings.TrimPrefix(k, s.prefix)] = it.Value
	}
	return out, nil
}

// Add stores the items only when none of their keys exists. memcached has
// no multi-key transaction: a key added by someone else between the check
// and the writes undoes the writes already made.
func (s *Memcached) Add(ctx context.Context, items []Item) ([]string, error) {
	if len(items) > 1 {
		keys := make([]string, len(items))
		for i, it := range items {
			keys[i] = it.Key
		}
		found, err := s.Get(ctx, keys...)
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			var existing []string
			for _, k := range keys {
				if _, ok := found[k]; ok {
					existing = append(existing, k)
				}
			}
			return existing, nil
		}
	}
	for i, it := range items {
		err := s.client.Add(&memcache.Item{Key: s.prefix + it.Key, Value: it.Value, Expiration: expiration(it.TTL)})
		if err == nil {
			continue
		}
		for _, done := range items[:i] {
			_ = s.client.Delete(s.prefix + done.Key)
		}
		if errors.Is(err, memcache.ErrNotStored) {
			return []string{it.Key}, nil
		}
		return nil, memcacheErr(err)
	}
	return nil, nil
}

// Set stores the items one by one.
func (s *Memcached) Set(_ context.Context, items []Item) error {
	for _, it := range items {
		if err := s.client.Set(&memcache.Item{Key: s.prefix + it.Key, Value: it.Value, Expiration: expiration(it.TTL)}); err != nil {
			return memcacheErr(err)
		}
	}
	return nil
}

// Delete removes the keys and says which existed.
func (s *Memcached) Delete(_ context.Context, keys ...string) (map[string]bool, error) {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		err := s.client.Delete(s.prefix + k)
		switch {
		case err == nil:
			out[k] = true
		case errors.Is(err, memcache.ErrCacheMiss):
			out[k] = false
		default:
			return nil, memcacheErr(err)
		}
	}
	return out, nil
}

// CheckKey applies memcached's rules: at most 250 bytes (with the
// prefix), no spaces or control characters.
func (s *Memcached) CheckKey(key string) error {
	if key == "" {
		return errors.New("a key must not be empty")
	}
	if len(s.prefix)+len(key) > 250 {
		return fmt.Errorf("memcached keys are at most %d bytes", 250-len(s.prefix))
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] == 0x7f {
			return errors.New("memcached keys must not contain spaces or control characters")
		}
	}
	return nil
}

// Close closes the idle connections.
func (s *Memcached) Close() error { return s.client.Close() }

// memcacheErr classifies a gomemcache error.
func memcacheErr(err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "too large") {
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return unavailable(err)
}
