package proxy_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// jsEnv is an instance with a todo table of three records in service db,
// a secret table, and an app "web" whose role may GET todo as an API
// caller and secret only as a script (requestor_mask 2).
type jsEnv struct {
	in    *proxytest.Instance
	admin *proxytest.Client
	web   *proxytest.Client // the web app's key alone: a non-admin caller
}

func startJSEnv(t *testing.T, adjust func(*proxy.Config)) *jsEnv {
	t.Helper()
	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.ScriptTimeout = time.Second
		if adjust != nil {
			adjust(c)
		}
	})
	env := &jsEnv{in: in, admin: in.Admin(t)}
	a := env.admin
	must := func(r *proxytest.Response) map[string]any {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("setup: %d %s", r.Status, r.Body)
		}
		return r.Map(t)
	}
	field := func(n, typ string) map[string]any { return map[string]any{"name": n, "type": typ} }
	must(a.Do(t, "POST", "/api/v2/db/_schema", map[string]any{"resource": []any{
		map[string]any{"name": "todo", "field": []any{field("id", "id"), field("title", "string")}},
		map[string]any{"name": "secret", "field": []any{field("id", "id"), field("code", "string")}}}}))
	must(a.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{
		map[string]any{"title": "a"}, map[string]any{"title": "b"}, map[string]any{"title": "c"}}}))
	must(a.Do(t, "POST", "/api/v2/db/_table/secret", map[string]any{"resource": []any{map[string]any{"code": "s3"}}}))
	svc := must(a.Do(t, "GET", "/api/v2/system/service?filter=name%3Ddb&fields=id", nil))["resource"].([]any)[0].(map[string]any)["id"]
	role := must(a.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "scripted", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": svc, "component": "_table/todo", "verb_mask": 1 | 2, "requestor_mask": 1 | 2},
			map[string]any{"service_id": svc, "component": "_table/secret", "verb_mask": 1, "requestor_mask": 2}}}}}))
	app := must(a.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "web", "is_active": true, "role_id": role["resource"].([]any)[0].(map[string]any)["id"]}}}))
	env.web = &proxytest.Client{Inst: in, APIKey: app["resource"].([]any)[0].(map[string]any)["api_key"].(string)}
	return env
}

