package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/cache"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name, typ, config string
		want              []string // parts of the error; none: valid
	}{
		{"redis minimal", "redis", `{"host":"127.0.0.1"}`, nil},
		{"redis full", "redis", `{"host":"r.local","port":"6380","password":"p","database_index":2,"default_ttl":60,"options":{"prefix":"app:","tls":true,"username":"u","dial_timeout":1.5,"pool_size":4}}`, nil},
		{"redis everything wrong", "redis", `{"port":70000,"database_index":-1,"default_ttl":-5,"colour":"red","options":{"pool_size":-1,"speed":1}}`,
			[]string{"host: required", "port: 70000", "database_index: must not be negative", "default_ttl: must not be negative", "unknown keys colour", "options: config: unknown keys speed", "options.pool_size"}},
		{"redis port not a number", "redis", `{"host":"h","port":"abc"}`, []string{`"abc" is not a number`}},
		{"redis not an object", "redis", `[1]`, []string{"must be a JSON object"}},
		{"memcached minimal", "memcached", `{"host":"127.0.0.1"}`, nil},
		{"memcached servers", "memcached", `{"host":"a:11211, b","port":11212,"options":{"prefix":"p:","timeout":2,"max_idle_conns":4}}`, nil},
		{"memcached everything wrong", "memcached", `{"host":"","default_ttl":-1,"password":"x","options":{"prefix":"a b","timeout":-1}}`,
			[]string{"host: required", "default_ttl", "unknown keys password", "options.prefix", "options.timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.typ == "redis" {
				err = cache.RedisType{}.ValidateConfig(json.RawMessage(tc.config))
			} else {
				err = cache.MemcachedType{}.ValidateConfig(json.RawMessage(tc.config))
			}
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid config accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestConfigSettings(t *testing.T) {
	r, err := cache.ParseRedisConfig(json.RawMessage(`{"host":"r.local","port":"6380","password":"p","database_index":2,"options":{"username":"u","read_timeout":0.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	o := r.ClientOptions()
	if o.Addr != "r.local:6380" || o.DB != 2 || o.Username != "u" || o.Password != "p" || o.ReadTimeout != 500*time.Millisecond {
		t.Errorf("redis options = %+v", o)
	}
	if r.TTL() != cache.DefaultTTL {
		t.Errorf("default ttl = %v", r.TTL())
	}
	m, err := cache.ParseMemcachedConfig(json.RawMessage(`{"host":"a:1, b","port":11300,"default_ttl":10}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Servers(), " "); got != "a:1 b:11300" || m.TTL() != 10*time.Second {
		t.Errorf("memcached servers = %s, ttl %v", got, m.TTL())
	}
}

// TestDocumentValidates checks the service's OpenAPI document.
func TestDocumentValidates(t *testing.T) {
	data, err := json.Marshal(cache.Document())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	for _, p := range []string{"/", "/{key}"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("no path %s", p)
		}
	}
}

// TestConfigSchemaMatchesKeys checks that each type's config_schema names
// exactly the keys its configuration accepts.
func TestConfigSchemaMatchesKeys(t *testing.T) {
	for _, typ := range []interface {
		ValidateConfig(json.RawMessage) error
		ConfigSchema() []service.ConfigField
	}{cache.RedisType{}, cache.MemcachedType{}} {
		var names []string
		for _, f := range typ.ConfigSchema() {
			names = append(names, f.Name)
		}
		sort.Strings(names)
		err := typ.ValidateConfig(json.RawMessage(`{"zz_unknown":1}`))
		_, known, ok := strings.Cut(fmt.Sprint(err), "(known: ")
		known, _, _ = strings.Cut(known, ")")
		keys := strings.Split(known, ", ")
		sort.Strings(keys)
		if !ok || strings.Join(keys, ",") != strings.Join(names, ",") {
			t.Errorf("%T: schema %v, accepted keys %v", typ, names, keys)
		}
	}
}
