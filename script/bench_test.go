package script_test

import (
	"context"
	"testing"

	"github.com/portcullis-dev/portcullis/script"
)

func BenchmarkLuaEmptyHook(b *testing.B) {
	e := script.New([]script.Script{{Name: "db._table.t.get.pre_process", Type: "lua", Content: ``}}, script.Options{})
	ev := map[string]any{"request": map[string]any{"method": "GET", "parameters": map[string]any{"limit": "5"}, "headers": map[string]any{"accept": "application/json"}}}
	ctx := context.Background()
	b.ReportAllocs()
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
	for b.Loop() {
		if _, _, err := e.Run(ctx, "db._table.t.get.pre_process", ev, nil); err != nil {
			b.Fatal(err)
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
