package proxy_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/script"
)

// svcSrc is the scripted service of TestScriptedServices in each type: it
// answers POST with 201 through event.response, refuses "deny" with 403,
// counts todos through platform.api, calls itself on "again", and
// otherwise returns the resource and a parameter.
var svcSrc = map[string]string{
	"lua": `
if event.request.method == "POST" then event.response = {status_code = 201, content = {created = event.request.payload.n}} return end
if event.resource == "deny" then error({status_code = 403, message = "denied"}) end
if event.resource == "todos" then local r = platform.api.get("db/_table/todo"); return {count = #r.content.resource} end
if event.resource == "again" then local r = platform.api.get(event.request.service .. "/again"); error({status_code = r.status_code, message = r.content.error.message}) end
return {resource = event.resource, x = event.request.parameters.x}`,
	"js": `
if (event.request.method === "POST") { event.response = {status_code: 201, content: {created: event.request.payload.n}}; return; }
if (event.resource === "deny") throw {status_code: 403, message: "denied"};
if (event.resource === "todos") { const r = platform.api.get("db/_table/todo"); return {count: r.content.resource.length}; }
if (event.resource === "again") { const r = platform.api.get(event.request.service + "/again"); throw {status_code: r.status_code, message: r.content.error.message}; }
return {resource: event.resource, x: event.request.parameters.x};`,
	"python3": `
if event.request.method == "POST":
    event.response = {"status_code": 201, "content": {"created": event.request.payload.n}}
    return
if event.resource == "deny":
    raise ScriptAbort(403, "denied")
if event.resource == "todos":
    r = platform.api.get("db/_table/todo")
    return {"count": len(r.content.resource)}
if event.resource == "again":
    r = platform.api.get(event.request.service + "/again")
    raise ScriptAbort(r.status_code, r.content.error.message)
return {"resource": event.resource, "x": event.request.parameters.x}`,
	"php": `
if ($event['request']['method'] === 'POST') { $event['response'] = ['status_code' => 201, 'content' => ['created' => $event['request']['payload']['n']]]; return; }
if ($event['resource'] === 'deny') { throw new ScriptAbort(403, 'denied'); }
if ($event['resource'] === 'todos') { $r = $platform['api']->get('db/_table/todo'); return ['count' => count($r['content']['resource'])]; }
if ($event['resource'] === 'again') { $r = $platform['api']->get($event['request']['service'] . '/again'); throw new ScriptAbort($r['status_code'], $r['content']['error']['message']); }
return ['resource' => $event['resource'], 'x' => $event['request']['parameters']['x']];`,
}

