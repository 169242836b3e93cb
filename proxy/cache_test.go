package proxy_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestCacheServices creates a cache_redis and a cache_memcached service
// through the system API and drives them through the whole pipeline.
func TestCacheServices(t *testing.T) {
	redisURL, mcAddr := os.Getenv("PORTCULLIS_TEST_REDIS"), os.Getenv("PORTCULLIS_TEST_MEMCACHED")
	if redisURL == "" || mcAddr == "" {
		t.Skip("PORTCULLIS_TEST_REDIS and PORTCULLIS_TEST_MEMCACHED are needed")
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(mcAddr, "memcached://"), ":")
	ro, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatalf("PORTCULLIS_TEST_REDIS: %v", err)
	}
	rhost, rport, _ := strings.Cut(ro.Addr, ":")
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	expect := func(what string, r *proxytest.Response, status int) *proxytest.Response {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s = %d %s, want %d", what, r.Status, r.Body, status)
		}
		return r
	}

	r := expect("bad config", admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
		"resource": []any{map[string]any{"name": "bad", "label": "Bad", "type": "cache_redis", "is_active": true,
			"config": map[string]any{"port": 99999, "colour": "red"}}}}), http.StatusBadRequest)
	for _, want := range []string{"host: required", "port: 99999", "colour"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("bad config message lacks %q: %s", want, r.Body)
		}
	}

	prefix := fmt.Sprintf("pctest-proxy-%d:", time.Now().UnixNano())
	configs := map[string]map[string]any{
		"redis":     {"host": rhost, "port": rport, "database_index": ro.DB, "password": ro.Password, "default_ttl": 60, "options": map[string]any{"prefix": prefix}},
		"memcached": {"host": host, "port": port, "default_ttl": 60, "options": map[string]any{"prefix": prefix}},
	}
	for kind, cfg := range configs {
		t.Run(kind, func(t *testing.T) {
			expect("create", admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
				"resource": []any{map[string]any{"name": "c" + kind, "label": kind, "type": "cache_" + kind, "is_active": true, "config": cfg}}}), http.StatusCreated)
			base := "/api/v2/c" + kind
			expect("add", admin.Do(t, http.MethodPost, base+"/cart/7", map[string]any{"items": []any{1, 2}}), http.StatusCreated)
			if r := expect("read", admin.Do(t, http.MethodGet, base+"/cart/7", nil), http.StatusOK); strings.TrimSpace(string(r.Body)) != `{"items":[1,2]}` {
				t.Errorf("read = %s", r.Body)
			}
			expect("add twice", admin.Do(t, http.MethodPost, base+"/cart/7", map[string]any{"items": []any{}}), http.StatusConflict)
			expect("several", admin.Do(t, http.MethodPut, base, map[string]any{"a": 1, "b": "two"}), http.StatusOK)
			if r := expect("read several", admin.Do(t, http.MethodGet, base+"?keys=a,b", nil), http.StatusOK); strings.TrimSpace(string(r.Body)) != `{"a":1,"b":"two"}` {
				t.Errorf("read several = %s", r.Body)
			}
			expect("delete", admin.Do(t, http.MethodDelete, base+"?keys=a,b,cart/7", nil), http.StatusOK)
			expect("gone", admin.Do(t, http.MethodGet, base+"/cart/7", nil), http.StatusNotFound)

			doc := admin.Do(t, http.MethodGet, "/api/v2/api_docs/c"+kind, nil)
			if doc.Status != http.StatusOK || !strings.Contains(string(doc.Body), "/{key}") {
				t.Fatalf("api docs = %d %.200s", doc.Status, doc.Body)
			}
			if err := apidocs.Validate(t.Context(), doc.Body); err != nil {
				t.Errorf("invalid document: %v", err)
			}
		})
	}
	// A role that may only read public/* of the Redis cache.
	r = expect("service id", admin.Do(t, http.MethodGet, "/api/v2/system/service?filter=name%3Dcredis", nil), http.StatusOK)
	svcID := firstID(t, r)
	expect("public value", admin.Do(t, http.MethodPut, "/api/v2/credis/public/motd", `"open"`), http.StatusOK)
	expect("private value", admin.Do(t, http.MethodPut, "/api/v2/credis/private/key", `"secret"`), http.StatusOK)
	r = expect("create role", admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{
		"resource": []any{map[string]any{"name": "cache-reader", "is_active": true,
			"role_service_access_by_role_id": []any{map[string]any{
				"service_id": svcID, "component": "public/*", "verb_mask": 1, "requestor_mask": 1}}}}}), http.StatusCreated)
	roleID := firstID(t, r)
	r = expect("create app", admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=*", map[string]any{
		"resource": []any{map[string]any{"name": "cache-reader-app", "is_active": true, "type": 0, "role_id": roleID}}}), http.StatusCreated)
	key := firstField(t, r, "api_key")
	if key == "" {
		key = appKey(t, admin, "cache-reader-app")
	}
	reader := &proxytest.Client{Inst: in, APIKey: key}
	if r := expect("reader reads public", reader.Do(t, http.MethodGet, "/api/v2/credis/public/motd", nil), http.StatusOK); strings.TrimSpace(string(r.Body)) != `"open"` {
		t.Errorf("public = %s", r.Body)
	}
	expect("reader reads private", reader.Do(t, http.MethodGet, "/api/v2/credis/private/key", nil), http.StatusForbidden)
	expect("reader writes public", reader.Do(t, http.MethodPut, "/api/v2/credis/public/motd", `"x"`), http.StatusForbidden)
	expect("reader deletes", reader.Do(t, http.MethodDelete, "/api/v2/credis/public/motd", nil), http.StatusForbidden)
	admin.Do(t, http.MethodDelete, "/api/v2/credis?keys=public/motd,private/key", nil)

	r = expect("service types", admin.Do(t, http.MethodGet, "/api/v2/system/service_type?group=cache", nil), http.StatusOK)
	for _, want := range []string{`"cache_redis"`, `"cache_memcached"`, `"config_schema":[{"name":"host","label":"Host","type":"string","required":true`} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("service_type lacks %s: %s", want, r.Body)
		}
	}
}
