package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// TestScriptScenarios runs the two script scenarios for a moment: the hook
// is attached and removed through the system API between the sides, and
// both sides answer the same.
func TestScriptScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole instance and a load generator; skipped with -short")
	}
	o := &options{
		set: settings{Duration: 200 * time.Millisecond, Latency: 100 * time.Millisecond, LatencyLoad: 0.4, Warmup: 50 * time.Millisecond,
			Rounds: 2, Workers: 2, Rows: 200, Quick: true},
		engines:   []dialects.Kind{dialects.SQLite},
		scenarios: []string{"script-lua", "script-javascript"},
	}
	var out bytes.Buffer
	rep, err := bench(t.Context(), o, &out)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	for _, c := range rep.Results {
		if c.Portcullis.Requests == 0 || c.Baseline.Requests == 0 {
			t.Errorf("%s: no requests: %+v", c.Scenario, c)
		}
	}
}
