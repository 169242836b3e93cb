package apidocs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

func TestDatabaseDocumentsMatchGolden(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		in := dbInstance(t, cfg)
		admin := in.Admin(t)
		doc := getDoc(t, admin, "/api/v2/api_docs/shop")
		golden(t, string(cfg.Kind), doc)

		t.Run("_spec answers the same document", func(t *testing.T) {
			spec := getDoc(t, admin, "/api/v2/shop/_spec")
			if diff := cmp.Diff(doc, spec); diff != "" {
				t.Errorf("_spec differs from api_docs/shop:\n%s", diff)
			}
		})
		t.Run("every table has its paths and schema", func(t *testing.T) {
			ops := operations(doc)
			for _, want := range []string{
				"get /", "get /_table", "get /_table/customer", "post /_table/customer", "put /_table/customer",
				"patch /_table/customer", "delete /_table/customer", "get /_table/customer/{id}", "patch /_table/customer/{id}",
				"get /_table/order_tag/{id}", "get /_table/line%20item", "get /_table/big_spender",
				"get /_schema", "post /_schema", "put /_schema", "patch /_schema",
				"get /_schema/{table_name}", "post /_schema/{table_name}", "put /_schema/{table_name}",
				"patch /_schema/{table_name}", "delete /_schema/{table_name}",
			} {
				if !ops[want] {
					t.Errorf("missing operation %s", want)
				}
			}
			for _, absent := range []string{"get /_table/nokey/{id}", "post /_table/big_spender", "get /_table/big_spender/{id}"} {
				if ops[absent] {
					t.Errorf("operation %s should not be documented", absent)
				}
			}
			routines := ops["get /_proc/{procedure_name}"] && ops["post /_func/{function_name}"]
			if routines == (cfg.Kind == dialects.SQLite) {
				t.Errorf("_proc/_func documented = %v on %s", routines, cfg.Kind)
			}
			if cfg.Kind != dialects.SQLite {
				for _, want := range []string{"get /_func/add_nums", "post /_func/add_nums", "get /_proc/add_tax", "post /_proc/add_tax"} {
					if !ops[want] {
						t.Errorf("missing routine operation %s", want)
					}
				}
				get := doc["paths"].(map[string]any)["/_func/add_nums"].(map[string]any)["get"].(map[string]any)
				var params []string
				for _, p := range get["parameters"].([]any) {
					params = append(params, p.(map[string]any)["name"].(string))
				}
				if diff := cmp.Diff([]string{"a", "b"}, params); diff != "" {
					t.Errorf("add_nums query parameters (-want +got):\n%s", diff)
				}
				res := get["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
				if res["type"] != "integer" {
					t.Errorf("add_nums result schema = %v", res)
				}
			}
			comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
			cust := comps["customer"].(map[string]any)
			props := cust["properties"].(map[string]any)
			if got := props["name"].(map[string]any)["maxLength"]; got != float64(64) {
				t.Errorf("customer.name maxLength = %v", got)
			}
			if got := props["email"].(map[string]any)["nullable"]; got != true {
				t.Errorf("customer.email nullable = %v", got)
			}
			if got := props["id"].(map[string]any)["readOnly"]; got != true {
				t.Errorf("customer.id readOnly = %v", got)
			}
			if got := props["born"].(map[string]any)["format"]; got != "date" {
				t.Errorf("customer.born format = %v", got)
			}
			if got := props["active"].(map[string]any)["default"]; got != true {
				t.Errorf("customer.active default = %v", got)
			}
			if got := props["status"].(map[string]any)["default"]; got != "new" {
				t.Errorf("customer.status default = %v", got)
			}
			req, _ := cust["required"].([]any)
			if diff := cmp.Diff([]any{"name"}, req); diff != "" {
				t.Errorf("customer required (-want +got):\n%s", diff)
			}
			if _, ok := comps["line_item"]; !ok {
				t.Errorf("no schema line_item for table \"line item\"")
			}
			if _, ok := comps["Error"]; !ok {
				t.Errorf("no shared Error schema")
			}
		})
	})
}

func TestBuiltInServiceDocumentsMatchGolden(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	for _, name := range []string{"system", "user", "api_docs"} {
		t.Run(name, func(t *testing.T) {
			doc := getDoc(t, admin, "/api/v2/api_docs/"+name)
			golden(t, name, doc)
		})
	}
	t.Run("rws without a document", func(t *testing.T) {
		addService(t, in, "remote", "Remote", "rws", `{"base_url":"http://127.0.0.1:9/v1"}`)
		doc := getDoc(t, admin, "/api/v2/api_docs/remote")
		golden(t, "rws", doc)
	})
}

