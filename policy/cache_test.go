package policy

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

func key(i int) cacheKey {
	return cacheKey{role: 1, service: "db", component: fmt.Sprintf("_table/t%d", i), verb: VerbGet, requestor: 1}
}

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU(3) // one shard: exact LRU
	for i := range 3 {
		c.add(key(i), outcome{allowed: true, class: Class(i)})
	}
	if _, ok := c.get(key(0)); !ok { // 0 becomes most recent; 1 is now oldest
		t.Fatal("key 0 missing")
	}
	c.add(key(3), outcome{})
	tests := []struct {
		name string
		k    cacheKey
		want bool
	}{
		{"recently used kept", key(0), true},
		{"oldest evicted", key(1), false},
		{"kept", key(2), true},
		{"newest kept", key(3), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := c.get(tt.k); ok != tt.want {
				t.Errorf("present = %v, want %v", ok, tt.want)
			}
		})
	}
	c.add(key(2), outcome{class: ClassService}) // update in place
	if v, _ := c.get(key(2)); v.class != ClassService {
		t.Errorf("updated value not stored: %+v", v)
	}
	if n := c.len(); n != 3 {
		t.Errorf("len = %d, want 3", n)
	}
}

func TestLRUShards(t *testing.T) {
	tests := []struct{ size, shards int }{
		{1, 1}, {64, 1}, {127, 1}, {128, 2}, {1000, 8}, {10000, 32}, {1 << 20, 32},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			c := newLRU(tt.size)
			if len(c.shards) != tt.shards {
				t.Errorf("shards = %d, want %d", len(c.shards), tt.shards)
			}
			total := 0
			for i := range c.shards {
				total += c.shards[i].cap
			}
			if total != tt.size {
				t.Errorf("capacities add up to %d, want %d", total, tt.size)
			}
		})
	}
}

// TestCacheBound drives far more distinct components than the bound
// through Authorize and checks that both the number of cached decisions
// and the heap stay bounded.
func TestCacheBound(t *testing.T) {
	const bound = 1000
	// The exact entry makes the role look at two segments, so every table
	// name below is a distinct key.
	a, err := New([]Role{{ID: 1, Active: true, Accesses: []Access{acc("db", "_table/*", VerbGet), acc("db", "_table/contact", VerbPost)}}},
		WithCacheSize(bound))
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 900)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const calls = 20_000 // ~18 MB of distinct components
	for i := range calls {
		comp := fmt.Sprintf("_table/%s%d", pad, i)
		if d := a.Authorize(1, "db", comp, "GET", caller.API); !d.Allowed {
			t.Fatalf("%s refused: %+v", comp, d)
		}
		if n := a.cache.len(); i%2_000 == 0 && n > bound {
			t.Fatalf("after %d calls the cache holds %d decisions, bound %d", i+1, n, bound)
		}
	}
	if n := a.cache.len(); n != bound {
		t.Errorf("cache holds %d decisions, want exactly the bound %d", n, bound)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// 1000 entries of ~920-byte keys plus nodes and map buckets are about
	// 1 MB; an unbounded cache would hold over 18 MB.
	if growth > 6<<20 {
		t.Errorf("heap grew by %d bytes after %d distinct calls; the cache is not bounded", growth, calls)
	}
	runtime.KeepAlive(a)
}

func TestCacheSkipsHugeComponents(t *testing.T) {
	// The exact entry makes the role look at two segments, so the long
	// second segment is part of the key.
	a, err := New([]Role{{ID: 1, Active: true, Accesses: []Access{acc("db", "*", VerbGet), acc("db", "_table/contact", VerbPost)}}})
	if err != nil {
		t.Fatal(err)
	}
	huge := "_table/" + strings.Repeat("a", 4096)
	if d := a.Authorize(1, "db", huge, "GET", caller.API); !d.Allowed {
		t.Fatalf("refused: %+v", d)
	}
	if n := a.cache.len(); n != 0 {
		t.Errorf("huge component cached (%d entries)", n)
	}
}

func TestCacheDoesNotRetainCallerMemory(t *testing.T) {
	a, err := New([]Role{{ID: 1, Active: true, Accesses: []Access{acc("db", "*", VerbGet)}}})
	if err != nil {
		t.Fatal(err)
	}
	path := string([]byte("db/_table/contact")) // a request path the caller owns
	a.Authorize(1, path[:2], path[3:], "GET", caller.API)
	found := false
	for i := range a.cache.shards {
		for k := range a.cache.shards[i].m {
			found = true
			if unsafe.StringData(k.component) == unsafe.StringData(path[3:]) ||
				unsafe.StringData(k.service) == unsafe.StringData(path[:2]) {
				t.Error("cache key shares the caller's string, pinning its buffer")
			}
		}
	}
	if !found {
		t.Fatal("decision not cached")
	}
}

