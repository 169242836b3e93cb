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
	}
	for _, tt := range tests {
		if got := script.Names(tt.svc, tt.res, tt.verb, tt.phase); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Names(%s, %s) = %v, want %v", tt.svc, tt.res, got, tt.want)
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
