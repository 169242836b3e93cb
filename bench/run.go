package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// settings are the measurement parameters.
type settings struct {
	Duration time.Duration `json:"duration"` // of max-rate load per side
	Warmup   time.Duration `json:"warmup"`   // per side, not measured
	Latency  time.Duration `json:"latency"`  // of constant-rate load per side
	// LatencyLoad is the constant rate as a fraction of the lower of the
	// two max-rate throughputs.
	LatencyLoad float64 `json:"latency_load"`
	Rounds      int     `json:"rounds"`  // the max-rate load is split into rounds, sides alternating
	Workers     int     `json:"workers"` // concurrent connections
	Rows        int     `json:"rows"`    // seeded rows
	Quick       bool    `json:"quick"`
	// Loader is what drives the max-rate rounds: "wrk" (its path in
	// wrkPath) or "vegeta".
	Loader  string `json:"loader"`
	wrkPath string
	// profileDir, when set, receives CPU and allocation profiles of each
	// Portcullis max-rate run.
	profileDir string
}

// sideResult is the figures of one server in one scenario.
type sideResult struct {
	Requests int     `json:"requests"`
	Failed   int     `json:"failed"`
	RPS      float64 `json:"rps"` // max-rate throughput
	MaxP50us float64 `json:"max_rate_p50_us"`
	MaxP99us float64 `json:"max_rate_p99_us"`
	P50us    float64 `json:"p50_us"` // at the scenario's constant rate
	P99us    float64 `json:"p99_us"`
	Allocs   float64 `json:"allocs_per_req"`
	Bytes    float64 `json:"alloc_bytes_per_req"`
	CPUus    float64 `json:"cpu_us_per_req"`    // server process, user + system
	DBCPUus  float64 `json:"db_cpu_us_per_req"` // database server processes (PostgreSQL, MySQL)
	// LoaderCPUus is the load generator's CPU per request: the client's
	// share of the machine, which a server's headers and answers change.
	LoaderCPUus float64 `json:"loader_cpu_us_per_req"`
	PeakRSS     uint64  `json:"peak_rss_bytes"`
	RSSExact    bool    `json:"peak_rss_per_run"` // false: process lifetime peak
	BodyBytes   int     `json:"body_bytes"`
}

// caseResult is one scenario on one engine.
type caseResult struct {
	Scenario    string     `json:"scenario"`
	Title       string     `json:"title"`
	Engine      string     `json:"engine"`
	LatencyRate int        `json:"latency_rate"` // requests/s of the latency runs
	Portcullis  sideResult `json:"portcullis"`
	Baseline    sideResult `json:"baseline"`
	RatioRPS    float64    `json:"ratio_rps"`
	RatioP50    float64    `json:"ratio_p50"`
	RatioP99    float64    `json:"ratio_p99"`
	// RoundRatios is the req/s ratio of each max-rate round (Portcullis's
	// round against the baseline's round next to it), so that a reader sees
	// how far the machine's noise moved the ratio within the run.
	RoundRatios []float64 `json:"round_ratios_rps"`
}

// runner measures cases.
type runner struct {
	set  settings
	env  *env
	load *loader
	prog progress
}

// side is one server's requests in a case.
type side struct {
	name    string
	targets []reqSpec
	res     *sideResult
	tput    []*attackResult
	delta   procSample
	dbCPU   time.Duration // database servers' CPU over the throughput runs
	peak    uint64
	rssOK   bool
}

