package cache

import (
	"context"
	"errors"
	"time"
)

// Store is a key-value server a cache service keeps its values in. Values
// are opaque bytes; the [Handler] decides how JSON and text are written.
// Every method reports a server that cannot be reached (or refuses the
// connection) with an error wrapping [ErrUnavailable].
type Store interface {
	// Get returns the values of the keys that exist, by key.
	Get(ctx context.Context, keys ...string) (map[string][]byte, error)
	// Add stores every item only when none of their keys exists; otherwise
	// it stores nothing and returns the keys that exist.
	Add(ctx context.Context, items []Item) (existing []string, err error)
	// Set stores every item, replacing values that exist.
	Set(ctx context.Context, items []Item) error
	// Delete removes the keys and says which of them existed.
	Delete(ctx context.Context, keys ...string) (deleted map[string]bool, err error)
	// CheckKey returns an error describing why key cannot be stored, or nil.
	CheckKey(key string) error
	// Close releases the store's connections.
	Close() error
}

// Item is one value to store.
type Item struct {
	Key   string
	Value []byte
	// TTL is how long the value lives; 0 keeps it until it is deleted or
	// evicted.
	TTL time.Duration
}

// ErrUnavailable marks a server that cannot be reached or used now; the
// handler answers 503 and the store reconnects on a later request.
var ErrUnavailable = errors.New("cache server unavailable")

// ErrWrongType marks a key that holds something other than a plain value
// (a Redis list, hash, set…): 409.
var ErrWrongType = errors.New("the key holds a value of another kind")

// ErrTooLarge marks a value the server refuses for its size: 413.
var ErrTooLarge = errors.New("the value is too large for the cache server")

// unavailable wraps err with ErrUnavailable.
func unavailable(err error) error {
	return errors.Join(ErrUnavailable, err)
}