func TestCacheComponent(t *testing.T) {
	tests := []struct {
		name    string
		entries []Access
		depth   int
		comp    string
		want    string
		deep    bool
	}{
		{"no entries: nothing looked at", nil, 0, "_table/contact/5", "", true},
		{"star only", []Access{acc("db", "*", VerbGet)}, 0, "_table/contact", "", true},
		{"root is never cut", []Access{acc("db", "*", VerbGet)}, 0, "", "", false},
		{"all-services root", []Access{acc("", "", VerbGet)}, 0, "x", "", true},
		{"table wildcard looks at one segment", []Access{acc("db", "_table/*", VerbGet)}, 1, "_table/contact/5", "_table", true},
		{"partial wildcard looks at two", []Access{acc("db", "_table/con*", VerbGet)}, 2, "_table/contact/5", "_table/contact", true},
		{"exact table looks at two", []Access{acc("db", "_table/contact", VerbGet)}, 2, "_table/contact/5", "_table/contact", true},
		{"exact table: same depth kept", []Access{acc("db", "_table/contact", VerbGet)}, 2, "_table/other", "_table/other", false},
		{"record wildcard looks at two", []Access{acc("db", "_table/contact/*", VerbGet)}, 2, "_table/contact/5", "_table/contact", true},
		{"exact record looks at three", []Access{acc("db", "_table/contact/5", VerbGet)}, 3, "_table/contact/5", "_table/contact/5", false},
		{"deepest entry counts", []Access{acc("db", "_table/*", VerbGet), acc("db", "_table/a/b/*", VerbGet)}, 3, "_table/a/b/c/d", "_table/a/b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New([]Role{{ID: 1, Active: true, Accesses: tt.entries}})
			if err != nil {
				t.Fatal(err)
			}
			r := a.roles[1]
			if r.depth != tt.depth {
				t.Errorf("depth = %d, want %d", r.depth, tt.depth)
			}
			got, deep := r.cacheComponent(tt.comp)
			if got != tt.want || deep != tt.deep {
				t.Errorf("cacheComponent(%q) = %q, %v; want %q, %v", tt.comp, got, deep, tt.want, tt.deep)
			}
		})
	}
}

// TestCachedDecisionsMatchUncached checks, on random roles and requests,
// that an Authorizer answering from its cache (where components deeper
// than the role's entries share one key) decides exactly as one that asks
// Casbin every time.
func TestCachedDecisionsMatchUncached(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	segs := []string{"_table", "_proc", "contact", "con", "order", "5", "6", "x"}
	randComp := func(max int) string {
		n := rng.IntN(max + 1)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = segs[rng.IntN(len(segs))]
		}
		return strings.Join(parts, "/")
	}
	services := []string{"db", "crm", ""}
	verbs := []string{"GET", "POST", "PATCH", "DELETE"}
	for round := range 120 {
		var entries []Access
		for range 1 + rng.IntN(8) {
			svc := services[rng.IntN(len(services))]
			comp := randComp(3)
			switch rng.IntN(3) {
			case 0:
				comp += "/*"
			case 1:
				if comp != "" {
					comp += "*"
				}
			}
			if svc == "" {
				comp = []string{"", "*"}[rng.IntN(2)]
			}
			a := acc(svc, comp, rng.IntN(32))
			a.RequestorMask = 1 + rng.IntN(3)
			if rng.IntN(2) == 0 {
				a.Fields = []string{fmt.Sprint("f", rng.IntN(5))}
			}
			entries = append(entries, a)
		}
		roles := []Role{{ID: 1, Active: true, Accesses: entries}}
		cached, err := New(roles, WithCacheSize(64))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		plain, err := New(roles, WithCacheSize(0))
		if err != nil {
			t.Fatal(err)
		}
		for range 150 {
			svc := []string{"db", "crm", "files"}[rng.IntN(3)]
			comp := randComp(5)
			verb := verbs[rng.IntN(len(verbs))]
			req := caller.Requestor(1 + rng.IntN(2))
			got := cached.Authorize(1, svc, comp, verb, req)
			want := plain.Authorize(1, svc, comp, verb, req)
			if diff := cmp.Diff(want, got, cmpopts.EquateErrors()); diff != "" {
				t.Fatalf("round %d, %s %s/%s (requestor %d), entries %+v:\n(-uncached +cached)\n%s",
					round, verb, svc, comp, req, entries, diff)
			}
		}
	}
}