// runCase verifies that both servers give the same answer, then warms
// them up, measures throughput at max rate in alternating rounds, and
// latency at a constant rate both can sustain.
func (r *runner) runCase(ctx context.Context, sc scenario, kind dialects.Kind) (*caseResult, error) {
	engine := string(kind)
	if !sc.perEngine {
		engine = "-"
	}
	pt, bt := sc.targets(r.env, kind)
	out := &caseResult{Scenario: sc.name, Title: sc.title, Engine: engine}
	p := &side{name: "portcullis", targets: pt, res: &out.Portcullis}
	b := &side{name: "baseline", targets: bt, res: &out.Baseline}

	// The same answer from both, for a few of the calls (one for writes).
	checks := min(len(pt), 4)
	if sc.posted {
		checks = 1
	}
	for i := range checks {
		if err := verifySame(ctx, pt[i], bt[i], sc.posted, p, b); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", sc.name, engine, err)
		}
	}
	label := sc.name + "/" + engine
	use := func(s *side) error {
		if sc.prepare == nil {
			return nil
		}
		return sc.prepare(ctx, r.env, kind, s.name)
	}
	if sc.prepare != nil {
		defer sc.prepare(context.WithoutCancel(ctx), r.env, kind, "baseline")
	}
	for _, s := range []*side{b, p} {
		if err := use(s); err != nil {
			return nil, err
		}
		r.prog.step(label + " warm-up " + s.name)
		if _, err := r.attack(s, 0, r.set.Warmup); err != nil {
			return nil, err
		}
	}
	per := r.set.Duration / time.Duration(r.set.Rounds)
	for round := range r.set.Rounds {
		order := []*side{b, p}
		if round%2 == 1 {
			order = []*side{p, b}
		}
		for _, s := range order {
			if err := use(s); err != nil {
				return nil, err
			}
			r.prog.step(fmt.Sprintf("%s %s %d/%d", label, s.name, round+1, r.set.Rounds))
			prof := sc.name
			if sc.perEngine {
				prof += "-" + engine
			}
			if err := r.measure(ctx, s, per, fmt.Sprintf("%s-r%d", prof, round+1)); err != nil {
				return nil, err
			}
		}
	}
	for _, s := range []*side{b, p} {
		s.summariseThroughput()
		if s.res.Requests == 0 || s.res.Failed > s.res.Requests/100 {
			return nil, fmt.Errorf("%s: %s failed %d of %d requests:%s", label, s.name, s.res.Failed, s.res.Requests, codesText(s.tput...))
		}
	}
	rate := int(r.set.LatencyLoad * min(p.res.RPS, b.res.RPS))
	rate = max(rate, 20)
	out.LatencyRate = rate
	for _, s := range []*side{b, p} {
		if err := use(s); err != nil {
			return nil, err
		}
		r.prog.step(fmt.Sprintf("%s %s at %d/s", label, s.name, rate))
		res, err := r.attack(s, rate, r.set.Latency)
		if err != nil {
			return nil, err
		}
		if failed := res.Requests - res.Succeeded; res.Requests == 0 || failed > res.Requests/100 {
			return nil, fmt.Errorf("%s: %s failed %d of %d requests at %d/s:%s", label, s.name, failed, res.Requests, rate, codesText(res))
		}
		lat := sortedLatencies(res)
		s.res.P50us = us(percentile(lat, 0.50))
		s.res.P99us = us(percentile(lat, 0.99))
	}
	out.RatioRPS = ratio(p.res.RPS, b.res.RPS)
	out.RoundRatios = roundRatios(p.tput, b.tput)
	out.RatioP50 = ratio(p.res.P50us, b.res.P50us)
	out.RatioP99 = ratio(p.res.P99us, b.res.P99us)
	return out, nil
}

// roundRatios returns the req/s ratio of each pair of rounds, p's i-th
// against b's i-th (0 where either served nothing).
func roundRatios(p, b []*attackResult) []float64 {
	out := make([]float64, min(len(p), len(b)))
	for i := range out {
		out[i] = ratio(p[i].rps(), b[i].rps())
	}
	return out
}

// attack runs one job on s's targets (rate 0: as fast as possible).
func (r *runner) attack(s *side, rate int, d time.Duration) (*attackResult, error) {
	return r.load.run(job{Targets: s.targets, Rate: rate, Duration: jsonDuration(d), Workers: r.set.Workers}, nil)
}

// measure runs one max-rate round on s and accumulates what the process
// spent on it.
func (r *runner) measure(ctx context.Context, s *side, d time.Duration, profName string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rssOK := resetPeakRSS()
	var stopProfile func()
	if r.set.profileDir != "" {
		if s.name != "portcullis" {
			profName += "-" + s.name
		}
		var err error
		if stopProfile, err = startProfile(r.set.profileDir, profName); err != nil {
			return err
		}
	}
	before, dbBefore := sample(), dbServerCPU()
	res, err := r.load.run(job{Targets: s.targets, Duration: jsonDuration(d), Workers: r.set.Workers, Wrk: r.set.wrkPath}, nil)
	after, dbAfter := sample(), dbServerCPU()
	if stopProfile != nil {
		stopProfile()
	}
	if err != nil {
		return err
	}
	d1 := after.sub(before)
	s.delta.mallocs += d1.mallocs
	s.delta.allocBytes += d1.allocBytes
	s.delta.cpu += d1.cpu
	s.dbCPU += dbAfter - dbBefore
	s.peak = max(s.peak, readPeakRSS())
	s.rssOK = rssOK
	s.tput = append(s.tput, res)
	return nil
}