func TestRemoteServiceDocumentFromConfig(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	remoteDoc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "Weather", "version": "2"},
		"servers": []any{map[string]any{"url": "https://weather.example.com/v1"}},
		"paths": map[string]any{
			"/forecast/{city}": map[string]any{"get": map[string]any{
				"operationId": "forecast",
				"summary":     "Forecast for a city",
				"security":    []any{map[string]any{"upstreamKey": []any{}}},
				"parameters":  []any{map[string]any{"name": "city", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}},
				"responses": map[string]any{
					"200": map[string]any{"description": "ok", "content": map[string]any{"application/json": map[string]any{
						"schema": map[string]any{"$ref": "#/components/schemas/Forecast"}}}},
					"404": map[string]any{"description": "unknown city", "content": map[string]any{"application/json": map[string]any{
						"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}},
				}}},
		},
		"components": map[string]any{
			"schemas": map[string]any{
				"Forecast": map[string]any{"type": "object", "properties": map[string]any{"temp": map[string]any{"type": "number"}}},
				"Error":    map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string"}}},
			},
			"securitySchemes": map[string]any{"upstreamKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-Key"}},
		},
	}
	cfg, _ := json.Marshal(map[string]any{"base_url": "http://127.0.0.1:9/v1", "openapi": remoteDoc})
	addService(t, in, "weather", "Weather", "rws", string(cfg))
	doc := getDoc(t, admin, "/api/v2/api_docs/weather")
	if !operations(doc)["get /forecast/{city}"] {
		t.Fatalf("configured path missing: %v", operations(doc))
	}
	s := schemas(doc)
	if !s["Forecast"] || !s["Error_upstream"] || !s["Error"] {
		t.Errorf("schemas = %v, want Forecast, Error_upstream (theirs) and Error (ours)", s)
	}
	raw, _ := json.Marshal(doc)
	for _, leak := range []string{"weather.example.com", "upstreamKey", "127.0.0.1:9"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("document shows %q", leak)
		}
	}
	if srv := doc["servers"].([]any)[0].(map[string]any)["url"]; srv != "/api/v2/weather" {
		t.Errorf("servers = %v", srv)
	}

	t.Run("YAML text is accepted", func(t *testing.T) {
		yamlDoc := "openapi: 3.0.1\ninfo:\n  title: Y\n  version: '1'\npaths:\n  /ping:\n    get:\n      responses:\n        '200':\n          description: pong\n"
		cfg, _ := json.Marshal(map[string]any{"base_url": "http://127.0.0.1:9", "openapi": yamlDoc})
		addService(t, in, "pinger", "Pinger", "rws", string(cfg))
		if doc := getDoc(t, admin, "/api/v2/api_docs/pinger"); !operations(doc)["get /ping"] {
			t.Errorf("ops = %v", operations(doc))
		}
	})
	t.Run("invalid documents are refused when the service is saved", func(t *testing.T) {
		for name, d := range map[string]any{
			"swagger 2":       map[string]any{"swagger": "2.0", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{}},
			"openapi 3.1":     map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{}},
			"external ref":    map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{"$ref": "http://169.254.169.254/x.json"}}}}}},
			"dangling ref":    map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{"$ref": "#/components/responses/Nope"}}}}}},
			"not an object":   42,
			"not a document":  "just words",
			"path without /":  map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{"a": map[string]any{}}},
			"operation error": map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{"/a": map[string]any{"get": map[string]any{"parameters": []any{map[string]any{"name": "p", "in": "nowhere"}}, "responses": map[string]any{"200": map[string]any{"description": "x"}}}}}},
		} {
			t.Run(name, func(t *testing.T) {
				r := admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
					"name": "bad_" + strings.ReplaceAll(name, " ", "_"), "label": "Bad", "type": "rws",
					"config": map[string]any{"base_url": "http://127.0.0.1:9", "openapi": d}}}})
				if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "openapi") {
					t.Errorf("create = %d %s, want 400 naming openapi", r.Status, r.Body)
				}
			})
		}
	})
}

