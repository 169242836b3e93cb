package soap_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestEndToEnd creates a soap service through the system API and calls it
// through the whole pipeline.
func TestEndToEnd(t *testing.T) {
	srv := newTestServer(t)
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)

	r := admin.Do(t, http.MethodGet, "/api/v2/system/service_type?fields=name", nil)
	if !strings.Contains(string(r.Body), `"soap"`) {
		t.Fatalf("service_type does not list soap: %s", r.Body)
	}
	create := func(config map[string]any) *proxytest.Response {
		return admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
			"resource": []any{map[string]any{"name": "calc", "label": "Calc", "type": "soap", "is_active": true, "config": config}}})
	}
	r = create(map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"stream_context": map[string]any{"ssl": map[string]any{"verify_peer": false}}}})
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "TLS verification") {
		t.Fatalf("TLS off: %d %s", r.Status, r.Body)
	}
	if r = create(map[string]any{"wsdl": srv.URL + "/calc.wsdl"}); r.Status >= 300 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if srv.wsdlHits != 0 {
		t.Errorf("the WSDL was fetched on save")
	}
	r = admin.Do(t, http.MethodGet, "/api/v2/calc", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `{"name":"Add"}`) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodPost, "/api/v2/calc/add", map[string]any{"a": 20, "b": 22})
	if r.Status != 200 || string(r.Body) != `{"AddResult":42}` {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodGet, "/api/v2/calc/Add?a=1&b=2", nil)
	if r.Status != 200 || string(r.Body) != `{"AddResult":3}` {
		t.Fatalf("GET add: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodPost, "/api/v2/calc/nothing", map[string]any{})
	if r.Status != 404 {
		t.Fatalf("unknown: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodGet, "/api/v2/api_docs/calc", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"/echoperson"`) {
		t.Fatalf("api_docs: %d %s", r.Status, r.Body)
	}
	if err := apidocs.Validate(t.Context(), r.Body); err != nil {
		t.Fatalf("api_docs document: %v", err)
	}
}
