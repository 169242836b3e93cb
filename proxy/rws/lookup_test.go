package rws

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestSubstitute(t *testing.T) {
	values := map[string]string{
		"user.email": "Ann.Lee+x@example.com", "name": "  ann lee ", "b64": "aGVsbG8=", "braces": "{user.email}",
		"enc": "a%20b+c", "empty": "",
	}
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"plain", "plain", true},
		{`{"json": true}`, `{"json": true}`, true},
		{"{user.email}", "Ann.Lee+x@example.com", true},
		{"<{strtolower(user.email)}>", "<ann.lee+x@example.com>", true},
		{"{strtoupper(user.email)}", "ANN.LEE+X@EXAMPLE.COM", true},
		{"{ucwords(trim(name))}", "Ann Lee", true},
		{"{ucfirst(trim(name))}", "Ann lee", true},
		{"{lcfirst(strtoupper(trim(name)))}", "aNN LEE", true},
		{"{urlencode(name)}", "++ann+lee+", true},
		{"{rawurlencode(user.email)}", "Ann.Lee%2Bx%40example.com", true},
		{"{urldecode(enc)}", "a b c", true},
		{"{rawurldecode(enc)}", "a b+c", true},
		{"{base64_decode(b64)}", "hello", true},
		{"{base64_encode(empty)}", "", true},
		{"{braces}", "{user.email}", true}, // one pass only
		{"{nosuch}", "", false},
		{"a {user.email} b {nosuch}", "", false},
		{"{shout(user.email)}", "", false},
		{"{base64_decode(user.email)}", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := substitute(tc.in, values)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("substitute(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestCheckLookups(t *testing.T) {
	for in, bad := range map[string]bool{
		"{user.email}": false, "{tenant}": false, "{urlencode(role.name)}": false, "{df.host_url}": false,
		"{user.emial}": true, "{session.id}": true, "{app.api_key}": true, "{nope(tenant)}": true,
		"{urlencode(tenant}": true,
	} {
		if err := checkLookups(in); (err != nil) != bad {
			t.Errorf("checkLookups(%q) = %v", in, err)
		}
	}
}

func TestSnapshotLookupsPrecedence(t *testing.T) {
	id := func(n int64) *int64 { return &n }
	snap := store.NewSnapshot(nil, nil, nil)
	snap.Lookups = []*store.Lookup{
		{Name: "region", Value: "global"},
		{Name: "only_global", Value: "g"},
		{Name: "region", Value: "user", UserID: id(7)},
		{Name: "region", Value: "role", RoleID: id(4)},
		{Name: "region", Value: "app", AppID: id(3)},
		{Name: "secret", Value: "s3", Private: true},
		{Name: "other_user", Value: "x", UserID: id(8)},
		{Name: "app_only", Value: "a", AppID: id(3)},
	}
	tests := []struct {
		name string
		id   *caller.Identity
		want map[string]string
	}{
		{"anonymous", nil, map[string]string{"region": "global", "only_global": "g", "secret": "s3"}},
		{"app", &caller.Identity{AppID: 3}, map[string]string{"region": "app", "only_global": "g", "secret": "s3", "app_only": "a"}},
		{"role", &caller.Identity{AppID: 3, RoleID: 4}, map[string]string{"region": "role", "only_global": "g", "secret": "s3", "app_only": "a"}},
		{"user", &caller.Identity{AppID: 3, RoleID: 4, UserID: 7}, map[string]string{"region": "user", "only_global": "g", "secret": "s3", "app_only": "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SnapshotLookups(snap, tc.id)); diff != "" {
				t.Fatalf("lookups (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamedLookupNeverStandsInForABuiltin(t *testing.T) {
	p, err := New(Config{BaseURL: "http://x.example", Lookups: func(*http.Request) map[string]string {
		return map[string]string{"user.email": "forged@example.com", "tenant": "t"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	v := p.lookupValues(r.WithContext(caller.WithIdentity(r.Context(), &caller.Identity{AppID: 1})))
	if _, ok := v["user.email"]; ok || v["tenant"] != "t" {
		t.Fatalf("values = %v", v)
	}
}

func TestClassify(t *testing.T) {
	p, err := New(Config{Name: "svc", BaseURL: "http://x.example"})
	if err != nil {
		t.Fatal(err)
	}
	live := context.Background()
	canceled, cancel := context.WithCancel(live)
	cancel()
	tests := []struct {
		name   string
		err    error
		ctx    context.Context
		parent context.Context
		want   int
	}{
		{"dns", &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, live, live, 503},
		{"dns timeout", &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}, live, live, 504},
		{"deadline", context.DeadlineExceeded, live, live, 504},
		{"client gone", context.Canceled, canceled, canceled, 499},
		{"body too large", &http.MaxBytesError{Limit: 5}, live, live, 413},
		{"not allowed", &NotAllowedError{Host: "x"}, live, live, 502},
		{"other", errors.New("tls: bad certificate"), live, live, 502},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.classify(tc.err, tc.ctx, tc.parent).Status; got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCacheBounds(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCache(Config{CacheTTL: time.Minute, CacheMaxEntries: 3, CacheMaxBytes: 1000, CacheMaxEntryBytes: 400,
		Now: func() time.Time { return now }})
	body := func(n int) []byte { return make([]byte, n) }
	c.put("a", nil, body(10))
	c.put("b", nil, body(10))
	c.put("c", nil, body(10))
	c.get("a") // a is now the most recent
	c.put("d", nil, body(10))
	if _, ok := c.get("b"); ok {
		t.Fatal("the least recently used entry survived")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	c.put("big", nil, body(401))
	if _, ok := c.get("big"); ok {
		t.Fatal("an entry over the entry cap was stored")
	}
	c.flush()
	c.put("x", nil, body(390))
	c.put("y", nil, body(390))
	c.put("z", nil, body(390)) // 3×~391 bytes > 1000: x goes
	if n, b := c.stats(); n != 2 || b > 1000 {
		t.Fatalf("entries %d bytes %d", n, b)
	}
	if _, ok := c.get("x"); ok {
		t.Fatal("byte bound not enforced")
	}
	now = now.Add(time.Minute)
	if _, ok := c.get("z"); ok {
		t.Fatal("expired entry served")
	}
}