// summariseThroughput fills the max-rate figures of s.res.
func (s *side) summariseThroughput() {
	var elapsed, loader time.Duration
	ok := 0
	for _, t := range s.tput {
		loader += time.Duration(t.CPU)
		s.res.Requests += t.Requests
		ok += t.Succeeded
		elapsed += time.Duration(t.Elapsed)
	}
	s.res.Failed = s.res.Requests - ok
	if elapsed > 0 {
		s.res.RPS = float64(ok) / elapsed.Seconds()
	}
	lat := sortedLatencies(s.tput...)
	s.res.MaxP50us = us(percentile(lat, 0.50))
	s.res.MaxP99us = us(percentile(lat, 0.99))
	if n := float64(s.res.Requests); n > 0 {
		s.res.Allocs = float64(s.delta.mallocs) / n
		s.res.Bytes = float64(s.delta.allocBytes) / n
		s.res.CPUus = float64(s.delta.cpu.Microseconds()) / n
		s.res.DBCPUus = float64(s.dbCPU.Microseconds()) / n
		s.res.LoaderCPUus = float64(loader.Microseconds()) / n
	}
	s.res.PeakRSS = s.peak
	s.res.RSSExact = s.rssOK
}

// startProfile starts a CPU profile and returns the function that stops it
// and writes the allocation profile next to it.
func startProfile(dir, name string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cpu, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	base := filepath.Join(dir, name+".allocs-before.pprof")
	writeHeap(base)
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		writeHeap(filepath.Join(dir, name+".allocs.pprof"))
	}, nil
}

func writeHeap(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("allocs").WriteTo(f, 0)
}

// idNumber masks the ids in write answers.
var idNumber = regexp.MustCompile(`"id":\d+`)

// verifySame sends the first request of each side and checks that status
// and body are the same (ids masked for writes).
func verifySame(ctx context.Context, pt, bt reqSpec, posted bool, p, b *side) error {
	ps, pb, err := fetch(ctx, pt)
	if err != nil {
		return fmt.Errorf("portcullis: %w", err)
	}
	bs, bb, err := fetch(ctx, bt)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	p.res.BodyBytes, b.res.BodyBytes = len(pb), len(bb)
	cp, cb := pb, bb
	if posted {
		cp = idNumber.ReplaceAll(pb, []byte(`"id":N`))
		cb = idNumber.ReplaceAll(bb, []byte(`"id":N`))
	}
	if ps != http.StatusOK || bs != http.StatusOK {
		return fmt.Errorf("%s %s: portcullis %d %s, baseline %d %s", pt.Method, pt.URL, ps, clip(pb, 0), bs, clip(bb, 0))
	}
	if !bytes.Equal(cp, cb) {
		at := 0
		for at < len(cp) && at < len(cb) && cp[at] == cb[at] {
			at++
		}
		return fmt.Errorf("%s %s: the answers differ at byte %d:\n  portcullis %s\n  baseline   %s", pt.Method, pt.URL, at, clip(cp, at), clip(cb, at))
	}
	return nil
}

func fetch(ctx context.Context, t reqSpec) (int, []byte, error) {
	var body io.Reader
	if t.Body != nil {
		body = bytes.NewReader(t.Body)
	}
	req, err := http.NewRequestWithContext(ctx, t.Method, t.URL, body)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// clip shows up to 300 bytes of b around offset at.
func clip(b []byte, at int) string {
	from := max(at-100, 0)
	to := min(from+300, len(b))
	out := string(b[from:to])
	if from > 0 {
		out = "…" + out
	}
	if to < len(b) {
		out += "…"
	}
	return fmt.Sprintf("%s (%d bytes)", out, len(b))
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
