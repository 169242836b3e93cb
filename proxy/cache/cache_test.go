package cache_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/proxy/cache"
	"github.com/portcullis-dev/portcullis/proxy/proxytest/relay"
)

// prefix keeps this run's keys apart from other tests sharing the servers.
func prefix(t *testing.T) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "pctest-" + hex.EncodeToString(b) + ":"
}

// redisStore is a store over PORTCULLIS_TEST_REDIS (through addr when
// given, a proxy in front of it).
func redisStore(t *testing.T, addr string) cache.Store {
	t.Helper()
	url := os.Getenv("PORTCULLIS_TEST_REDIS")
	if url == "" {
		t.Skip("PORTCULLIS_TEST_REDIS is not set (redis://127.0.0.1:6379/0)")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("PORTCULLIS_TEST_REDIS: %v", err)
	}
	if addr != "" {
		opts.Addr = addr
	}
	opts.MaxRetries = 1
	opts.DialTimeout = time.Second
	return cache.NewRedis(opts, prefix(t))
}

// memcachedAddr is PORTCULLIS_TEST_MEMCACHED's host:port.
func memcachedAddr(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("PORTCULLIS_TEST_MEMCACHED")
	if addr == "" {
		t.Skip("PORTCULLIS_TEST_MEMCACHED is not set (127.0.0.1:11211)")
	}
	return strings.TrimPrefix(addr, "memcached://")
}

func memcachedStore(t *testing.T, addr string) cache.Store {
	t.Helper()
	if addr == "" {
		addr = memcachedAddr(t)
	}
	return cache.NewMemcached([]string{addr}, cache.MemcachedOptions{Prefix: prefix(t), Timeout: 1})
}

var kinds = []struct {
	name  string
	store func(t *testing.T, addr string) cache.Store
	real  func(t *testing.T) string
}{
	{"redis", redisStore, func(t *testing.T) string {
		redisStore(t, "") // skips when unset
		o, _ := redis.ParseURL(os.Getenv("PORTCULLIS_TEST_REDIS"))
		return o.Addr
	}},
	{"memcached", memcachedStore, memcachedAddr},
}

type reply struct {
	status int
	ctype  string
	body   string
}

func serve(t *testing.T, s cache.Store, ttl time.Duration) *httptest.Server {
	h := &cache.Handler{Name: "cache", Store: s, TTL: ttl}
	srv := httptest.NewServer(http.StripPrefix("/c", h))
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv
}

func do(t *testing.T, srv *httptest.Server, method, path, ctype, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+"/c"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), strings.TrimSpace(string(data))}
}

const js = "application/json"

// TestCacheAPI runs DreamFactory's cache routes against each real server.
func TestCacheAPI(t *testing.T) {
	steps := []struct {
		name, method, path, ctype, body string
		status                          int
		want                            string // the body, or a part of an error message
		wantType                        string
	}{
		{"missing key", "GET", "/greeting", "", "", 404, "No value found for key 'greeting'.", ""},
		{"default for a missing key", "GET", "/greeting?default=hi", "", "", 200, "hi", "text/plain; charset=utf-8"},
		{"no key", "GET", "/", "", "", 400, "No key/resource provided", ""},
		{"add text", "POST", "/greeting", "text/plain", "hello world", 201, `{"greeting":"hello world"}`, js},
		{"read text", "GET", "/greeting", "", "", 200, "hello world", "text/plain; charset=utf-8"},
		{"add again", "POST", "/greeting", "text/plain", "again", 409, "Key 'greeting' already exists in cache. Use PUT to update existing key.", ""},
		{"add JSON", "POST", "/user/1", js, `{"name": "Ann", "tags": ["a", "b"], "n": 1.5}`, 201, `{"user/1":{"name":"Ann","tags":["a","b"],"n":1.5}}`, js},
		{"read JSON as JSON", "GET", "/user/1", "", "", 200, `{"name":"Ann","tags":["a","b"],"n":1.5}`, js},
		{"JSON string keeps its quotes", "PUT", "/s", js, `"abc"`, 200, `{"s":"abc"}`, js},
		{"read JSON string", "GET", "/s", "", "", 200, `"abc"`, js},
		{"number", "PUT", "/n", js, `42`, 200, `{"n":42}`, js},
		{"replace with PUT", "PUT", "/greeting", "text/plain", "bye", 200, `{"greeting":"bye"}`, js},
		{"PATCH replaces the whole value", "PATCH", "/user/1", js, `{"age":3}`, 200, `{"user/1":{"age":3}}`, js},
		{"read after PATCH", "GET", "/user/1", "", "", 200, `{"age":3}`, js},
		{"empty body", "PUT", "/e", js, "", 400, "No value/payload provided to store in cache.", ""},
		{"bad JSON", "PUT", "/e", js, `{"a":`, 400, "", ""},
		{"add several", "POST", "/", js, `{"k1": 1, "k2": {"x": true}, "k3": "three"}`, 201, `{"success":true}`, js},
		{"read several", "GET", "/?keys=k1,k2,k3,nope", "", "", 200, `{"k1":1,"k2":{"x":true},"k3":"three"}`, js},
		{"add several when one exists", "POST", "/", js, `{"k2": 2, "k4": 4}`, 409, "Nothing was stored in cache. One or more key(s) already exists (k2).", ""},
		{"nothing was stored", "GET", "/k4", "", "", 404, "No value found for key 'k4'.", ""},
		{"set several", "PUT", "/", js, `{"k2": 2, "k4": 4}`, 200, `{"success":true}`, js},
		{"set from a form", "PUT", "/", "application/x-www-form-urlencoded", `f1=a+b&f2=2`, 200, `{"success":true}`, js},
		{"form values are strings", "GET", "/?keys=f1,f2,k4", "", "", 200, `{"f1":"a b","f2":"2","k4":4}`, js},
		{"keyless write needs an object", "PUT", "/", js, `[1,2]`, 400, "Invalid payload provided. Please provide a key/value pair.", ""},
		{"keyless text", "PUT", "/", "text/plain", `abc`, 400, "Invalid payload provided", ""},
		{"pull reads and deletes", "GET", "/k4?pull=true", "", "", 200, `4`, js},
		{"pulled", "GET", "/k4", "", "", 404, "", ""},
		{"delete", "DELETE", "/greeting", "", "", 200, `{"success":true}`, js},
		{"delete again", "DELETE", "/greeting", "", "", 200, `{"success":false}`, js},
		{"delete several", "DELETE", "/?keys=k1,k2,nope", "", "", 200, `{"k1":true,"k2":true,"nope":false}`, js},
		{"delete without key", "DELETE", "/", "", "", 400, "No key/resource provided", ""},
		{"bad ttl", "PUT", "/t?ttl=-3", "text/plain", "x", 400, "Invalid ttl '-3'", ""},
		{"unsupported verb", "OPTIONS", "/x", "", "", 405, "", ""},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := serve(t, k.store(t, ""), time.Minute)
			for _, s := range steps {
				r := do(t, srv, s.method, s.path, s.ctype, s.body)
				if r.status != s.status {
					t.Fatalf("%s: %s %s = %d %s, want %d", s.name, s.method, s.path, r.status, r.body, s.status)
				}
				if s.status >= 400 {
					var env struct {
						Error struct {
							Code    int    `json:"code"`
							Message string `json:"message"`
						} `json:"error"`
					}
					if err := json.Unmarshal([]byte(r.body), &env); err != nil || env.Error.Code != s.status {
						t.Fatalf("%s: not the error envelope: %s", s.name, r.body)
					}
					if !strings.Contains(env.Error.Message, s.want) {
						t.Errorf("%s: message %q lacks %q", s.name, env.Error.Message, s.want)
					}
					continue
				}
				if r.body != s.want {
					t.Errorf("%s: body = %s, want %s", s.name, r.body, s.want)
				}
				if s.wantType != "" && r.ctype != s.wantType {
					t.Errorf("%s: Content-Type = %q, want %q", s.name, r.ctype, s.wantType)
				}
			}
		})
	}
}

