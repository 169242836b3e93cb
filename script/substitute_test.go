package script_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/script"
)

// substPlatform replaces "{n}" in a script's content with its n and counts
// the calls.
type substPlatform struct {
	fakePlatform
	n     int
	calls int
}

func (s *substPlatform) Substitute(src string) (string, bool) {
	s.calls++
	out := strings.ReplaceAll(src, "{n}", strconv.Itoa(s.n))
	return out, out != src
}

// TestSubstitute checks that a script with lookups runs its content as the
// platform substitutes it, per run and per value, with the variants kept
// bounded, and that a script without lookups never asks.
func TestSubstitute(t *testing.T) {
	hasN := func(src string) bool { return strings.Contains(src, "{n}") }
	for _, typ := range []string{"lua", "javascript"} {
		t.Run(typ, func(t *testing.T) {
			src := map[string]string{"lua": `event.response = {status_code = 200, content = {n = "{n}"}}`,
				"javascript": `event.response = {status_code: 200, content: {n: "{n}"}}`}[typ]
			e := script.New([]script.Script{
				{Name: "a.get.pre_process", Type: typ, Content: src, AllowModification: true},
				{Name: "b.get.pre_process", Type: typ, Content: strings.ReplaceAll(src, "{n}", "none"), AllowModification: true},
			}, script.Options{HasLookups: hasN})
			p := &substPlatform{}
			for i := range 300 { // more values than the variants kept
				p.n = i % 150
				res, _, err := e.Run(context.Background(), "a.get.pre_process", map[string]any{"request": map[string]any{}}, p)
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Response["content"].(map[string]any)["n"]; got != strconv.Itoa(p.n) {
					t.Fatalf("run %d: n = %v, want %d", i, got, p.n)
				}
			}
			if v := script.Variants(e, "a.get.pre_process"); v == 0 || v > script.MaxVariants {
				t.Errorf("%d variants kept, want 1..%d", v, script.MaxVariants)
			}
			before := p.calls
			res, _, err := e.Run(context.Background(), "b.get.pre_process", map[string]any{"request": map[string]any{}}, p)
			if err != nil || res.Response["content"].(map[string]any)["n"] != "none" {
				t.Fatalf("script without lookups: %v %v", res.Response, err)
			}
			if p.calls != before {
				t.Error("a script without lookups asked the platform to substitute")
			}
			// A platform that substitutes nothing runs the content as it is.
			res, _, err = e.Run(context.Background(), "a.get.pre_process", map[string]any{"request": map[string]any{}}, &fakePlatform{})
			if err != nil || res.Response["content"].(map[string]any)["n"] != "{n}" {
				t.Fatalf("without a substituter: %v %v", res.Response, err)
			}
		})
	}
	t.Run("syntax error in a variant fails the run", func(t *testing.T) {
		e := script.New([]script.Script{{Name: "a.get.pre_process", Type: "lua", Content: `x = {n}`}},
			script.Options{HasLookups: hasN})
		p := &substPlatform{}
		p.n = 1
		if _, _, err := e.Run(context.Background(), "a.get.pre_process", map[string]any{"request": map[string]any{}}, p); err != nil {
			t.Fatalf("x = 1: %v", err)
		}
		bad := &badSubst{}
		_, _, err := e.Run(context.Background(), "a.get.pre_process", map[string]any{"request": map[string]any{}}, bad)
		if err == nil || !strings.HasPrefix(err.Error(), "Script error:") {
			t.Fatalf("err = %v, want a Script error", err)
		}
	})
}

type badSubst struct{ fakePlatform }

func (badSubst) Substitute(src string) (string, bool) {
	return strings.ReplaceAll(src, "{n}", "if then"), true
}
