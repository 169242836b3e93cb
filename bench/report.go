package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/portcullis-dev/portcullis/dialects"
	"golang.org/x/term"
)

// progress shows how far the run is: a bar on a terminal, a plain line per
// finished case (and every 15 seconds within one) otherwise.
type progress interface {
	step(desc string)
	caseDone(c *caseResult)
	finish()
}

func newProgress(total int) progress {
	if term.IsTerminal(int(os.Stdout.Fd())) {
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(os.Stdout),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
		return &barProgress{bar: bar}
	}
	return &lineProgress{w: os.Stderr, total: total, start: time.Now(), last: time.Now()}
}

type barProgress struct {
	bar   *progressbar.ProgressBar
	steps int
}

func (p *barProgress) step(desc string) {
	if p.steps > 0 {
		_ = p.bar.Add(1)
	}
	p.steps++
	p.bar.Describe(fmt.Sprintf("%-44s", desc))
}

func (p *barProgress) caseDone(*caseResult) {}

func (p *barProgress) finish() {
	_ = p.bar.Finish()
	_ = p.bar.Clear()
}

type lineProgress struct {
	w     io.Writer
	total int
	steps int
	start time.Time
	last  time.Time
}

func (p *lineProgress) step(desc string) {
	p.steps++
	if time.Since(p.last) >= 15*time.Second {
		p.last = time.Now()
		fmt.Fprintf(p.w, "bench: [%d/%d steps, %s] %s\n", p.steps, p.total, time.Since(p.start).Round(time.Second), desc)
	}
}

func (p *lineProgress) caseDone(c *caseResult) {
	p.last = time.Now()
	fmt.Fprintf(p.w, "bench: [%d/%d steps, %s] %s %s: portcullis %.0f req/s, baseline %.0f req/s (%.2f)\n",
		p.steps, p.total, time.Since(p.start).Round(time.Second), c.Scenario, c.Engine, c.Portcullis.RPS, c.Baseline.RPS, c.RatioRPS)
}

func (p *lineProgress) finish() {}

// printTable writes the results as an aligned table, two lines per case.
func printTable(w io.Writer, results []*caseResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tengine\tserver\treq/s\tp50\tp99\t@rate\tallocs/req\tKB/req\tCPU µs/req\tDB CPU µs/req\tpeak RSS\treq/s ratio\trounds\tp99 ratio\t")
	for _, c := range results {
		for _, s := range []struct {
			name string
			r    sideResult
		}{{"portcullis", c.Portcullis}, {"baseline", c.Baseline}} {
			ratioRPS, rounds, ratioP99 := "", "", ""
			if s.name == "portcullis" {
				ratioRPS, ratioP99 = fmt.Sprintf("%.2f", c.RatioRPS), fmt.Sprintf("%.2f", c.RatioP99)
				rounds = roundRange(c.RoundRatios)
			}
			rss := mib(s.r.PeakRSS)
			if !s.r.RSSExact {
				rss += "*"
			}
			dbCPU := "-"
			if c.Engine != string(dialects.SQLite) {
				dbCPU = fmt.Sprintf("%.0f", s.r.DBCPUus)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%s\t%d/s\t%.0f\t%.1f\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n",
				c.Scenario, c.Engine, s.name, s.r.RPS, dur(s.r.P50us), dur(s.r.P99us), c.LatencyRate,
				s.r.Allocs, s.r.Bytes/1024, s.r.CPUus, dbCPU, rss, ratioRPS, rounds, ratioP99)
		}
	}
	tw.Flush()
}

// roundRange is the lowest and highest of the rounds' req/s ratios
// ("0.81-0.93"), or the one ratio of a single round.
func roundRange(rs []float64) string {
	if len(rs) == 0 {
		return "-"
	}
	lo, hi := slices.Min(rs), slices.Max(rs)
	if len(rs) == 1 {
		return fmt.Sprintf("%.2f", lo)
	}
	return fmt.Sprintf("%.2f-%.2f", lo, hi)
}

// summary is what the table implies for the targets.
type summary struct {
	// PipelineCPUus and PipelineP50us are what the full pipeline adds to a
	// trivial call: server CPU time per request and median latency.
	PipelineCPUus float64 `json:"pipeline_added_cpu_us"`
	PipelineP50us float64 `json:"pipeline_added_p50_us"`
	PipelineOK    bool    `json:"pipeline_measured"`
	// PerRow holds, per engine, the allocations per row of a page (from the
	// difference between the 1000-row and the 25-row pages).
	PerRow []perRow `json:"per_row,omitempty"`
	// ProxyOfUpstream is the req/s of the baseline's hand-written net/http
	// proxy (rwsproxy) over the upstream called directly (rws), when both
	// ran: what the second HTTP exchange alone leaves, beside the rws
	// target. RWSOfUpstream is Portcullis's rws ratio, repeated.
	ProxyOfUpstream float64 `json:"proxy_of_upstream,omitempty"`
	RWSOfUpstream   float64 `json:"rws_of_upstream,omitempty"`
	// Targets is every target of issue 17 the run measured, met or not
	// (targets.go).
	Targets []targetCheck `json:"targets,omitempty"`
}