// TestScriptedServices runs a scripted service of every type available
// here through the whole pipeline: answering by returning and through
// event.response, aborting, inner calls, self-recursion, the OpenAPI
// document, service_type, a syntax error refused on save, and the script
// as a file in DIR/scripts/.
func TestScriptedServices(t *testing.T) {
	in := proxytest.StartSQLite(t)
	c := in.Admin(t)
	must := mustStatus(t)
	must(c.Do(t, "POST", "/api/v2/db/_schema", map[string]any{"resource": []any{map[string]any{"name": "todo",
		"field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "title", "type": "string"}}}}}), 200)
	must(c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{
		map[string]any{"title": "a"}, map[string]any{"title": "b"}}}), 200)

	for _, tc := range []struct{ typ, src, env string }{
		{"lua", "lua", ""}, {"v8js", "js", ""}, {"nodejs", "js", "PORTCULLIS_TEST_NODE"},
		{"python3", "python3", "PORTCULLIS_TEST_PYTHON"}, {"python", "python3", "PORTCULLIS_TEST_PYTHON"}, {"php", "php", "PORTCULLIS_TEST_PHP"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			must := mustStatus(t)
			if tc.env != "" {
				bin := os.Getenv(tc.env)
				if bin == "" {
					t.Skipf("%s is not set: the %s scripted service is not tested", tc.env, tc.typ)
				}
				if err := script.SetInterpreter(tc.typ, bin); err != nil {
					t.Fatal(err)
				}
				defer func() { _ = script.SetInterpreter(tc.typ, "") }()
			}
			name := "s" + tc.typ
			must(c.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
				"name": name, "label": name, "type": tc.typ, "is_active": true, "config": map[string]any{"content": svcSrc[tc.src]}}}}), 201)
			r := must(c.Do(t, "GET", "/api/v2/"+name+"/hello/world?x=1", nil), 200)
			if m := r.Map(t); m["resource"] != "hello/world" || m["x"] != "1" {
				t.Errorf("GET = %s", r.Body)
			}
			r = must(c.Do(t, "POST", "/api/v2/"+name, map[string]any{"n": 5}), 201)
			if m := r.Map(t); m["created"] != float64(5) {
				t.Errorf("POST = %s", r.Body)
			}
			r = must(c.Do(t, "GET", "/api/v2/"+name+"/deny", nil), 403)
			if !strings.Contains(string(r.Body), "denied") {
				t.Errorf("deny = %s", r.Body)
			}
			r = must(c.Do(t, "GET", "/api/v2/"+name+"/todos", nil), 200)
			if m := r.Map(t); m["count"] != float64(2) {
				t.Errorf("inner call = %s", r.Body)
			}
			r = must(c.Do(t, "GET", "/api/v2/"+name+"/again", nil), 500)
			if !strings.Contains(string(r.Body), "nested more than") {
				t.Errorf("recursion = %s", r.Body)
			}
			doc := must(c.Do(t, "GET", "/api/v2/api_docs/"+name, nil), 200)
			if err := apidocs.Validate(t.Context(), doc.Body); err != nil {
				t.Errorf("invalid document: %v", err)
			}
			r = must(c.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
				"name": name + "bad", "label": "bad", "type": tc.typ, "is_active": true, "config": map[string]any{"content": "x = 1\nif then\ny = 2"}}}}), 400)
			if !strings.Contains(strings.ToLower(string(r.Body)), "line") {
				t.Errorf("syntax error does not name the line: %s", r.Body)
			}
		})
	}

	t.Run("inner calls pass RBAC with the script bit and skip limits", func(t *testing.T) {
		must := mustStatus(t)
		must(c.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
			"name": "fan", "label": "fan", "type": "lua", "is_active": true, "config": map[string]any{"content": `
local out = {}
for i = 1, 5 do out[i] = platform.api.get("db/_table/todo").status_code end
out[6] = platform.api.post("db/_table/todo", {resource = {{title = "no"}}}).status_code
return out`}}}}), 201)
		dbID := firstID(t, must(c.Do(t, "GET", "/api/v2/system/service?filter=name%3Ddb", nil), 200))
		fanID := firstID(t, must(c.Do(t, "GET", "/api/v2/system/service?filter=name%3Dfan", nil), 200))
		roleID := firstID(t, must(c.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
			"name": "fan-role", "is_active": true, "role_service_access_by_role_id": []any{
				map[string]any{"service_id": fanID, "component": "*", "verb_mask": 1, "requestor_mask": 1},
				map[string]any{"service_id": dbID, "component": "_table/todo", "verb_mask": 1, "requestor_mask": 2},
			}}}}), 201))
		must(c.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
			"name": "fan-app", "is_active": true, "type": 0, "role_id": roleID}}}), 201)
		reader := &proxytest.Client{Inst: in, APIKey: appKey(t, c, "fan-app")}
		must(c.Do(t, "POST", "/api/v2/system/limit", map[string]any{"resource": []any{map[string]any{
			"name": "two a minute", "type": "instance", "rate": 2, "period": "minute", "is_active": true}}}), 201)
		if err := in.Proxy.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			r := must(reader.Do(t, "GET", "/api/v2/fan", nil), 200)
			if got := strings.TrimSpace(string(r.Body)); got != "[200,200,200,200,200,403]" {
				t.Fatalf("call %d: inner statuses %s, want five 200s (script bit, no limit) and a 403 (no access)", i, got)
			}
		}
		must(reader.Do(t, "GET", "/api/v2/fan", nil), 429)
		// The role reaches the table only as a script.
		must(reader.Do(t, "GET", "/api/v2/db/_table/todo", nil), 403)
	})
	t.Run("service_type lists the Script group", func(t *testing.T) {
		must := mustStatus(t)
		r := must(c.Do(t, "GET", "/api/v2/system/service_type?group=Script", nil), 200)
		for _, want := range []string{`"lua"`, `"v8js"`, `"nodejs"`, `"python3"`, `"python"`, `"php"`, `"config_schema":[{"name":"content"`} {
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("service_type lacks %s: %s", want, r.Body)
			}
		}
	})
	t.Run("a script file in DIR/scripts, and a record's content wins", func(t *testing.T) {
		must := mustStatus(t)
		dir := filepath.Join(in.Config.DataDir, "scripts")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "fromfile.lua"), []byte(`return {from = "file"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		id := firstID(t, must(c.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
			"name": "fromfile", "label": "f", "type": "lua", "is_active": true}}}), 201))
		r := must(c.Do(t, "GET", "/api/v2/fromfile", nil), 200)
		if r.Map(t)["from"] != "file" {
			t.Errorf("from the file = %s", r.Body)
		}
		must(c.Do(t, "PATCH", "/api/v2/system/service/"+strconv.FormatInt(id, 10), map[string]any{"config": map[string]any{"content": `return {from = "record"}`}}), 200)
		r = must(c.Do(t, "GET", "/api/v2/fromfile", nil), 200)
		if r.Map(t)["from"] != "record" {
			t.Errorf("with content = %s", r.Body)
		}
		must(c.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
			"name": "nofile", "label": "n", "type": "lua", "is_active": true}}}), 201)
		r = must(c.Do(t, "GET", "/api/v2/nofile", nil), 500)
		if !strings.Contains(string(r.Body), "nofile.lua") {
			t.Errorf("no script = %s", r.Body)
		}
	})
}
