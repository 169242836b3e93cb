package proxy_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/script"
)

// extEngines are the external script engines and the variables naming
// their interpreters in tests.
var extEngines = []struct{ typ, env string }{
	{"nodejs", "PORTCULLIS_TEST_NODE"},
	{"python3", "PORTCULLIS_TEST_PYTHON"},
	{"php", "PORTCULLIS_TEST_PHP"},
}

// extSrc are the scripts of TestExternalEventScripts in each engine.
var extSrc = map[string]map[string]string{
	"limit": {
		"nodejs":  `event.request.parameters.limit = 1;`,
		"python3": `event.request.parameters['limit'] = 1`,
		"php":     `$event['request']['parameters']['limit'] = 1;`,
	},
	"upper": {
		"nodejs":  `for (const r of event.response.content.resource) r.title = r.title.toUpperCase(); event.response.headers["x-scripted"] = "yes";`,
		"python3": "for r in event.response.content.resource:\n    r.title = r.title.upper()\nevent.response.headers['x-scripted'] = 'yes'",
		"php":     `foreach ($event['response']['content']['resource'] as &$r) { $r['title'] = strtoupper($r['title']); } $event['response']['headers']['x-scripted'] = 'yes';`,
	},
	"answer": {
		"nodejs":  `event.response = {status_code: 202, content: {queued: event.request.payload.resource[0].title}};`,
		"python3": `event.response = {'status_code': 202, 'content': {'queued': event.request.payload.resource[0].title}}`,
		"php":     `$event['response'] = ['status_code' => 202, 'content' => ['queued' => $event['request']['payload']['resource'][0]['title']]];`,
	},
	"abort": {
		"nodejs":  `throw {status_code: 403, message: "Todos are closed."};`,
		"python3": `raise ScriptAbort(403, "Todos are closed.")`,
		"php":     `throw new ScriptAbort(403, "Todos are closed.");`,
	},
	"error": {
		"nodejs":  `const x = null; return x.y;`,
		"python3": "x = None\nreturn x.y",
		"php":     `$x = null; return $x->y();`,
	},
	"loop": {
		"nodejs":  `for (;;) {}`,
		"python3": "while True:\n    pass",
		"php":     `while (true) {}`,
	},
	"escape": {
		"nodejs":  `return require("fs").readFileSync("/etc/passwd", "utf8");`,
		"python3": "import os\nreturn os.listdir('/')",
		"php":     `return file_get_contents('/etc/passwd');`,
	},
	"inner": {
		"nodejs":  `const n = platform.api.get("db/_table/note"); const s = platform.api.get("db/_table/secret"); event.response = {content: {note: n.status_code, secret: s.status_code, user: platform.session.role.name}};`,
		"python3": "n = platform.api.get('db/_table/note')\ns = platform.api.get('db/_table/secret')\nevent.response = {'content': {'note': n.status_code, 'secret': s.status_code, 'user': platform.session.role.name}}",
		"php":     `$n = $platform['api']->get('db/_table/note'); $s = $platform['api']->get('db/_table/secret'); $event['response'] = ['content' => ['note' => $n['status_code'], 'secret' => $s['status_code'], 'user' => $platform['session']['role']['name']]];`,
	},
	"recurse": {
		"nodejs":  `const r = platform.api.get("db/_table/todo"); if (r.status_code !== 200) throw {status_code: r.status_code, message: r.content.error.message};`,
		"python3": "r = platform.api.get('db/_table/todo')\nif r.status_code != 200:\n    raise ScriptAbort(r.status_code, r.content.error.message)",
		"php":     `$r = $platform['api']->get('db/_table/todo'); if ($r['status_code'] !== 200) { throw new ScriptAbort($r['status_code'], $r['content']['error']['message']); }`,
	},
}