type perRow struct {
	Engine            string  `json:"engine"`
	PortcullisAllocs  float64 `json:"portcullis_allocs_per_row"`
	PortcullisBytes   float64 `json:"portcullis_bytes_per_row"`
	BaselineAllocs    float64 `json:"baseline_allocs_per_row"`
	BaselineBytes     float64 `json:"baseline_bytes_per_row"`
	PortcullisCPUnsPR float64 `json:"portcullis_cpu_ns_per_row"`
	BaselineCPUnsPR   float64 `json:"baseline_cpu_ns_per_row"`
}

func summarise(results []*caseResult) summary {
	var s summary
	pages := map[string]map[string]*caseResult{}
	var rws, proxy *caseResult
	for _, c := range results {
		switch c.Scenario {
		case "rws":
			rws = c
		case "rwsproxy":
			proxy = c
		case "pipeline":
			s.PipelineOK = true
			s.PipelineCPUus = c.Portcullis.CPUus - c.Baseline.CPUus
			s.PipelineP50us = c.Portcullis.P50us - c.Baseline.P50us
		case "page25", "page1000":
			if pages[c.Engine] == nil {
				pages[c.Engine] = map[string]*caseResult{}
			}
			pages[c.Engine][c.Scenario] = c
		}
	}
	if rws != nil && proxy != nil && rws.Baseline.RPS > 0 {
		s.ProxyOfUpstream = proxy.Baseline.RPS / rws.Baseline.RPS
		s.RWSOfUpstream = rws.RatioRPS
	}
	for _, k := range allKinds {
		m := pages[string(k)]
		small, large := m["page25"], m["page1000"]
		if small == nil || large == nil {
			continue
		}
		const rows = 1000 - 25
		s.PerRow = append(s.PerRow, perRow{
			Engine:            string(k),
			PortcullisAllocs:  (large.Portcullis.Allocs - small.Portcullis.Allocs) / rows,
			PortcullisBytes:   (large.Portcullis.Bytes - small.Portcullis.Bytes) / rows,
			BaselineAllocs:    (large.Baseline.Allocs - small.Baseline.Allocs) / rows,
			BaselineBytes:     (large.Baseline.Bytes - small.Baseline.Bytes) / rows,
			PortcullisCPUnsPR: (large.Portcullis.CPUus - small.Portcullis.CPUus) * 1000 / rows,
			BaselineCPUnsPR:   (large.Baseline.CPUus - small.Baseline.CPUus) * 1000 / rows,
		})
	}
	s.Targets = checkTargets(results, s)
	return s
}

func printSummary(w io.Writer, s summary) {
	if s.PipelineOK {
		fmt.Fprintf(w, "\nfull pipeline (key, session, RBAC, %s): adds %.0f µs CPU and %.0f µs median latency per request (target ≤ 15 µs CPU)\n",
			"limits", s.PipelineCPUus, s.PipelineP50us)
	}
	if s.ProxyOfUpstream > 0 {
		fmt.Fprintf(w, "\nrws: Portcullis reaches %.2f of the upstream called directly (target ≥ 0.40); a hand-written net/http proxy reaches %.2f\n",
			s.RWSOfUpstream, s.ProxyOfUpstream)
	}
	if len(s.PerRow) > 0 {
		fmt.Fprintln(w, "\nper row of a page (1000-row page minus 25-row page, divided by 975):")
		for _, r := range s.PerRow {
			fmt.Fprintf(w, "  %-6s portcullis %.1f allocs, %.0f B, %.0f ns CPU   baseline %.1f allocs, %.0f B, %.0f ns CPU\n",
				r.Engine, r.PortcullisAllocs, r.PortcullisBytes, r.PortcullisCPUnsPR, r.BaselineAllocs, r.BaselineBytes, r.BaselineCPUnsPR)
		}
	}
	printTargets(w, s.Targets)
}

func dur(usec float64) string {
	switch {
	case usec <= 0:
		return "-"
	case usec < 1000:
		return fmt.Sprintf("%.0fµs", usec)
	case usec < 100_000:
		return fmt.Sprintf("%.2fms", usec/1000)
	}
	return fmt.Sprintf("%.0fms", usec/1000)
}

func mib(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20))
}

// joinKinds lists engine names.
func joinKinds(ks []string) string { return strings.Join(ks, ",") }