// set attaches a JavaScript script to event name and reloads; the
// returned func removes it (defer it).
func (env *jsEnv) set(t *testing.T, name, content string, modify bool) func() {
	t.Helper()
	r := env.admin.Do(t, "POST", "/api/v2/system/event_script/"+name, map[string]any{"type": "javascript", "content": content,
		"is_active": true, "allow_event_modification": modify})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("save %s: %d %s", name, r.Status, r.Body)
	}
	if err := env.in.Proxy.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return func() {
		jsWant(t, env.admin.Do(t, "DELETE", "/api/v2/system/event_script/"+name, nil), http.StatusOK)
		if err := env.in.Proxy.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

func jsWant(t *testing.T, r *proxytest.Response, status int) *proxytest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

func jsErrMessage(t *testing.T, r *proxytest.Response) string {
	t.Helper()
	e, _ := r.Map(t)["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// TestJavaScriptScripts runs JavaScript event scripts through the whole
// pipeline: changing the request and the response, answering from
// pre_process, aborting, errors, the time limit, sandbox escapes, inner
// calls under RBAC and exempt from limits, and self-recursion.
func TestJavaScriptScripts(t *testing.T) {
	env := startJSEnv(t, nil)
	c := env.admin
	count := func(r *proxytest.Response) int {
		t.Helper()
		return len(r.Map(t)["resource"].([]any))
	}

	t.Run("pre_process changes the request only when allowed", func(t *testing.T) {
		env.set(t, "db._table.todo.get.pre_process", `event.request.parameters.limit = 1`, false)
		if n := count(jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
			t.Fatalf("without allow_event_modification: %d records, want 3", n)
		}
		defer env.set(t, "db._table.todo.get.pre_process", `event.request.parameters.limit = 1`, true)()
		if n := count(jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 1 {
			t.Fatalf("with allow_event_modification: %d records, want 1", n)
		}
	})
	t.Run("pre_process changes the payload", func(t *testing.T) {
		defer env.set(t, "db._table.{table_name}.post.pre_process",
			`event.request.payload.resource.forEach(r => { r.title = r.title.trim().toUpperCase() })`, true)()
		r := jsWant(t, c.Do(t, "POST", "/api/v2/db/_table/todo?fields=title", map[string]any{"resource": []any{map[string]any{"title": "  new "}}}), 200)
		if got := r.Map(t)["resource"].([]any)[0].(map[string]any)["title"]; got != "NEW" {
			t.Fatalf("stored title %v", got)
		}
		jsWant(t, c.Do(t, "DELETE", "/api/v2/db/_table/todo?filter=title%3DNEW", nil), 200)
	})
	t.Run("post_process changes the response", func(t *testing.T) {
		defer env.set(t, "db._table.{table_name}.get.post_process", `
			for (const rec of event.response.content.resource) rec.title = rec.title.toUpperCase();
			event.response.headers["x-scripted"] = "yes"`, true)()
		r := jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo?order=id", nil), 200)
		if got := r.Map(t)["resource"].([]any)[0].(map[string]any)["title"]; got != "A" || r.Header.Get("X-Scripted") != "yes" {
			t.Fatalf("title %v, header %q", got, r.Header.Get("X-Scripted"))
		}
	})
	t.Run("post_process without permission changes nothing", func(t *testing.T) {
		defer env.set(t, "db._table.{table_name}.get.post_process", `event.response.status_code = 299; event.response.content = {}`, false)()
		if n := count(jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
			t.Fatalf("%d records", n)
		}
	})
	t.Run("pre_process answers", func(t *testing.T) {
		defer env.set(t, "db._table.todo.post.pre_process",
			`event.response = {status_code: 202, content: {queued: event.request.payload.resource[0].title}}`, true)()
		r := jsWant(t, c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{map[string]any{"title": "z"}}}), 202)
		if r.Map(t)["queued"] != "z" {
			t.Fatalf("answer = %s", r.Body)
		}
		if n := count(jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
			t.Fatalf("the backend was reached: %d records", n)
		}
	})
	t.Run("pre_process answer needs permission", func(t *testing.T) {
		defer env.set(t, "db._table.todo.get.pre_process", `event.response = {status_code: 202, content: {}}`, false)()
		if n := count(jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
			t.Fatalf("%d records", n)
		}
	})
	t.Run("abort, errors, time limit, sandbox", func(t *testing.T) {
		for _, tc := range []struct {
			script, msg string
			status      int
		}{
			{`throw {status_code: 403, message: "Todos are closed."}`, "Todos are closed.", 403},
			{`if (event.request.parameters.x !== "1") throw {status_code: 422, message: "x must be 1"}`, "x must be 1", 422},
			{`var x = null; return x.y`, "Script error: TypeError", 500},
			{`throw new Error("boom")`, "Script error: Error: boom", 500},
			{`while (true) {}`, "Script error: time limit exceeded", 500},
			{`(function f() { f() })()`, "Script error: stack overflow", 500},
			{`require("fs").readFileSync("/etc/passwd")`, "Script error: ReferenceError: require is not defined", 500},
			{`process.exit(1)`, "Script error: ReferenceError: process is not defined", 500},
			{`fetch("http://127.0.0.1:1/")`, "Script error: ReferenceError: fetch is not defined", 500},
			{`new XMLHttpRequest()`, "Script error: ReferenceError: XMLHttpRequest is not defined", 500},
			{`Function("return process")().exit()`, "Script error: ReferenceError: process is not defined", 500},
			{`platform.api.get("http://127.0.0.1:1/")`, "Script error: GoError: platform.api.get http://127.0.0.1:1/: external calls are not allowed", 500},
		} {
			drop := env.set(t, "db._table.{table_name}.{id}.get.pre_process", tc.script, false)
			r := jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), tc.status)
			if msg := jsErrMessage(t, r); !strings.HasPrefix(msg, tc.msg) {
				t.Errorf("%s: message %q, want %q", tc.script, msg, tc.msg)
			}
			drop()
		}
		// The server goes on.
		jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)
	})
	t.Run("platform.api and platform.session", func(t *testing.T) {
		defer env.set(t, "db._table.todo.{id}.get.pre_process", `
			const r = platform.api.get("db/_table/todo?limit=2");
			event.response = {content: {n: r.content.resource.length, s: r.status_code, u: platform.session.user.email}}`, true)()
		r := jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), 200)
		if m := r.Map(t); fmt.Sprintf("%v %v %v", m["n"], m["s"], m["u"]) != "2 200 "+proxytest.AdminEmail {
			t.Fatalf("inner call: %s", r.Body)
		}
	})
	t.Run("inner calls pass RBAC's script bit and only that", func(t *testing.T) {
		// As an API caller the web app may not read secret.
		jsWant(t, env.web.Do(t, "GET", "/api/v2/db/_table/secret", nil), 403)
		defer env.set(t, "db._table.todo.get.pre_process", `
			const s = platform.api.get("db/_table/secret");
			const w = platform.api.post("db/_table/secret", {resource: [{code: "x"}]});
			event.response = {content: {read: s.status_code, code: s.content.resource[0].code, write: w.status_code}}`, true)()
		r := jsWant(t, env.web.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)
		if m := r.Map(t); fmt.Sprintf("%v %v %v", m["read"], m["code"], m["write"]) != "200 s3 403" {
			t.Fatalf("inner calls: %s", r.Body)
		}
	})
	t.Run("self-recursion ends", func(t *testing.T) {
		defer env.set(t, "db._table.todo.get.pre_process", `
			const r = platform.api.get("db/_table/todo");
			if (r.status_code !== 200) throw {status_code: r.status_code, message: r.content.error.message}`, false)()
		r := jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 500)
		if !strings.Contains(string(r.Body), "nested more than") {
			t.Fatalf("recursion: %s", r.Body)
		}
	})
	t.Run("syntax error refused on save", func(t *testing.T) {
		for _, typ := range []string{"javascript", "v8js", "lua"} {
			src, line := "var x = 1;\nif (x {\n}", "Line 2:"
			if typ == "lua" {
				src, line = "x = 1\nif then", "line:2"
			}
			r := jsWant(t, c.Do(t, "POST", "/api/v2/system/event_script/db._table.todo.get.pre_process",
				map[string]any{"type": typ, "content": src}), 400)
			if !strings.Contains(string(r.Body), line) {
				t.Fatalf("%s: error does not name line 2: %s", typ, r.Body)
			}
		}
		defer env.set(t, "db._table.todo.get.pre_process", `return`, false)()
		r := jsWant(t, c.Do(t, "PATCH", "/api/v2/system/event_script/db._table.todo.get.pre_process",
			map[string]any{"content": "}}"}), 400)
		if !strings.Contains(string(r.Body), "Line 1") {
			t.Fatalf("PATCH: error does not name the line: %s", r.Body)
		}
		r = jsWant(t, c.Do(t, "PUT", "/api/v2/system/event_script/db._table.todo.get.pre_process",
			map[string]any{"type": "javascript", "content": "let = ;"}), 400)
		if !strings.Contains(string(r.Body), "Line 1") {
			t.Fatalf("PUT: error does not name the line: %s", r.Body)
		}
	})
}