// TestCacheTTL checks that values expire after ?ttl= seconds and that
// forever=true keeps them.
func TestCacheTTL(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := serve(t, k.store(t, ""), time.Minute)
			if r := do(t, srv, "PUT", "/short?ttl=1", "text/plain", "x"); r.status != 200 {
				t.Fatalf("put = %d %s", r.status, r.body)
			}
			if r := do(t, srv, "POST", "/?forever=true", js, `{"long":1}`); r.status != 201 {
				t.Fatalf("post = %d %s", r.status, r.body)
			}
			if r := do(t, srv, "GET", "/short", "", ""); r.status != 200 {
				t.Fatalf("before expiry = %d", r.status)
			}
			deadline := time.Now().Add(5 * time.Second)
			for do(t, srv, "GET", "/short", "", "").status != 404 {
				if time.Now().After(deadline) {
					t.Fatal("the value did not expire")
				}
				time.Sleep(200 * time.Millisecond)
			}
			if r := do(t, srv, "GET", "/long", "", ""); r.status != 200 || r.body != "1" {
				t.Errorf("forever value = %d %s", r.status, r.body)
			}
			do(t, srv, "DELETE", "/long", "", "")
		})
	}
}

// TestCacheServerDown puts a TCP relay between the store and the real
// server: while the relay is closed every call is a 503 in the envelope,
// and once it listens again the same store serves without a restart.
func TestCacheServerDown(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			target := k.real(t)
			rl := relay.New(t, target)
			srv := serve(t, k.store(t, rl.Addr()), time.Minute)
			if r := do(t, srv, "PUT", "/up", "text/plain", "1"); r.status != 200 {
				t.Fatalf("through the relay = %d %s", r.status, r.body)
			}
			rl.Stop()
			for _, path := range []string{"/up", "/?keys=a,b"} {
				r := do(t, srv, "GET", path, "", "")
				if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "cannot reach its server") {
					t.Fatalf("server down: GET %s = %d %s", path, r.status, r.body)
				}
			}
			if r := do(t, srv, "PUT", "/up", "text/plain", "2"); r.status != http.StatusServiceUnavailable {
				t.Fatalf("server down: PUT = %d %s", r.status, r.body)
			}
			rl.Start()
			deadline := time.Now().Add(5 * time.Second)
			for {
				r := do(t, srv, "GET", "/up", "", "")
				if r.status == 200 && r.body == "1" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no recovery: %d %s", r.status, r.body)
				}
				time.Sleep(100 * time.Millisecond)
			}
			do(t, srv, "DELETE", "/up", "", "")
		})
	}
}

// TestMemcachedKeys checks memcached's key rules.
func TestMemcachedKeys(t *testing.T) {
	srv := serve(t, memcachedStore(t, ""), time.Minute)
	for _, path := range []string{"/a%20b", "/" + strings.Repeat("k", 251), "/?keys=ok,a%20b"} {
		if r := do(t, srv, "GET", path, "", ""); r.status != 400 || !strings.Contains(r.body, "Invalid cache key") {
			t.Errorf("GET %.40s = %d %s", path, r.status, r.body)
		}
	}
}
