package proxy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestEventScripts runs Lua event scripts through the whole pipeline, with
// the system store (where the scripts live) on every database: changing the
// request and the response, answering from pre_process, aborting, errors,
// the time limit, inner calls and self-recursion.
func TestEventScripts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, func(c *proxy.Config) { c.ScriptTimeout = 300 * time.Millisecond })
		c := in.Admin(t)
		ctx := t.Context()
		must := mustStatus(t)
		must(c.Do(t, "POST", "/api/v2/db/_schema", map[string]any{"resource": []any{map[string]any{"name": "todo",
			"field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "title", "type": "string"}}}}}), 200)
		must(c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{
			map[string]any{"title": "a"}, map[string]any{"title": "b"}, map[string]any{"title": "c"}}}), 200)
		set := func(name, content string, modify bool) {
			t.Helper()
			must(c.Do(t, "POST", "/api/v2/system/event_script/"+name, map[string]any{"type": "lua", "content": content,
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
			set("db._table.todo.get.pre_process", `event.request.parameters.limit = 1`, false)
			if n := count(must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
				t.Fatalf("without allow_event_modification: %d records, want 3", n)
			}
			drop("db._table.todo.get.pre_process")
			set("db._table.todo.get.pre_process", `event.request.parameters.limit = 1`, true)
			defer drop("db._table.todo.get.pre_process")
			if n := count(must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 1 {
				t.Fatalf("with allow_event_modification: %d records, want 1", n)
			}
		})
		t.Run("post_process changes the response", func(t *testing.T) {
			set("db._table.{table_name}.get.post_process", `
				for _, rec in ipairs(event.response.content.resource) do rec.title = string.upper(rec.title) end
				event.response.headers["x-scripted"] = "yes"`, true)
			defer drop("db._table.{table_name}.get.post_process")
			r := must(c.Do(t, "GET", "/api/v2/db/_table/todo?order=id", nil), 200)
			if got := r.Map(t)["resource"].([]any)[0].(map[string]any)["title"]; got != "A" || r.Header.Get("X-Scripted") != "yes" {
				t.Fatalf("title %v, header %q", got, r.Header.Get("X-Scripted"))
			}
		})
		t.Run("pre_process answers", func(t *testing.T) {
			set("db._table.todo.post.pre_process", `event.response = {status_code = 202, content = {queued = event.request.payload.resource[1].title}}`, true)
			defer drop("db._table.todo.post.pre_process")
			r := must(c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{map[string]any{"title": "z"}}}), 202)
			if r.Map(t)["queued"] != "z" {
				t.Fatalf("answer = %s", r.Body)
			}
			if n := count(must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200)); n != 3 {
				t.Fatalf("the backend was reached: %d records", n)
			}
		})
		t.Run("abort, error, time limit", func(t *testing.T) {
			for _, tc := range []struct {
				script, msg string
				status      int
			}{
				{`error({status_code = 403, message = "Todos are closed."})`, "Todos are closed.", 403},
				{`local x = nil; return x.y`, "Script error:", 500},
				{`while true do end`, "Script error: time limit exceeded", 500},
				{`io.open("/etc/passwd")`, "Script error:", 500},
			} {
				set("db._table.{table_name}.{id}.get.pre_process", tc.script, false)
				r := must(c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), tc.status)
				msg := r.Map(t)["error"].(map[string]any)["message"].(string)
				if !strings.HasPrefix(msg, tc.msg) {
					t.Errorf("%s: message %q, want %q", tc.script, msg, tc.msg)
				}
				drop("db._table.{table_name}.{id}.get.pre_process")
			}
		})
		t.Run("platform.api and self-recursion", func(t *testing.T) {
			set("db._table.todo.{id}.get.pre_process", `
				local r = platform.api.get("db/_table/todo?limit=2")
				event.response = {content = {n = #r.content.resource, s = r.status_code}}`, true)
			r := must(c.Do(t, "GET", "/api/v2/db/_table/todo/1", nil), 200)
			if m := r.Map(t); fmt.Sprint(m["n"], m["s"]) != "2 200" {
				t.Fatalf("inner call: %s", r.Body)
			}
			drop("db._table.todo.{id}.get.pre_process")
			set("db._table.todo.get.pre_process", `
				local r = platform.api.get("db/_table/todo")
				if r.status_code ~= 200 then error({status_code = r.status_code, message = r.content.error.message}) end`, false)
			defer drop("db._table.todo.get.pre_process")
			r = must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 500)
			if !strings.Contains(string(r.Body), "nested more than") {
				t.Fatalf("recursion: %s", r.Body)
			}
		})
		t.Run("syntax error refused on save", func(t *testing.T) {
			r := must(c.Do(t, "POST", "/api/v2/system/event_script/db._table.todo.get.pre_process",
				map[string]any{"type": "lua", "content": "x = 1\nif then"}), 400)
			if !strings.Contains(string(r.Body), "line") {
				t.Fatalf("error does not name the line: %s", r.Body)
			}
		})
		_ = http.MethodGet
	})
}

// mustStatus returns a check that a response has the status wanted (the
// test fails at once otherwise) and passes the response on.
func mustStatus(t *testing.T) func(r *proxytest.Response, want int) *proxytest.Response {
	return func(r *proxytest.Response, want int) *proxytest.Response {
		t.Helper()
		if r.Status != want {
			t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
		}
		return r
	}
}
