package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckTargets(t *testing.T) {
	side := func(rps, db float64) sideResult { return sideResult{RPS: rps, DBCPUus: db} }
	cs := func(scenario, engine string, ratio float64, p, b sideResult) *caseResult {
		return &caseResult{Scenario: scenario, Engine: engine, RatioRPS: ratio, Portcullis: p, Baseline: b}
	}
	results := []*caseResult{
		cs("pipeline", "-", 0.7, sideResult{CPUus: 30}, sideResult{CPUus: 19}),
		cs("byid", "sqlite", 0.91, side(0, 0.3), side(0, 0.2)),  // idle work of the other servers: no check
		cs("byid", "pgsql", 0.897, side(0, 44), side(0, 40)),    // 1.10: met
		cs("byid", "mysql", 0.80, side(0, 61.6), side(0, 53.7)), // 1.15: the worst on mysql
		cs("page25", "mysql", 0.95, side(0, 1400), side(0, 1350)),
		cs("post", "mysql", 1.06, side(0, 87), side(0, 97)),
		cs("script-lua", "-", 0.5, side(0, 0), side(0, 0)), // no target
	}
	s := summarise(results)
	s.RWSOfUpstream = 0.32
	got := checkTargets(results, s)
	want := []targetCheck{
		{Target: "by id req/s ≥ 0.90", Engine: "sqlite", Value: 0.91, Limit: 0.90, Met: true},
		{Target: "by id req/s ≥ 0.90", Engine: "pgsql", Value: 0.897, Limit: 0.90},
		{Target: "by id req/s ≥ 0.90", Engine: "mysql", Value: 0.80, Limit: 0.90},
		{Target: "page of 25 req/s ≥ 0.95", Engine: "mysql", Value: 0.95, Limit: 0.95, Met: true},
		{Target: "POST req/s ≥ 0.90", Engine: "mysql", Value: 1.06, Limit: 0.90, Met: true},
		{Target: "database CPU ≤ 1.1×", Engine: "pgsql", Value: 44.0 / 40, Limit: 1.1, AtMost: true, Where: "byid", Met: true},
		{Target: "database CPU ≤ 1.1×", Engine: "mysql", Value: 61.6 / 53.7, Limit: 1.1, AtMost: true, Where: "byid"},
		{Target: "rws ≥ 0.40 of the upstream", Value: 0.32, Limit: 0.40},
		{Target: "pipeline adds ≤ 15 µs CPU", Value: 11, Limit: 15, AtMost: true, Met: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("checks (-want +got):\n%s", d)
	}

	var sb strings.Builder
	printTargets(&sb, got)
	out := sb.String()
	for _, line := range []string{
		"by id req/s ≥ 0.90",
		"sqlite 0.91  pgsql 0.897  mysql 0.80", // three decimals where two would show 0.90
		"missed: pgsql, mysql",
		"mysql 1.15 (byid)",
		"rws ≥ 0.40 of the upstream   0.32 ",
		"pipeline adds ≤ 15 µs CPU    11 µs ",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	if n := strings.Count(out, "\n  "); n != 6 {
		t.Errorf("%d target lines, want 6:\n%s", n, out)
	}
	if printTargets(&sb, nil); sb.String() != out {
		t.Error("no checks printed something")
	}
}
