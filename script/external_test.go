package script_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/script"
)

// externalEngines are the external engines with the variable that names
// their interpreter in tests.
var externalEngines = []struct{ typ, env string }{
	{"nodejs", "PORTCULLIS_TEST_NODE"},
	{"python3", "PORTCULLIS_TEST_PYTHON"},
	{"php", "PORTCULLIS_TEST_PHP"},
}

// useInterpreter points typ at the interpreter named by env, or skips.
func useInterpreter(t testing.TB, typ, env string) {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		t.Skipf("%s is not set: the %s engine is not tested (set it to the interpreter binary)", env, typ)
	}
	if err := script.SetInterpreter(typ, bin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = script.SetInterpreter(typ, "") })
}

// extCase is one behaviour, with its source in each engine.
type extCase struct {
	name    string
	src     map[string]string
	check   func(t *testing.T, res script.Result, p *fakePlatform)
	wantErr string // substring of the error; "abort:403" for an Abort
}

func TestExternalEngines(t *testing.T) {
	// A listener the network escape tries to reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	victim := filepath.Join(dir, "written")
	ps := func(s string) string {
		return strings.NewReplacer("PORT", strconv.Itoa(port), "VICTIM", victim).Replace(s)
	}

	cases := []extCase{
		{name: "modify request", src: map[string]string{
			"nodejs":  `event.request.parameters.limit = "1"; event.request.parameters.extra = "x";`,
			"python3": "event.request.parameters['limit'] = '1'\nevent.request.parameters.extra = 'x'",
			"php":     `$event['request']['parameters']['limit'] = '1'; $event['request']['parameters']['extra'] = 'x';`,
		}, check: func(t *testing.T, res script.Result, _ *fakePlatform) {
			p := res.Request["parameters"].(map[string]any)
			if p["limit"] != "1" || p["extra"] != "x" {
				t.Errorf("parameters = %v", p)
			}
			if _, ok := res.Request["headers"].(map[string]any); !ok {
				t.Errorf("empty headers object came back as %#v", res.Request["headers"])
			}
		}},
		{name: "answer with event.response", src: map[string]string{
			"nodejs":  `event.response = {status_code: 201, content: {ok: true, n: 2.5, id: 9007199254740993}};`,
			"python3": `event.response = {"status_code": 201, "content": {"ok": True, "n": 2.5, "id": 9007199254740993}}`,
			"php":     `$event['response'] = ['status_code' => 201, 'content' => ['ok' => true, 'n' => 2.5, 'id' => 9007199254740993]];`,
		}, check: func(t *testing.T, res script.Result, _ *fakePlatform) {
			c, _ := res.Response["content"].(map[string]any)
			if res.Response["status_code"] != int64(201) || c["ok"] != true || c["n"] != 2.5 {
				t.Errorf("response = %#v", res.Response)
			}
			if t.Name() != "TestExternalEngines/nodejs/answer_with_event.response" && c["id"] != int64(9007199254740993) {
				t.Errorf("a large integer came back as %#v", c["id"])
			}
		}},
		{name: "answer by returning", src: map[string]string{
			"nodejs":  `return {status_code: 202, content: {n: event.request.payload.resource.length}};`,
			"python3": `return {"status_code": 202, "content": {"n": len(event.request.payload.resource)}}`,
			"php":     `return ['status_code' => 202, 'content' => ['n' => count($event['request']['payload']['resource'])]];`,
		}, check: func(t *testing.T, res script.Result, _ *fakePlatform) {
			if res.Response["status_code"] != int64(202) || res.Response["content"].(map[string]any)["n"] != int64(0) {
				t.Errorf("response = %#v", res.Response)
			}
		}},
		{name: "platform.api and session", src: map[string]string{
			"nodejs":  `const r = platform.api.post("db/_table/x", {a: 1}); event.response = {content: {s: r.status_code, id: r.content.resource[0].id, u: platform.session.user.id}};`,
			"python3": "r = platform.api.post('db/_table/x', {'a': 1})\nevent.response = {'content': {'s': r.status_code, 'id': r.content.resource[0].id, 'u': platform.session.user.id}}",
			"php":     `$r = $platform['api']->post('db/_table/x', ['a' => 1]); $event['response'] = ['content' => ['s' => $r['status_code'], 'id' => $r['content']['resource'][0]['id'], 'u' => $platform['session']['user']['id']]];`,
		}, check: func(t *testing.T, res script.Result, p *fakePlatform) {
			c, _ := res.Response["content"].(map[string]any)
			if c["s"] != int64(200) || c["id"] != int64(1) || c["u"] != int64(7) {
				t.Errorf("content = %#v", c)
			}
			if len(p.calls) != 1 || p.calls[0] != "POST db/_table/x" {
				t.Errorf("calls = %v", p.calls)
			}
		}},
		{name: "abort", src: map[string]string{
			"nodejs":  `throw {status_code: 403, message: "Todos are closed."};`,
			"python3": `raise ScriptAbort(403, "Todos are closed.")`,
			"php":     `throw new ScriptAbort(403, "Todos are closed.");`,
		}, wantErr: "abort:403"},
		{name: "runtime error", src: map[string]string{
			"nodejs":  "const x = null;\nx.y;",
			"python3": "x = None\nx.y",
			"php":     "$x = null;\n$x->y();",
		}, wantErr: "line 2"},
		{name: "syntax error", src: map[string]string{
			"nodejs":  "if (",
			"python3": "if (",
			"php":     "if (",
		}, wantErr: "syntax error"},
		{name: "file read", src: map[string]string{
			"nodejs":  `return {content: event.constructor.constructor("return process")().mainModule.require("fs").readFileSync("/etc/passwd", "utf8")};`,
			"python3": `s = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"][0]; return {"content": s.__init__.__globals__["open"]("/etc/passwd", 0)}`,
			"php":     `return ['content' => include('/etc/passwd')];`,
		}, wantErr: "Script error"},
		{name: "file write", src: map[string]string{
			"nodejs":  ps(`const p = platform.api.get.constructor("return process")(); p.binding("fs").writeString("VICTIM", "x");`),
			"python3": ps(`s = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"][0]; s.__init__.__globals__["open"]("VICTIM", 577)`),
			"php":     ps(`file_put_contents("VICTIM", "x");`),
		}, wantErr: "Script error"},
		{name: "process", src: map[string]string{
			"nodejs":  `return require("child_process").execSync("id").toString();`,
			"python3": `s = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"][0]; s.__init__.__globals__["system"]("id")`,
			"php":     "return `id`;",
		}, wantErr: "Script error"},
		{name: "network", src: map[string]string{
			"nodejs":  ps(`await fetch("http://127.0.0.1:PORT/");`),
			"python3": ps("import socket\nsocket.create_connection(('127.0.0.1', PORT))"),
			"php":     ps(`fsockopen("127.0.0.1", PORT);`),
		}, wantErr: "Script error"},
		{name: "import", src: map[string]string{
			"nodejs":  `return require("os").hostname();`,
			"python3": "import os\nreturn os.getcwd()",
			"php":     `return getenv("PATH");`,
		}, wantErr: "Script error"},
	}
	ev := func() map[string]any {
		return map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"},
			"headers": map[string]any{}, "payload": map[string]any{"resource": []any{}}}}
	}
	for _, eng := range externalEngines {
		t.Run(eng.typ, func(t *testing.T) {
			useInterpreter(t, eng.typ, eng.env)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					src := tc.src[eng.typ]
					e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: eng.typ, Content: src, AllowModification: true}},
						script.Options{Timeout: 5 * time.Second})
					p := &fakePlatform{}
					res, ok, err := e.Run(context.Background(), "db._table.t.get.pre_process", ev(), p)
					if !ok {
						t.Fatal("script not found")
					}
					checkErr(t, err, tc.wantErr)
					if tc.check != nil && err == nil {
						tc.check(t, res, p)
					}
				})
			}
			if _, err := os.Stat(victim); err == nil {
				t.Errorf("a script wrote %s", victim)
			}
			select {
			case <-accepted:
				t.Errorf("a script reached the network")
			default:
			}
			t.Run("syntax error refused by Check", func(t *testing.T) {
				err := script.Check(eng.typ, "x = 1\nif (")
				if err == nil || !strings.Contains(err.Error(), "line") {
					t.Fatalf("Check = %v", err)
				}
				if err := script.Check(eng.typ, tc0(eng.typ)); err != nil {
					t.Fatalf("Check of a good script = %v", err)
				}
			})
			t.Run("time limit kills the worker, the next run works", func(t *testing.T) {
				loop := map[string]string{"nodejs": `for (;;) {}`, "python3": "while True:\n    pass", "php": `while (true) {}`}[eng.typ]
				e := script.New([]script.Script{{Name: "a", Type: eng.typ, Content: loop}, {Name: "b", Type: eng.typ, Content: tc0(eng.typ), AllowModification: true}},
					script.Options{Timeout: 500 * time.Millisecond})
				_, _, err := e.Run(context.Background(), "a", ev(), nil)
				var f *script.Failure
				if !errors.As(err, &f) || f.Error() != "Script error: time limit exceeded" {
					t.Fatalf("err = %v", err)
				}
				res, _, err := e.Run(context.Background(), "b", ev(), nil)
				if err != nil || res.Response["content"] != "ok" {
					t.Fatalf("after the time limit: %v %#v", err, res.Response)
				}
			})
			t.Run("a worker that dies fails its own run only", func(t *testing.T) {
				die := map[string]string{"nodejs": `event.constructor.constructor("return process")().exit(3)`,
					"python3": "raise SystemExit(3)\n", "php": `exit(3);`}[eng.typ]
				e := script.New([]script.Script{{Name: "a", Type: eng.typ, Content: die}, {Name: "b", Type: eng.typ, Content: tc0(eng.typ), AllowModification: true}},
					script.Options{})
				if _, _, err := e.Run(context.Background(), "a", ev(), nil); err == nil {
					t.Fatal("a dying script succeeded")
				}
				res, _, err := e.Run(context.Background(), "b", ev(), nil)
				if err != nil || res.Response["content"] != "ok" {
					t.Fatalf("after the crash: %v %#v", err, res.Response)
				}
			})
		})
	}
}

