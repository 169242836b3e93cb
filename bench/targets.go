package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/portcullis-dev/portcullis/dialects"
)

// The targets of issue 17, checked on every run so that whether a run
// meets them is read off its output rather than worked out by hand. A
// throughput target is the req/s ratio of one scenario on one engine; the
// database CPU target is checked on every database-backed scenario of a
// server engine (PostgreSQL, MySQL); rws and the pipeline are checked once.

// target is one of the throughput targets.
type target struct {
	scenario string
	label    string
	atLeast  float64 // the lowest req/s ratio that meets it
}

// ratioTargets are the throughput targets per engine.
var ratioTargets = []target{
	{scenario: "byid", label: "by id req/s ≥ 0.90", atLeast: 0.90},
	{scenario: "page25", label: "page of 25 req/s ≥ 0.95", atLeast: 0.95},
	{scenario: "page1000", label: "page of 1000 req/s ≥ 0.95", atLeast: 0.95},
	{scenario: "filtered", label: "filtered req/s ≥ 0.95", atLeast: 0.95},
	{scenario: "post", label: "POST req/s ≥ 0.90", atLeast: 0.90},
}

// maxDBCPURatio is the highest database CPU per request, as a multiple
// of the baseline's, that meets the target.
const maxDBCPURatio = 1.1

// targetCheck is one target on one engine ("" when it has none) as the
// run measured it.
type targetCheck struct {
	Target string  `json:"target"`
	Engine string  `json:"engine,omitempty"`
	Value  float64 `json:"value"`
	// Limit is the target's bound: the lowest value that meets it, or
	// with AtMost the highest.
	Limit  float64 `json:"limit"`
	AtMost bool    `json:"at_most,omitempty"`
	// Where names the scenario of a database CPU check.
	Where string `json:"where,omitempty"`
	Met   bool   `json:"met"`
}

// newCheck checks value against limit.
func newCheck(name, engine string, value, limit float64, atMost bool) targetCheck {
	met := value >= limit
	if atMost {
		met = value <= limit
	}
	return targetCheck{Target: name, Engine: engine, Value: value, Limit: limit, AtMost: atMost, Met: met}
}

// text is the value as printed: two decimals, three when two would show
// the bound itself for a value that is not the bound (0.897 against 0.90).
func (c targetCheck) text() string {
	v := fmt.Sprintf("%.2f", c.Value)
	if v == fmt.Sprintf("%.2f", c.Limit) && c.Value != c.Limit {
		v = fmt.Sprintf("%.3f", c.Value)
	}
	return v
}

// checkTargets checks the targets that results and s measured; a target
// whose scenario did not run is left out.
func checkTargets(results []*caseResult, s summary) []targetCheck {
	var out []targetCheck
	for _, t := range ratioTargets {
		for _, c := range results {
			if c.Scenario == t.scenario {
				out = append(out, newCheck(t.label, c.Engine, c.RatioRPS, t.atLeast, false))
			}
		}
	}
	// Database CPU: the highest ratio per engine, and where. SQLite has no
	// server process: what dbServerCPU reads during its runs is the other
	// servers' idle work, as the table's "-" says.
	worst := map[string]*targetCheck{}
	var engines []string
	for _, c := range results {
		if !isRatioScenario(c.Scenario) || c.Engine == string(dialects.SQLite) ||
			c.Baseline.DBCPUus <= 0 || c.Portcullis.DBCPUus <= 0 {
			continue
		}
		r := c.Portcullis.DBCPUus / c.Baseline.DBCPUus
		if w := worst[c.Engine]; w != nil && r <= w.Value {
			continue
		}
		if worst[c.Engine] == nil {
			engines = append(engines, c.Engine)
		}
		w := newCheck(fmt.Sprintf("database CPU ≤ %.1f×", maxDBCPURatio), c.Engine, r, maxDBCPURatio, true)
		w.Where = c.Scenario
		worst[c.Engine] = &w
	}
	for _, e := range engines {
		out = append(out, *worst[e])
	}
	if s.RWSOfUpstream > 0 {
		out = append(out, newCheck("rws ≥ 0.40 of the upstream", "", s.RWSOfUpstream, 0.40, false))
	}
	if s.PipelineOK {
		out = append(out, newCheck("pipeline adds ≤ 15 µs CPU", "", s.PipelineCPUus, 15, true))
	}
	return out
}

// isRatioScenario reports whether scenario has a throughput target.
func isRatioScenario(scenario string) bool {
	for _, t := range ratioTargets {
		if t.scenario == scenario {
			return true
		}
	}
	return false
}

// printTargets writes one line per target: its value on each engine and
// which missed it.
func printTargets(w io.Writer, checks []targetCheck) {
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntargets (issue 17), Portcullis against the baseline in this run:")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	defer tw.Flush()
	var order []string
	byTarget := map[string][]targetCheck{}
	for _, c := range checks {
		if byTarget[c.Target] == nil {
			order = append(order, c.Target)
		}
		byTarget[c.Target] = append(byTarget[c.Target], c)
	}
	for _, t := range order {
		var vals, missed []string
		for _, c := range byTarget[t] {
			v := c.text()
			if strings.HasPrefix(t, "pipeline") {
				v = fmt.Sprintf("%.0f µs", c.Value)
			}
			if c.Where != "" {
				v += " (" + c.Where + ")"
			}
			if c.Engine != "" {
				v = c.Engine + " " + v
			}
			vals = append(vals, v)
			if !c.Met {
				missed = append(missed, cmpName(c))
			}
		}
		verdict := "met"
		if len(missed) > 0 {
			verdict = "missed"
			if len(byTarget[t]) > 1 {
				verdict += ": " + strings.Join(missed, ", ")
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", t, strings.Join(vals, "  "), verdict)
	}
}

// cmpName names a missed check in the verdict.
func cmpName(c targetCheck) string {
	if c.Engine == "" {
		return c.Target
	}
	return c.Engine
}
