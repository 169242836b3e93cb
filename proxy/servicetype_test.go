package proxy_test

import (
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// TestServiceTypesAreImplemented checks that /system/service_type lists
// only types that can be created, and that every generic type it leaves
// out is refused with 501 rather than accepted.
func TestServiceTypesAreImplemented(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	r := admin.Do(t, http.MethodGet, "/api/v2/system/service_type?fields=name,implemented", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("service_type = %d %s", r.Status, r.Body)
	}
	listed := map[string]bool{}
	for _, x := range r.Map(t)["resource"].([]any) {
		m := x.(map[string]any)
		listed[m["name"].(string)] = true
		if m["implemented"] != true {
			t.Errorf("listed without an implementation: %v", m)
		}
	}
	for _, name := range []string{"cache_redis", "cache_memcached", "amqp", "mqtt", "local_file", "smtp_email", "sqlite"} {
		if !listed[name] {
			t.Errorf("%s is not listed", name)
		}
	}
	for _, info := range service.Generic {
		if listed[info.Name] || info.Singleton {
			continue
		}
		r := admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
			"resource": []any{map[string]any{"name": "x" + info.Name, "label": "X", "type": info.Name, "is_active": true, "config": map[string]any{}}}})
		if r.Status != http.StatusNotImplemented {
			t.Errorf("creating unlisted type %s = %d %s, want 501", info.Name, r.Status, r.Body)
		}
	}
}
