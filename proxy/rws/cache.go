package rws

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// keyHeaders are the request headers that negotiate a response's
// representation; they are part of every cache key, and a response whose
// Vary names only these (or headers the configuration sets) may be cached.
var keyHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "Origin"}

// cache holds 200 answers to GET requests, least recently used first out,
// bounded in entries and bytes.
type cache struct {
	ttl        time.Duration
	maxEntries int
	maxBytes   int64
	maxEntry   int64
	now        func() time.Time

	mu    sync.Mutex
	ll    *list.List // of *cached, most recent at the front
	items map[string]*list.Element
	bytes int64
}

// cached is one stored response.
type cached struct {
	key     string
	header  http.Header
	body    []byte
	stored  time.Time
	expires time.Time
	size    int64
}

func newCache(cfg Config) *cache {
	return &cache{
		ttl: cfg.CacheTTL, maxEntries: cfg.CacheMaxEntries, maxBytes: cfg.CacheMaxBytes,
		maxEntry: cfg.CacheMaxEntryBytes, now: cfg.Now,
		ll: list.New(), items: map[string]*list.Element{},
	}
}

// get returns the live entry for key.
func (c *cache) get(key string) (*cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cached)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return e, true
}

// put stores a response, evicting the least recently used entries to stay
// within bounds. A body over the entry cap is not stored.
func (c *cache) put(key string, header http.Header, body []byte) {
	if int64(len(body)) > c.maxEntry {
		return
	}
	size := int64(len(key) + len(body))
	for k, vs := range header {
		size += int64(len(k))
		for _, v := range vs {
			size += int64(len(v))
		}
	}
	if size > c.maxBytes {
		return
	}
	now := c.now()
	e := &cached{key: key, header: header, body: body, stored: now, expires: now.Add(c.ttl), size: size}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	c.items[key] = c.ll.PushFront(e)
	c.bytes += size
	for c.ll.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.ll.Back())
	}
}

func (c *cache) remove(el *list.Element) {
	e := c.ll.Remove(el).(*cached)
	delete(c.items, e.key)
	c.bytes -= e.size
}

// flush drops every entry.
func (c *cache) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	c.items = map[string]*list.Element{}
	c.bytes = 0
}

// stats returns the number of entries and bytes held.
func (c *cache) stats() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.bytes
}

// cacheKey hashes what makes two GET requests interchangeable: the
// service, the forwarded path and query (as the key sees it, see
// Parameter), the caller's role, every header value the configuration
// injects or passes from the client, and the negotiation headers.
func cacheKey(service, path string, keyQuery []string, role string, injected http.Header, r *http.Request) string {
	h := sha256.New()
	field := func(s string) {
		_, _ = io.WriteString(h, strconv.Itoa(len(s)))
		_, _ = io.WriteString(h, ":")
		_, _ = io.WriteString(h, s)
	}
	field("GET")
	field(service)
	field(path)
	field(strings.Join(keyQuery, "&"))
	field(role)
	for _, k := range sortedKeys(injected) {
		field(k)
		for _, v := range injected[k] {
			field(v)
		}
	}
	for _, k := range keyHeaders {
		field(strings.Join(r.Header.Values(k), ","))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// storable reports whether an upstream response may be cached for the
// keyed headers plus extra (the configured header names).
func storable(resp *http.Response, extra http.Header) bool {
	if resp.StatusCode != http.StatusOK || len(resp.Header.Values("Set-Cookie")) > 0 {
		return false
	}
	for _, cc := range resp.Header.Values("Cache-Control") {
		for _, d := range strings.Split(cc, ",") {
			d = strings.ToLower(strings.TrimSpace(d))
			if d == "no-store" || d == "private" || d == "no-cache" || strings.HasPrefix(d, "private=") || strings.HasPrefix(d, "no-cache=") {
				return false
			}
		}
	}
	for _, v := range resp.Header.Values("Vary") {
		for _, name := range strings.Split(v, ",") {
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if name == "*" {
				return false
			}
			known := false
			for _, k := range keyHeaders {
				if k == name {
					known = true
				}
			}
			if _, ok := extra[name]; !ok && !known {
				return false
			}
		}
	}
	return true
}

// capture tees a response body into the cache as the client reads it, so
// caching never delays or buffers the response. The body is stored only
// when it was read to the end, complete and under the entry cap.
type capture struct {
	io.ReadCloser
	buf    bytes.Buffer
	max    int64
	want   int64 // Content-Length, or -1
	over   bool
	stored bool
	store  func(body []byte)
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if n > 0 && !c.over {
		if int64(c.buf.Len()+n) > c.max {
			c.over = true
			c.buf = bytes.Buffer{}
		} else {
			c.buf.Write(p[:n])
		}
	}
	if err == io.EOF && !c.over && !c.stored {
		c.stored = true
		if c.want < 0 || int64(c.buf.Len()) == c.want {
			c.store(bytes.Clone(c.buf.Bytes()))
		}
	}
	return n, err
}

// serveCached writes a stored response.
func serveCached(w http.ResponseWriter, e *cached, now time.Time, pl *plan) {
	h := w.Header()
	for k, vs := range e.header {
		if pl.preset(k) || pl.dropCORS && strings.HasPrefix(k, "Access-Control-") {
			continue
		}
		h[k] = append([]string(nil), vs...)
	}
	age := int64(now.Sub(e.stored) / time.Second)
	if age < 0 {
		age = 0
	}
	h.Set("Age", strconv.FormatInt(age, 10))
	h.Set("X-Cache", "HIT")
	h.Set("Content-Length", strconv.Itoa(len(e.body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(e.body)
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
