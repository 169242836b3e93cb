package script_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/script"
)

func BenchmarkLuaEmptyHook(b *testing.B) {
	e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: "lua", Content: ``}}, script.Options{})
	ev := map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"}, "headers": map[string]any{"accept": "application/json"}}}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, _, err := e.Run(ctx, "db._table.t.get.pre_process", ev, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNoScriptLookup(b *testing.B) {
	e := script.New([]script.Script{{Name: "other.get.pre_process", Type: "lua", Content: ``}}, script.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if e.HasService("db") {
			b.Fatal("found")
		}
	}
}

func BenchmarkJSEmptyHook(b *testing.B) {
	e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: "javascript", Content: ``}}, script.Options{})
	ev := map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"}, "headers": map[string]any{"accept": "application/json"}}}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, _, err := e.Run(ctx, "db._table.t.get.pre_process", ev, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSAbort measures a script that refuses the request (throw
// {status_code: 403, …}), a common hook.
func BenchmarkJSAbort(b *testing.B) {
	e := script.New([]script.Script{{Name: "n", Type: "javascript", Content: `throw {status_code: 403, message: "no"}`}}, script.Options{})
	ev := map[string]any{"request": map[string]any{"method": "GET"}}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, _, err := e.Run(ctx, "n", ev, nil); err == nil {
			b.Fatal("no abort")
		}
	}
}

func BenchmarkJSNewSandbox(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		script.NewJSSandbox()
	}
}

// BenchmarkEmptyHook compares an empty hook of every engine available
// here, in one run: lua and javascript in-process, nodejs, python3 and php
// through their workers (one JSON round trip over a pipe per call).
func BenchmarkEmptyHook(b *testing.B) {
	ev := map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"}, "headers": map[string]any{"accept": "application/json"}}}
	ctx := context.Background()
	for _, eng := range []struct{ typ, env string }{{"lua", ""}, {"javascript", ""}, {"nodejs", "PORTCULLIS_TEST_NODE"},
		{"python3", "PORTCULLIS_TEST_PYTHON"}, {"php", "PORTCULLIS_TEST_PHP"}} {
		b.Run(eng.typ, func(b *testing.B) {
			if eng.env != "" {
				useInterpreter(b, eng.typ, eng.env)
			}
			e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: eng.typ, Content: ``}}, script.Options{})
			if _, _, err := e.Run(ctx, "db._table.t.get.pre_process", ev, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, _, err := e.Run(ctx, "db._table.t.get.pre_process", ev, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU reports the process's CPU time (user+system, all threads, the
// garbage collector's included) per operation as cpu-µs/op: on a shared
// machine the wall time of ns/op also counts waiting for a core. Use as
// defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