// TestExternalEventScripts runs event scripts in node, python3 and php
// through the whole pipeline: changing the request and the response,
// answering from pre_process, aborting, errors, the time limit, a sandbox
// escape, inner calls under RBAC and self-recursion, on every system
// database the environment names. The time limit leaves room for the
// recursion test to start six interpreters on a loaded machine.
func TestExternalEventScripts(t *testing.T) {
	for _, eng := range extEngines {
		t.Run(eng.typ, func(t *testing.T) {
			bin := os.Getenv(eng.env)
			if bin == "" {
				t.Skipf("%s is not set: the %s engine is not tested end to end", eng.env, eng.typ)
			}
			if err := script.SetInterpreter(eng.typ, bin); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = script.SetInterpreter(eng.typ, "") }()
			dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
				in := proxytest.Start(t, sys, func(c *proxy.Config) { c.ScriptTimeout = 4 * time.Second })
				c := in.Admin(t)
				ctx := t.Context()
				must := mustStatus(t)
				for _, tbl := range []string{"todo", "note", "secret"} {
					must(c.Do(t, "POST", "/api/v2/db/_schema", map[string]any{"resource": []any{map[string]any{"name": tbl,
						"field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "title", "type": "string"}}}}}), 200)
				}
				must(c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{
					map[string]any{"title": "a"}, map[string]any{"title": "b"}, map[string]any{"title": "c"}}}), 200)
				set := func(name, key string, modify bool) {
					t.Helper()
					must(c.Do(t, "POST", "/api/v2/system/event_script/"+name, map[string]any{"type": eng.typ, "content": extSrc[key][eng.typ],
						"is_active": true, "allow_event_modification": modify}), 201)
					if err := in.Proxy.Reload(ctx); err != nil {
						t.Fatal(err)
					}
				}
				drop := func(name string) {
					t.Helper()
					must(c.Do(t, "DELETE", "/api/v2/system/event_script/"+name, nil), 200)
					if err := in.Proxy.Reload(ctx); err != nil {
						t.Fatal(err)
					}
				}
				count := func(r *proxytest.Response) int {
					t.Helper()
					return len(r.Map(t)["resource"].([]any))
				}

				t.Run("pre_process changes the request only when allowed", func(t *testing.T) {
					set("db._table.todo.get.pre_process", "limit", false)
					if n := count(must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
						t.Fatalf("without allow_event_modification: %d records, want 3", n)
					}
					drop("db._table.todo.get.pre_process")
					set("db._table.todo.get.pre_process", "limit", true)
					defer drop("db._table.todo.get.pre_process")
					if n := count(must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 1 {
						t.Fatalf("with allow_event_modification: %d records, want 1", n)
					}
				})
				t.Run("post_process changes the response", func(t *testing.T) {
					set("db._table.{table_name}.get.post_process", "upper", true)
					defer drop("db._table.{table_name}.get.post_process")
					r := must(c.Do(t, "GET", "/api/v2/db/_table/todo?order=id", nil), 200)
					if got := r.Map(t)["resource"].([]any)[0].(map[string]any)["title"]; got != "A" || r.Header.Get("X-Scripted") != "yes" {
						t.Fatalf("title %v, header %q", got, r.Header.Get("X-Scripted"))
					}
				})
				t.Run("pre_process answers", func(t *testing.T) {
					set("db._table.todo.post.pre_process", "answer", true)
					defer drop("db._table.todo.post.pre_process")
					r := must(c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{map[string]any{"title": "z"}}}), 202)
					if r.Map(t)["queued"] != "z" {
						t.Fatalf("answer = %s", r.Body)
					}
					if n := count(must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
						t.Fatalf("the backend was reached: %d records", n)
					}
				})
				t.Run("abort, error, time limit, sandbox", func(t *testing.T) {
					for _, tc := range []struct {
						key, msg string
						status   int
					}{
						{"abort", "Todos are closed.", 403},
						{"error", "Script error:", 500},
						{"loop", "Script error: time limit exceeded", 500},
						{"escape", "Script error:", 500},
					} {
						set("db._table.{table_name}.{id}.get.pre_process", tc.key, false)
						r := must(c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), tc.status)
						msg := r.Map(t)["error"].(map[string]any)["message"].(string)
						if !strings.HasPrefix(msg, tc.msg) {
							t.Errorf("%s: message %q, want %q", tc.key, msg, tc.msg)
						}
						drop("db._table.{table_name}.{id}.get.pre_process")
					}
					// The engine still answers after the time limit killed a worker.
					must(c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), 200)
				})
				t.Run("inner calls pass RBAC with the script bit", func(t *testing.T) {
					svcID := firstID(t, must(c.Do(t, "GET", "/api/v2/system/service?filter=name%3Ddb", nil), 200))
					r := must(c.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
						"name": "todo-" + eng.typ, "is_active": true, "role_service_access_by_role_id": []any{
							map[string]any{"service_id": svcID, "component": "_table/todo", "verb_mask": 1, "requestor_mask": 1},
							map[string]any{"service_id": svcID, "component": "_table/note", "verb_mask": 1, "requestor_mask": 2},
						}}}}), 201)
					roleID := firstID(t, r)
					must(c.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
						"name": "todo-app", "is_active": true, "type": 0, "role_id": roleID}}}), 201)
					reader := &proxytest.Client{Inst: in, APIKey: appKey(t, c, "todo-app")}
					set("db._table.todo.get.pre_process", "inner", true)
					defer drop("db._table.todo.get.pre_process")
					r = must(reader.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)
					if m := r.Map(t); fmt.Sprintf("%v %v %v", m["note"], m["secret"], m["user"]) != "200 403 todo-"+eng.typ {
						t.Fatalf("inner calls: %s", r.Body)
					}
					must(reader.Do(t, "GET", "/api/v2/db/_table/note", nil), http.StatusForbidden)
				})
				t.Run("self-recursion ends", func(t *testing.T) {
					set("db._table.todo.get.pre_process", "recurse", false)
					defer drop("db._table.todo.get.pre_process")
					r := must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 500)
					if !strings.Contains(string(r.Body), "nested more than") {
						t.Fatalf("recursion: %s", r.Body)
					}
				})
				t.Run("syntax error refused on save", func(t *testing.T) {
					r := must(c.Do(t, "POST", "/api/v2/system/event_script/db._table.todo.get.pre_process",
						map[string]any{"type": eng.typ, "content": "x = 1\nif ("}), 400)
					if !strings.Contains(string(r.Body), "line") {
						t.Fatalf("error does not name the line: %s", r.Body)
					}
				})
			})
		})
	}
}

// TestExternalEngineMissing: an engine whose interpreter is not installed
// answers 503 naming it.
func TestExternalEngineMissing(t *testing.T) {
	if err := script.SetInterpreter("php", "/nonexistent/php-for-test"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = script.SetInterpreter("php", "") }()
	in := proxytest.StartSQLite(t)
	c := in.Admin(t)
	r := c.Do(t, "POST", "/api/v2/system/event_script/system.environment.get.pre_process",
		map[string]any{"type": "php", "content": "return 1;", "is_active": true})
	if r.Status != 201 {
		t.Fatalf("save = %d %s", r.Status, r.Body)
	}
	if err := in.Proxy.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	r = c.Do(t, "GET", "/api/v2/system/environment", nil)
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "php-for-test") {
		t.Fatalf("missing interpreter = %d %s", r.Status, r.Body)
	}
}