// tc0 is a script that answers "ok".
func tc0(typ string) string {
	return map[string]string{"nodejs": `return {content: "ok"};`, "python3": `return {"content": "ok"}`,
		"php": `return ['content' => 'ok'];`}[typ]
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want == "":
	case strings.HasPrefix(want, "abort:"):
		var a *script.Abort
		if !errors.As(err, &a) || "abort:"+strconv.Itoa(a.Status) != want || a.Message == "" {
			t.Fatalf("err = %v, want %s", err, want)
		}
	case want == "Script error":
		var f *script.Failure
		if !errors.As(err, &f) {
			t.Fatalf("err = %v (%T), want a script failure", err, err)
		}
		t.Logf("refused: %v", err)
	default:
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to contain %q", err, want)
		}
	}
}

func TestExternalUnavailable(t *testing.T) {
	if err := script.SetInterpreter("php", filepath.Join(t.TempDir(), "no-such-php")); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = script.SetInterpreter("php", "") }()
	e := script.New([]script.Script{{Name: "a", Type: "php", Content: `return 1;`}}, script.Options{})
	_, _, err := e.Run(context.Background(), "a", map[string]any{}, nil)
	if !errors.Is(err, script.ErrUnavailable) || !strings.Contains(err.Error(), "no-such-php") {
		t.Fatalf("err = %v", err)
	}
	for _, ti := range script.Types() {
		if ti.Name == "php" && ti.Available {
			t.Error("script_type says php is available")
		}
	}
}

// TestHoldWorkers: the workers stop when the last holder releases (a
// closed server leaves no interpreter process behind), not before.
func TestHoldWorkers(t *testing.T) {
	useInterpreter(t, "nodejs", "PORTCULLIS_TEST_NODE")
	// children counts the live (not zombie) processes whose parent is this
	// one.
	children := func() int {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		if len(stats) == 0 {
			t.Skip("no /proc")
		}
		n := 0
		for _, f := range stats {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
			if fs := strings.Fields(rest); len(fs) > 1 && fs[0] != "Z" && fs[1] == strconv.Itoa(os.Getpid()) {
				n++
			}
		}
		return n
	}
	a, b := script.HoldWorkers(), script.HoldWorkers()
	e := script.New([]script.Script{{Name: "n", Type: "nodejs", Content: `return 1`}}, script.Options{})
	if _, _, err := e.Run(context.Background(), "n", nil, nil); err != nil {
		t.Fatal(err)
	}
	if children() == 0 {
		t.Fatal("no worker process")
	}
	a()
	a() // a second call does not count
	if children() == 0 {
		t.Fatal("workers stopped while a holder remains")
	}
	b()
	for deadline := time.Now().Add(5 * time.Second); children() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d worker processes left after the last release", children())
		}
	}
}