func TestDocumentsShowOnlyWhatTheRoleReaches(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	in := dbInstance(t, cfg)
	admin := in.Admin(t)
	db, docs := serviceID(t, admin, "shop"), serviceID(t, admin, "api_docs")
	key := appWithRole(t, admin, "reader", []map[string]any{
		{"service_id": docs, "component": "*", "verb_mask": 1},
		{"service_id": db, "component": "_table/customer", "verb_mask": 1 | 2},
		{"service_id": db, "component": "_schema/*", "verb_mask": 1},
	})
	reader := &proxytest.Client{Inst: in, APIKey: key}

	doc := getDoc(t, reader, "/api/v2/api_docs/shop")
	want := map[string]bool{
		"get /_table/customer": true, "post /_table/customer": true,
		"get /_schema": true, "get /_schema/{table_name}": true, "get /_schema/{table_name}/_field": true,
		"get /_schema/{table_name}/_field/{field_name}": true, "get /_schema/{table_name}/_related": true,
		"get /_schema/{table_name}/_related/{relation_name}": true,
	}
	if diff := cmp.Diff(want, operations(doc)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	s := schemas(doc)
	for _, name := range []string{"customer", "customer.Records", "customer.Request", "Error", "TableSchema"} {
		if !s[name] {
			t.Errorf("schema %s missing", name)
		}
	}
	for _, name := range []string{"orders", "tag", "line_item", "orders.Records"} {
		if s[name] {
			t.Errorf("schema %s of a table the role cannot reach is shown", name)
		}
	}
	// _spec needs a grant of '_spec' (or '*') on the service itself.
	if r := reader.Do(t, http.MethodGet, "/api/v2/shop/_spec", nil); r.Status != http.StatusForbidden ||
		!strings.Contains(string(r.Body), "spec endpoint not granted") {
		t.Errorf("_spec without a grant = %d %s, want 403 spec endpoint not granted", r.Status, r.Body)
	}
	specKey := appWithRole(t, admin, "reader with spec", []map[string]any{
		{"service_id": docs, "component": "*", "verb_mask": 1},
		{"service_id": db, "component": "_table/customer", "verb_mask": 1 | 2},
		{"service_id": db, "component": "_schema/*", "verb_mask": 1},
		{"service_id": db, "component": "_spec", "verb_mask": 1},
	})
	spec := getDoc(t, &proxytest.Client{Inst: in, APIKey: specKey}, "/api/v2/shop/_spec")
	if diff := cmp.Diff(doc, spec); diff != "" {
		t.Errorf("_spec differs from api_docs/shop:\n%s", diff)
	}

	for _, path := range []string{"/api/v2/api_docs/system", "/api/v2/system/_spec", "/api/v2/api_docs/user"} {
		if r := reader.Do(t, http.MethodGet, path, nil); r.Status != http.StatusForbidden {
			t.Errorf("GET %s = %d %s, want 403", path, r.Status, r.Body)
		}
	}
	if r := reader.Do(t, http.MethodGet, "/api/v2/api_docs/nosuch", nil); r.Status != http.StatusNotFound && r.Status != http.StatusForbidden {
		t.Errorf("unknown service = %d %s", r.Status, r.Body)
	}

	combined := getDoc(t, reader, "/api/v2/api_docs")
	var tags []string
	for _, tg := range combined["tags"].([]any) {
		tags = append(tags, tg.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"api_docs", "shop"}, tags); diff != "" {
		t.Errorf("combined document's services (-want +got):\n%s", diff)
	}
	ops := operations(combined)
	if !ops["get /shop/_table/customer"] || ops["get /shop/_table/orders"] || ops["get /system/user"] {
		t.Errorf("combined operations = %v", ops)
	}
	if !schemas(combined)["shop.customer"] || schemas(combined)["shop.orders"] {
		t.Errorf("combined schemas = %v", schemas(combined))
	}

	t.Run("no access to api_docs itself", func(t *testing.T) {
		key := appWithRole(t, admin, "data only", []map[string]any{{"service_id": db, "component": "*", "verb_mask": 1}})
		c := &proxytest.Client{Inst: in, APIKey: key}
		if r := c.Do(t, http.MethodGet, "/api/v2/api_docs/shop", nil); r.Status != http.StatusForbidden {
			t.Errorf("api_docs/shop = %d %s, want 403", r.Status, r.Body)
		}
		// _spec is granted by the role's '*' entry on the service.
		doc := getDoc(t, c, "/api/v2/shop/_spec")
		if ops := operations(doc); !ops["get /_table/orders"] || ops["post /_table/orders"] {
			t.Errorf("GET-only role's _spec = %v", ops)
		}
	})
	t.Run("a system role sees only its system components", func(t *testing.T) {
		sys := serviceID(t, admin, "system")
		key := appWithRole(t, admin, "desk", []map[string]any{
			{"service_id": sys, "component": "user/*", "verb_mask": 1},
			{"service_id": nil, "component": "*", "verb_mask": 1},
		})
		c := &proxytest.Client{Inst: in, APIKey: key}
		doc := getDoc(t, c, "/api/v2/api_docs/system")
		want := map[string]bool{"get /user": true, "get /user/{id}": true,
			"post /admin/session": true, "get /admin/session": true, "put /admin/session": true, "delete /admin/session": true,
			"post /admin/password": true, "get /environment": true}
		if diff := cmp.Diff(want, operations(doc)); diff != "" {
			t.Errorf("system operations (-want +got):\n%s", diff)
		}
	})
	t.Run("other verbs are refused", func(t *testing.T) {
		if r := admin.Do(t, http.MethodPost, "/api/v2/api_docs/shop", map[string]any{}); r.Status != http.StatusBadRequest {
			t.Errorf("POST api_docs/shop = %d %s", r.Status, r.Body)
		}
		if r := admin.Do(t, http.MethodGet, "/api/v2/api_docs/shop/extra", nil); r.Status != http.StatusNotFound {
			t.Errorf("GET api_docs/shop/extra = %d %s", r.Status, r.Body)
		}
	})
}

func TestCombinedDocument(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	in := dbInstance(t, cfg)
	admin := in.Admin(t)
	addService(t, in, "down", "Down", "pgsql", `{"dsn":"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"}`)
	r := admin.Do(t, http.MethodGet, "/api/v2/api_docs", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("combined = %d %s", r.Status, r.Body)
	}
	if got := r.Header.Get("Cache-Control"); !strings.Contains(got, "no-store") {
		t.Errorf("Cache-Control = %q", got)
	}
	doc := getDoc(t, admin, "/api/v2/api_docs")
	ops := operations(doc)
	for _, want := range []string{"get /shop/_table/customer", "get /system/user", "post /user/session", "get /api_docs/{service_name}", "get /shop"} {
		if !ops[want] {
			t.Errorf("combined document lacks %s", want)
		}
	}
	for op := range ops {
		if strings.HasPrefix(op, "get /down") {
			t.Errorf("unreachable database documented: %s", op)
		}
	}
	info := doc["info"].(map[string]any)
	if !strings.Contains(info["description"].(string), "down (") {
		t.Errorf("info.description does not name the service left out: %s", info["description"])
	}
	paths := doc["paths"].(map[string]any)
	op := paths["/shop/_table/customer"].(map[string]any)["get"].(map[string]any)
	if op["operationId"] != "shop.get_customerRecords" || op["tags"].([]any)[0] != "shop" {
		t.Errorf("operation = %v %v", op["operationId"], op["tags"])
	}
	if srv := doc["servers"].([]any)[0].(map[string]any)["url"]; srv != "/api/v2" {
		t.Errorf("servers = %v", srv)
	}
	if r := admin.Do(t, http.MethodGet, "/api/v2/api_docs/down", nil); r.Status != http.StatusServiceUnavailable {
		t.Errorf("document of an unreachable database = %d %s, want 503", r.Status, r.Body)
	}
}

func TestDocsPageIsServedFromTheBinary(t *testing.T) {
	in := proxytest.StartSQLite(t)
	client := in.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(in.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := get("/api/docs")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "docs/" {
		t.Errorf("/api/docs = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := get("/api/docs/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `src="swagger-ui-bundle.js"`) || !strings.Contains(body, `id="pc-key"`) {
		t.Fatalf("/api/docs/ = %d %.200s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		t.Errorf("page refers to another origin: %s", body)
	}
	for path, ctype := range map[string]string{
		"/api/docs/swagger-ui-bundle.js": "javascript", "/api/docs/swagger-ui.css": "text/css",
		"/api/docs/docs.js": "javascript", "/api/docs/docs.css": "text/css", "/api/docs/favicon-32x32.png": "image/png",
	} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), ctype) || len(body) == 0 {
			t.Errorf("%s = %d %q (%d bytes)", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
	for _, path := range []string{"/api/docs/swagger-initializer.js", "/api/docs/../v2/system", "/api/docs/ui/index.html", "/api/docs/swagger-ui.js.map"} {
		if resp, _ := get(path); resp.StatusCode == http.StatusOK {
			t.Errorf("%s = 200, want it not served", path)
		}
	}
}