// TestJavaScriptInnerCallsExemptFromLimits checks that a script's inner
// calls do not count against the caller's limits.
func TestJavaScriptInnerCallsExemptFromLimits(t *testing.T) {
	env := startJSEnv(t, nil)
	r := env.admin.Do(t, "POST", "/api/v2/system/limit", map[string]any{"resource": []any{map[string]any{
		"name": "two a minute", "type": "instance", "rate": 2, "period": "minute", "is_active": true}}})
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("create limit: %d %s", r.Status, r.Body)
	}
	defer env.set(t, "db._table.todo.get.pre_process", `
		let ok = 0;
		for (let i = 0; i < 5; i++) if (platform.api.get("db/_table/secret").status_code === 200) ok++;
		event.response = {content: {ok}}`, true)()
	for i := 0; i < 2; i++ {
		r := jsWant(t, env.web.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)
		if r.Map(t)["ok"] != float64(5) {
			t.Fatalf("request %d: inner calls limited: %s", i, r.Body)
		}
	}
	jsWant(t, env.web.Do(t, "GET", "/api/v2/db/_table/todo", nil), 429)
}

// TestScriptFiles checks event scripts kept as files in DIR/scripts: picked
// up and reloaded on change without a configuration reload, a record
// winning over a file, and the event listing saying which is in force.
func TestScriptFiles(t *testing.T) {
	env := startJSEnv(t, nil)
	c := env.admin
	dir := filepath.Join(env.in.Config.DataDir, "scripts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// eventually waits (at most 3 s, the poll is 0.5 s) until GET todo
	// answers with body containing want.
	eventually := func(want string) {
		t.Helper()
		var last string
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			r := c.Do(t, "GET", "/api/v2/db/_table/todo", nil)
			if last = fmt.Sprintf("%d %s", r.Status, r.Body); strings.Contains(last, want) {
				return
			}
		}
		t.Fatalf("GET todo = %s, want %q", last, want)
	}
	listed := func() []any {
		t.Helper()
		r := jsWant(t, c.Do(t, "GET", "/api/v2/system/event?service=db", nil), 200)
		p, _ := r.Map(t)["db"].(map[string]any)["db._table.{table_name}"].(map[string]any)
		s, _ := p["scripts"].([]any)
		return s
	}

	// Without the directive a file script may not answer (as a record
	// without allow_event_modification); it still aborts.
	write("db._table.todo.get.pre_process.js", `event.response = {content: {from: "js file"}}; throw {status_code: 418, message: "read only"}`)
	write("README.md", "not a script")
	write("db._table.todo.get.pre_process.txt", "not a script either")
	eventually(`read only`)
	got := listed()
	if len(got) != 1 {
		t.Fatalf("listed scripts = %v", got)
	}
	if f := got[0].(map[string]any); f["source"] != "file" || f["type"] != "javascript" || f["in_force"] != true ||
		f["name"] != "db._table.todo.get.pre_process" || f["allow_event_modification"] != false {
		t.Fatalf("listed file = %v", f)
	}
	write("db._table.todo.get.pre_process.js", "// portcullis: allow_event_modification\nevent.response = {content: {from: \"js file\"}}")
	eventually(`"from":"js file"`)
	if f := listed()[0].(map[string]any); f["allow_event_modification"] != true {
		t.Fatalf("listed file = %v", f)
	}

	// A change is seen within the poll.
	write("db._table.todo.get.pre_process.js", "// portcullis: allow_event_modification\nevent.response = {content: {from: \"js file, edited\"}}")
	eventually(`"from":"js file, edited"`)

	// A record of the same name wins, active or not.
	drop := env.set(t, "db._table.todo.get.pre_process", `event.response = {content: {from: "record"}}`, true)
	eventually(`"from":"record"`)
	sources := map[string]any{}
	for _, x := range listed() {
		m := x.(map[string]any)
		sources[m["source"].(string)] = m["in_force"]
	}
	if sources["record"] != true || sources["file"] != false {
		t.Fatalf("in force: %v", sources)
	}
	jsWant(t, c.Do(t, "PATCH", "/api/v2/system/event_script/db._table.todo.get.pre_process", map[string]any{"is_active": false}), 200)
	if err := env.in.Proxy.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(`"resource":[`)
	drop()
	eventually(`"from":"js file, edited"`)

	// Lua files too; removing the file removes the script.
	if err := os.Remove(filepath.Join(dir, "db._table.todo.get.pre_process.js")); err != nil {
		t.Fatal(err)
	}
	write("db._table.{table_name}.get.post_process.lua", "-- portcullis: allow_event_modification\nevent.response.content = {from = \"lua file\"}")
	eventually(`"from":"lua file"`)
	if got := listed(); len(got) != 1 || got[0].(map[string]any)["type"] != "lua" {
		t.Fatalf("listed = %v", got)
	}
	// A file that does not compile fails only its event.
	write("db._table.{table_name}.get.post_process.lua", `if then`)
	eventually(`Script error: syntax error`)
	jsWant(t, c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), 200)
}
