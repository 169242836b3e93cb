package script_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/script"
)

type fakePlatform struct{ calls []string }

func (f *fakePlatform) API(_ context.Context, method, path string, payload any) (int, any, error) {
	f.calls = append(f.calls, method+" "+path)
	return 200, map[string]any{"resource": []any{map[string]any{"id": 1}}}, nil
}

func (f *fakePlatform) Session() map[string]any {
	return map[string]any{"user": map[string]any{"id": 7}}
}

func run(t *testing.T, src string, ev map[string]any, timeout time.Duration) (script.Result, error) {
	t.Helper()
	e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: "lua", Content: src, AllowModification: true}},
		script.Options{Timeout: timeout})
	res, ok, err := e.Run(context.Background(), "db._table.t.get.pre_process", ev, &fakePlatform{})
	if !ok {
		t.Fatal("script not found")
	}
	return res, err
}

func TestLua(t *testing.T) {
	ev := func() map[string]any {
		return map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"},
			"payload": map[string]any{"resource": []any{}}}}
	}
	tests := []struct {
		name    string
		src     string
		check   func(t *testing.T, res script.Result)
		wantErr string // substring of the error; "abort:403" for an Abort
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
		{name: "answer", src: `event.response = {status_code = 201, content = {ok = true, n = 2.5}}`,
			check: func(t *testing.T, res script.Result) {
				if res.Response["status_code"] != int64(201) || !reflect.DeepEqual(res.Response["content"], map[string]any{"ok": true, "n": 2.5}) {
					t.Errorf("response = %v", res.Response)
				}
			}},
		{name: "platform api and session", src: `local r = platform.api.get("db/_table/x?limit=1")
			event.response = {content = {s = r.status_code, id = r.content.resource[1].id, u = platform.session.user.id}}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], map[string]any{"s": int64(200), "id": int64(1), "u": int64(7)}) {
					t.Errorf("response = %v", res.Response)
				}
			}},
		{name: "abort", src: `error({status_code = 403, message = "no"})`, wantErr: "abort:403:no"},
		{name: "runtime error", src: `local x = nil; return x.y`, wantErr: "Script error:"},
		{name: "syntax error", src: `if then`, wantErr: "Script error: syntax error"},
		{name: "time limit", src: `while true do end`, wantErr: "Script error: time limit exceeded"},
		{name: "allocation loop", src: `local s = "x"; while true do s = s .. s end`, wantErr: "Script error:"},
		{name: "recursion", src: `local function f() return 1 + f() end; f()`, wantErr: "Script error:"},
		{name: "string.rep capped", src: `string.rep("x", 1e9)`, wantErr: "larger than"},
		{name: "no require", src: `require("os")`, wantErr: "Script error:"},
		{name: "no io", src: `io.open("/etc/passwd")`, wantErr: "Script error:"},
		{name: "no os", src: `os.execute("true")`, wantErr: "Script error:"},
		{name: "no dofile", src: `dofile("/etc/passwd")`, wantErr: "Script error:"},
		{name: "no loadstring", src: `loadstring("return 1")()`, wantErr: "Script error:"},
		{name: "library read-only", src: `string.upper = function() return "pwned" end`, wantErr: "read-only"},
		{name: "no string metatable", src: `getmetatable("").__index.upper = nil`, wantErr: "Script error:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, tt.src, ev(), 200*time.Millisecond)
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
	// The libraries are untouched for the next run.
	res, err := run(t, `event.response = {content = string.upper("a")}`, ev(), time.Second)
	if err != nil || res.Response["content"] != "A" {
		t.Fatalf("after tampering: %v %v", res.Response, err)
	}
	// Globals do not leak between runs.
	if _, err := run(t, `leaked = 1`, ev(), time.Second); err != nil {
		t.Fatal(err)
	}
	res, err = run(t, `event.response = {content = tostring(leaked)}`, ev(), time.Second)
	if err != nil || res.Response["content"] != "nil" {
		t.Fatalf("leak: %v %v", res.Response, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestNames(t *testing.T) {
	tests := []struct {
		svc, res, verb string
		phase          script.Phase
		want           []string
	}{
		{"db", "_table/contact", "GET", script.Pre, []string{"db._table.{table_name}.get.pre_process", "db._table.contact.get.pre_process"}},
		{"db", "_table/contact/5", "PATCH", script.Post, []string{"db._table.{table_name}.{id}.patch.post_process", "db._table.contact.{id}.patch.post_process"}},
		{"db", "_table", "GET", script.Pre, []string{"db._table.get.pre_process"}},
		{"db", "_proc/p", "POST", "", []string{"db._proc.{procedure_name}.post", "db._proc.p.post"}},
		{"system", "role", "POST", script.Pre, []string{"system.role.post.pre_process"}},
		{"api", "", "GET", script.Pre, []string{"api.get.pre_process"}},
		{"db", "/_table//contact/", "get", script.Queued, []string{"db._table.{table_name}.get.queued", "db._table.contact.get.queued"}},
		{"files", "a//b/c", "DELETE", script.Pre, []string{"files.a.b.c.delete.pre_process"}},
		{"db", "_func/f/x/y", "GET", "", []string{"db._func.{function_name}.{id}.get", "db._func.f.{id}.get"}},
	}
	for _, tt := range tests {
		if got := script.Names(tt.svc, tt.res, tt.verb, tt.phase); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Names(%s, %s) = %v, want %v", tt.svc, tt.res, got, tt.want)
		}
		// Fired finds the scripts at those names, in that order.
		var scripts []script.Script
		for i := len(tt.want) - 1; i >= 0; i-- {
			scripts = append(scripts, script.Script{Name: tt.want[i], Type: "lua"})
		}
		e := script.New(scripts, script.Options{})
		pre, post, queued := e.Fired(nil, tt.svc, tt.res, tt.verb)
		fired := map[script.Phase][]script.Script{script.Pre: pre, script.Post: post, "": post, script.Queued: queued}[tt.phase]
		var got []string
		for _, sc := range fired {
			got = append(got, sc.Name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Fired(%s, %s) %s = %v, want %v", tt.svc, tt.res, tt.phase, got, tt.want)
		}
		if pre, post, queued := e.Fired(make([]script.Script, 8), tt.svc+"x", tt.res, tt.verb); len(pre)+len(post)+len(queued) != 0 {
			t.Errorf("Fired of another service = %v %v %v", pre, post, queued)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := script.Check("lua", "if then"); err == nil || !strings.Contains(err.Error(), "line") {
		t.Fatalf("Check = %v, want a syntax error naming the line", err)
	}
	if err := script.Check("lua", "return 1"); err != nil {
		t.Fatal(err)
	}
}

// TestLuaLazyEvent checks that the event, converted to Lua only where the
// script reads it, looks whole to every way of reading a table, and that
// a part the script never read comes back as nil (unchanged).
func TestLuaLazyEvent(t *testing.T) {
	ev := func() map[string]any {
		return map[string]any{"resource": "_table/t", "request": map[string]any{"method": "GET",
			"parameters": map[string]any{"limit": "5", "filter": "a=1"},
			"headers":    map[string]any{"accept": "application/json"},
			"payload":    map[string]any{"resource": []any{map[string]any{"id": 1.0, "name": "x"}}}}}
	}
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, res script.Result)
	}{
		{name: "untouched", src: ``, check: func(t *testing.T, res script.Result) {
			if res.Request != nil || res.Response != nil {
				t.Errorf("untouched event came back: %v %v", res.Request, res.Response)
			}
		}},
		{name: "pairs sees every key", src: `local n = 0
			for k, v in pairs(event.request.parameters) do n = n + 1 end
			local m = 0
			for k in pairs(event.request) do m = m + 1 end
			event.response = {content = {n = n, m = m}}`, check: func(t *testing.T, res script.Result) {
			if !reflect.DeepEqual(res.Response["content"], map[string]any{"n": int64(2), "m": int64(4)}) {
				t.Errorf("content = %v", res.Response["content"])
			}
		}},
		{name: "next rawget setmetatable", src: `local p = event.request.parameters
			local k = next(event.request.headers)
			local r = rawget(p, "limit")
			local q = setmetatable(event.request.payload, {__index = function() return "dflt" end})
			event.response = {content = {k = k, r = r, d = q.missing, res = q.resource[1].name}}`,
			check: func(t *testing.T, res script.Result) {
				want := map[string]any{"k": "accept", "r": "5", "d": "dflt", "res": "x"}
				if !reflect.DeepEqual(res.Response["content"], want) {
					t.Errorf("content = %v", res.Response["content"])
				}
			}},
		{name: "set before read", src: `event.request.parameters.limit = nil; event.request.headers = nil
			event.request.parameters.extra = event.request.parameters.limit or "none"`,
			check: func(t *testing.T, res script.Result) {
				if p := res.Request["parameters"]; !reflect.DeepEqual(p, map[string]any{"filter": "a=1", "extra": "none"}) {
					t.Errorf("parameters = %v", p)
				}
				if _, has := res.Request["headers"]; has {
					t.Errorf("headers came back: %v", res.Request["headers"])
				}
				if res.Request["method"] != "GET" || res.Request["payload"] == nil {
					t.Errorf("request = %v", res.Request)
				}
			}},
		{name: "nested change", src: `event.request.payload.resource[1].name = "y"`,
			check: func(t *testing.T, res script.Result) {
				rec := res.Request["payload"].(map[string]any)["resource"].([]any)[0]
				if !reflect.DeepEqual(rec, map[string]any{"id": 1.0, "name": "y"}) && !reflect.DeepEqual(rec, map[string]any{"id": int64(1), "name": "y"}) {
					t.Errorf("record = %#v", rec)
				}
			}},
		{name: "return a part", src: `return {content = event.request.parameters}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], map[string]any{"limit": "5", "filter": "a=1"}) {
					t.Errorf("response = %v", res.Response)
				}
			}},
		{name: "main chunk varargs", src: `event.response = {content = {n = select("#", ...), arg = type(arg)}}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], map[string]any{"n": int64(0), "arg": "nil"}) {
					t.Errorf("content = %v", res.Response["content"])
				}
			}},
		{name: "platform session read whole", src: `local n = 0
			for k in pairs(platform) do n = n + 1 end
			event.response = {content = {n = n, u = platform.session.user.id, api = type(platform.api.get)}}`,
			check: func(t *testing.T, res script.Result) {
				if !reflect.DeepEqual(res.Response["content"], map[string]any{"n": int64(2), "u": int64(7), "api": "function"}) {
					t.Errorf("content = %v", res.Response["content"])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, tt.src, ev(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res)
		})
	}
	// An abort table read from the event.
	ab := map[string]any{"request": map[string]any{"payload": map[string]any{"status_code": 409.0, "message": "taken"}}}
	_, err := run(t, `error(event.request.payload)`, ab, time.Second)
	var a *script.Abort
	if !errors.As(err, &a) || a.Status != 409 || a.Message != "taken" {
		t.Fatalf("abort from the event: %v", err)
	}
}

// TestLuaRunsIsolated checks that nothing of one run reaches the next on
// the same pooled state: its event, its session, the globals it set, the
// platform and api tables it tried to change.
func TestLuaRunsIsolated(t *testing.T) {
	e := script.New([]script.Script{
		{Name: "a", Type: "lua", AllowModification: true, Content: `
			secret = event.request.payload.secret
			saved_event = event
			saved_session = platform.session
			platform.extra = "leak"
			event.request.payload.seen = true
			pcall(function() platform.api.get = nil end)`},
		{Name: "b", Type: "lua", AllowModification: true, Content: `
			event.response = {content = {secret = tostring(secret), ev = tostring(saved_event), sess = tostring(saved_session),
				extra = tostring(platform.extra), payload = event.request.payload, user = platform.session.user and platform.session.user.id,
				get = type(platform.api.get)}}`},
	}, script.Options{})
	ctx := context.Background()
	for i := 0; i < 20; i++ { // the pool hands back the same state (or another: either way nothing leaks)
		ev := map[string]any{"request": map[string]any{"payload": map[string]any{"secret": "s3cr3t"}}}
		if _, _, err := e.Run(ctx, "a", ev, &fakePlatform{}); err != nil {
			t.Fatal(err)
		}
		ev = map[string]any{"request": map[string]any{"payload": map[string]any{"other": "x"}}}
		res, _, err := e.Run(ctx, "b", ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"secret": "nil", "ev": "nil", "sess": "nil", "extra": "nil",
			"payload": map[string]any{"other": "x"}, "get": "function"}
		if got := res.Response["content"]; !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d saw the previous one: %v", i, got)
		}
	}
}

// lazyParams is a script.Lazy that counts its builds.
type lazyParams struct{ n *int }

func (l lazyParams) Value() any { *l.n++; return map[string]any{"limit": "5"} }

// TestLazyParts checks that a script.Lazy part of the event is built only
// when a Lua script reads it, comes back built, and reaches the other
// engines built.
func TestLazyParts(t *testing.T) {
	n := 0
	ev := func() map[string]any {
		return map[string]any{"request": map[string]any{"method": "GET", "parameters": lazyParams{&n}}}
	}
	ro := script.New([]script.Script{{Name: "x", Type: "lua", Content: `local m = event.request.method`}}, script.Options{})
	if _, _, err := ro.Run(context.Background(), "x", ev(), nil); err != nil || n != 0 {
		t.Fatalf("built %d times (err %v), want 0", n, err)
	}
	res, err := run(t, `event.request.method = "POST"`, ev(), time.Second)
	if err != nil || !reflect.DeepEqual(res.Request["parameters"], map[string]any{"limit": "5"}) {
		t.Fatalf("request = %v (err %v)", res.Request, err)
	}
	res, err = run(t, `event.request.parameters.limit = event.request.parameters.limit .. "0"`, ev(), time.Second)
	if err != nil || !reflect.DeepEqual(res.Request["parameters"], map[string]any{"limit": "50"}) {
		t.Fatalf("request = %v (err %v)", res.Request, err)
	}
	e := script.New([]script.Script{{Name: "x", Type: "javascript", AllowModification: true,
		Content: `event.request.parameters.limit += "1"`}}, script.Options{Timeout: 5 * time.Second})
	res, _, err = e.Run(context.Background(), "x", ev(), nil)
	if err != nil || !reflect.DeepEqual(res.Request["parameters"], map[string]any{"limit": "51"}) {
		t.Fatalf("javascript: request = %v (err %v)", res.Request, err)
	}
}
