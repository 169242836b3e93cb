package script_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/script"
)

func runJS(t *testing.T, typ, src string, ev map[string]any, timeout time.Duration) (script.Result, error) {
	t.Helper()
	e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: typ, Content: src, AllowModification: true}},
		script.Options{Timeout: timeout})
	res, ok, err := e.Run(context.Background(), "db._table.t.get.pre_process", ev, &fakePlatform{})
	if !ok {
		t.Fatal("script not found")
	}
	return res, err
}

func TestJavaScript(t *testing.T) {
	ev := func() map[string]any {
		return map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"},
			"payload": map[string]any{"resource": []any{}}}}
	}
	tests := []struct {
		name    string
		src     string
		check   func(t *testing.T, res script.Result)
		wantErr string // substring of the error; "abort:403:…" for an Abort
	}{
		{name: "modify request", src: `event.request.parameters.limit = "1"; event.request.parameters.extra = "x"`,
			check: func(t *testing.T, res script.Result) {
				p := res.Request["parameters"].(map[string]any)
				if p["limit"] != "1" || p["extra"] != "x" {
					t.Errorf("parameters = %v", p)
				}
				if got := res.Request["payload"].(map[string]any)["resource"]; !reflect.DeepEqual(got, []any{}) {
					t.Errorf("empty array came back as %#v", got)
				}
			}},
		{name: "answer", src: `event.response = {status_code: 201, content: {ok: true, n: 2.5, d: new Date(0), f: function () {}, u: undefined}}`,
			check: func(t *testing.T, res script.Result) {
				want := map[string]any{"ok": true, "n": 2.5, "d": "1970-01-01T00:00:00Z"}
				if res.Response["status_code"] != int64(201) || !reflect.DeepEqual(res.Response["content"], want) {
					t.Errorf("response = %#v", res.Response)
				}
			}},
		{name: "return value answers", src: `return {content: [1, "a", null]}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], []any{int64(1), "a", nil}) {
					t.Errorf("response = %#v", res.Response)
				}
			}},
		{name: "platform api and session", src: `var r = platform.api.get("db/_table/x?limit=1");
			event.response = {content: {s: r.status_code, id: r.content.resource[0].id, u: platform.session.user.id}}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], map[string]any{"s": int64(200), "id": int64(1), "u": int64(7)}) {
					t.Errorf("response = %v", res.Response)
				}
			}},
		{name: "modern syntax", src: `const {parameters: {limit}} = event.request; let xs = [1, 2].map(x => x * 2);
			event.response = {content: {limit, xs, s: ` + "`${limit}!`" + `}}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], map[string]any{"limit": "5", "xs": []any{int64(2), int64(4)}, "s": "5!"}) {
					t.Errorf("response = %v", res.Response)
				}
			}},
		{name: "abort", src: `throw {status_code: 403, message: "no"}`, wantErr: "abort:403:no"},
		{name: "abort with code", src: `throw {code: 409, message: "taken"}`, wantErr: "abort:409:taken"},
		{name: "abort without status", src: `throw {message: "hm"}`, wantErr: "abort:500:hm"},
		{name: "error object", src: `throw new Error("boom")`, wantErr: "Script error: Error: boom"},
		{name: "runtime error", src: `var x = null; return x.y`, wantErr: "Script error: TypeError"},
		{name: "syntax error", src: `if (`, wantErr: "Script error: syntax error: Line"},
		{name: "time limit", src: `while (true) {}`, wantErr: "Script error: time limit exceeded"},
		{name: "time limit in catch-all", src: `for (;;) { try { while (true) {} } catch (e) {} }`, wantErr: "Script error: time limit exceeded"},
		{name: "recursion", src: `function f() { return 1 + f() } f()`, wantErr: "Script error: stack overflow"},
		{name: "repeat capped", src: `"x".repeat(1e9)`, wantErr: "RangeError"},
		{name: "padStart capped", src: `"x".padStart(1e9)`, wantErr: "RangeError"},
		{name: "join capped", src: `new Array(1e9).join("x")`, wantErr: "RangeError"},
		{name: "fill capped", src: `new Array(1e9).fill(0)`, wantErr: "RangeError"},
		{name: "Array.from capped", src: `Array.from({length: 1e9})`, wantErr: "RangeError"},
		{name: "no ArrayBuffer", src: `new ArrayBuffer(1e10)`, wantErr: "ReferenceError"},
		{name: "no typed arrays", src: `new Uint8Array(1e10)`, wantErr: "ReferenceError"},
		{name: "no require", src: `require("fs")`, wantErr: "ReferenceError: require is not defined"},
		{name: "no process", src: `process.exit(1)`, wantErr: "ReferenceError: process is not defined"},
		{name: "no fetch", src: `fetch("http://127.0.0.1/")`, wantErr: "ReferenceError: fetch is not defined"},
		{name: "no XMLHttpRequest", src: `new XMLHttpRequest()`, wantErr: "ReferenceError: XMLHttpRequest is not defined"},
		{name: "no import", src: `import("fs")`, wantErr: "Script error:"},
		{name: "no setTimeout", src: `setTimeout(function () {}, 1)`, wantErr: "ReferenceError: setTimeout is not defined"},
		{name: "Function constructor sees no host", src: `var g = Function("return this")();
			if (g.require || g.process || g.fs || g.fetch || g.os) throw {status_code: 418, message: "escaped"};
			throw {status_code: 409, message: Object.getOwnPropertyNames(g).filter(n => !/^[A-Z]/.test(n)).sort().join(",")}`,
			wantErr: "abort:409:decodeURI,decodeURIComponent,encodeURI,encodeURIComponent,escape,eval,globalThis,isFinite,isNaN,parseFloat,parseInt,undefined,unescape"},
		{name: "eval sees no host", src: `eval("typeof require + typeof process + typeof module + typeof exports")`, check: func(*testing.T, script.Result) {}},
		{name: "constructor chain sees no host", src: `var F = (function () {}).constructor; return {content: F("return typeof require + typeof process")()}`,
			check: func(t *testing.T, res script.Result) {
				if res.Response["content"] != "undefinedundefined" {
					t.Errorf("content = %v", res.Response["content"])
				}
			}},
		{name: "builtins frozen", src: `"use strict"; Array.prototype.push = function () { return "pwned" }`, wantErr: "TypeError"},
		{name: "global frozen", src: `"use strict"; globalThis.leaked = 1`, wantErr: "TypeError"},
		{name: "cyclic event", src: `event.request.self = event.request`, wantErr: "nested too deeply"},
	}
	for _, typ := range []string{"javascript", "v8js"} {
		for _, tt := range tests {
			t.Run(typ+"/"+tt.name, func(t *testing.T) {
				// A short limit for the scripts that reach it, a generous
				// one for the others (the race detector is slow).
				limit := 5 * time.Second
				if strings.Contains(tt.wantErr, "time limit") {
					limit = 200 * time.Millisecond
				}
				res, err := runJS(t, typ, tt.src, ev(), limit)
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("error: %v", err)
					}
					tt.check(t, res)
					return
				}
				var a *script.Abort
				msg := ""
				if errors.As(err, &a) {
					msg = "abort:" + itoa(a.Status) + ":" + a.Message
				} else if err != nil {
					msg = err.Error()
				}
				if !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("error = %q, want %q", msg, tt.wantErr)
				}
			})
		}
	}
	// The builtins are untouched for the next run, whatever the last one
	// tried (sloppy mode: the writes fail silently).
	if _, err := runJS(t, "javascript", `Array.prototype.push = function () { return "pwned" }; String.prototype.toUpperCase = null;
		Object.prototype.polluted = 1; leaked = 1; Object.getPrototypeOf(function* () {}).pwned = 1`, ev(), time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := runJS(t, "javascript", `var a = []; a.push(1);
		return {content: [a.length, "a".toUpperCase(), typeof ({}).polluted, typeof leaked, typeof Object.getPrototypeOf(function* () {}).pwned]}`,
		ev(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(1), "A", "undefined", "undefined", "undefined"}; !reflect.DeepEqual(res.Response["content"], want) {
		t.Fatalf("after tampering: %v, want %v", res.Response["content"], want)
	}
	// platform.api is shared by the runs of one runtime, and frozen.
	if _, err := runJS(t, "javascript", `platform.api.get = null; platform.api.evil = 1`, ev(), time.Second); err != nil {
		t.Fatal(err)
	}
	res, err = runJS(t, "javascript", `return {content: [typeof platform.api.get, typeof platform.api.evil]}`, ev(), time.Second)
	if err != nil || !reflect.DeepEqual(res.Response["content"], []any{"function", "undefined"}) {
		t.Fatalf("after tampering with platform.api: %v %v", res.Response, err)
	}
	// Without allow_event_modification the result is not read back.
	e := script.New([]script.Script{{Name: "n", Type: "javascript", Content: `event.request.x = 1; return {content: 1}`}}, script.Options{})
	res, _, err = e.Run(context.Background(), "n", ev(), nil)
	if err != nil || res.Request != nil || res.Response != nil {
		t.Fatalf("read-only run: %+v %v", res, err)
	}
	// A script's changes stay in its run: the caller's event is untouched.
	in := ev()
	if _, err := runJS(t, "javascript", `event.request.parameters.limit = "1"`, in, time.Second); err != nil {
		t.Fatal(err)
	}
	if in["request"].(map[string]any)["parameters"].(map[string]any)["limit"] != "5" {
		t.Fatal("the script changed the caller's event in place")
	}
}

func TestJavaScriptHeapGrowth(t *testing.T) {
	old := script.SetJSHeapLimit(script.HeapInUse() + 64<<20)
	defer script.SetJSHeapLimit(old)
	// Doubling a string runs few instructions; the time limit alone would
	// let it take the process's memory. The watchdog ends it.
	_, err := runJS(t, "javascript", `var s = "x"; for (;;) s += s`, nil, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "Script error: memory limit exceeded") {
		t.Fatalf("error = %v, want the memory limit", err)
	}
}

func TestCheckJavaScript(t *testing.T) {
	tests := []struct{ typ, src, want string }{
		{"javascript", "var x = 1;\nif (x {\n}", "Line 2:"},
		{"v8js", "return 1 +", "Line 1:"},
		{"javascript", "return event.request", ""},
		{"lua", "if then", "line"},
	}
	for _, tt := range tests {
		err := script.Check(tt.typ, tt.src)
		if tt.want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v", tt.src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%s, %q) = %v, want %q", tt.typ, tt.src, err, tt.want)
		}
	}
}

// sessionPlatform answers platform.session with a user id of its own.
type sessionPlatform struct {
	fakePlatform
	user int
}

func (s *sessionPlatform) Session() map[string]any {
	return map[string]any{"user": map[string]any{"id": s.user}}
}

// TestJavaScriptEventObject covers the event object a run builds: parts
// converted on first read, replaced, deleted or enumerated as plain
// properties; parts the script never touched come back as they were; the
// shared platform object and the wrapper function keep no state between
// runs.
func TestJavaScriptEventObject(t *testing.T) {
	ev := func() map[string]any {
		return map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"}},
			"resource": "_table/t", "response": map[string]any{"status_code": 200, "content": map[string]any{"n": 1.5}}}
	}
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, res script.Result)
	}{
		{name: "replace before reading", src: `event.request = {method: "POST"}; event.request.x = 1`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Request, map[string]any{"method": "POST", "x": int64(1)}) {
					t.Errorf("request = %#v", res.Request)
				}
			}},
		{name: "delete", src: `delete event.request; if ("request" in event) throw {status_code: 409, message: "still there"}`,
			check: func(t *testing.T, res script.Result) {
				if res.Request != nil {
					t.Errorf("request = %#v", res.Request)
				}
			}},
		{name: "enumerate and stringify", src: `return {content: [Object.keys(event).sort().join(","), JSON.stringify(event.request),
			event.request === event.request, typeof event.resource, Object.getOwnPropertyDescriptor(event, "request").writable]}`,
			check: func(t *testing.T, res script.Result) {
				want := []any{"request,resource,response", `{"method":"GET","parameters":{"limit":"5"}}`, true, "string", true}
				if !reflect.DeepEqual(res.Returned.(map[string]any)["content"], want) {
					t.Errorf("content = %#v", res.Returned)
				}
			}},
		{name: "frozen event still reads", src: `Object.freeze(event); event.response.content.n = 2; return {content: event.request.parameters.limit}`,
			check: func(t *testing.T, res script.Result) {
				if res.Response["content"] != "5" {
					t.Errorf("response = %#v", res.Response)
				}
			}},
		{name: "untouched parts come back as they were", src: `event.resource = "x"`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Request, ev()["request"]) || !reflect.DeepEqual(res.Response, ev()["response"]) {
					t.Errorf("result = %#v", res)
				}
			}},
		{name: "read parts convert", src: `event.response.content.n += 1`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response, map[string]any{"status_code": int64(200), "content": map[string]any{"n": 2.5}}) {
					t.Errorf("response = %#v", res.Response)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runJS(t, "javascript", tt.src, ev(), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res)
		})
	}

	// The wrapper function is shared by the runs of a script, and frozen.
	e := script.New([]script.Script{{Name: "n", Type: "javascript", AllowModification: true,
		Content: `var f = arguments.callee; f.n = (f.n || 0) + 1; f.prototype.x = 1; return {content: [typeof f.n, typeof f.prototype.x]}`}}, script.Options{})
	for i := range 3 {
		res, _, err := e.Run(context.Background(), "n", ev(), nil)
		if err != nil || !reflect.DeepEqual(res.Response["content"], []any{"undefined", "undefined"}) {
			t.Fatalf("run %d: %v %v", i, res.Response, err)
		}
	}
	// platform.session is the run's own; platform itself is frozen.
	e = script.New([]script.Script{{Name: "n", Type: "javascript", AllowModification: true,
		Content: `platform.session.user.seen = true; platform.session = null; platform.extra = 1;
			return {content: [platform.session.user.id, platform.session.user.seen, typeof platform.extra]}`}}, script.Options{})
	for _, user := range []int{1, 2, 1} {
		res, _, err := e.Run(context.Background(), "n", ev(), &sessionPlatform{user: user})
		if err != nil || !reflect.DeepEqual(res.Response["content"], []any{int64(user), true, "undefined"}) {
			t.Fatalf("user %d: %v %v", user, res.Response, err)
		}
	}
}

// TestJavaScriptAbortKeepsRuntime: a script that throws (an abort, a
// TypeError) leaves its runtime in the pool; one that is interrupted
// makes its run build the replacement, not the next run.
func TestJavaScriptAbortKeepsRuntime(t *testing.T) {
	if _, err := runJS(t, "javascript", `return 1`, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	before := script.JSSandboxesBuilt()
	for _, src := range []string{`throw {status_code: 403, message: "no"}`, `null.x`, `throw new Error("e")`} {
		for range 5 {
			if _, err := runJS(t, "javascript", src, nil, 5*time.Second); err == nil {
				t.Fatalf("%s: no error", src)
			}
		}
	}
	if n := script.JSSandboxesBuilt() - before; n != 0 {
		t.Fatalf("%d sandboxes built for scripts that threw", n)
	}
	if _, err := runJS(t, "javascript", `for (;;) {}`, nil, 50*time.Millisecond); err == nil {
		t.Fatal("no time limit")
	}
	after := script.JSSandboxesBuilt()
	if after-before != 1 {
		t.Fatalf("%d sandboxes built after an interrupt, want 1", after-before)
	}
	if _, err := runJS(t, "javascript", `return 1`, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if script.JSSandboxesBuilt() != after {
		t.Fatal("the run after an interrupt built a sandbox")
	}
}
