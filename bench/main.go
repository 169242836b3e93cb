package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

func main() {
	if os.Getenv(envLoader) == "1" {
		if err := loaderMain(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench loader:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	set       settings
	engines   []dialects.Kind
	scenarios []string
	jsonFile  string
	accessLog bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./bench [flags]\n\n"+
			"Starts Portcullis and a hand-written baseline server, drives the same calls at both\n"+
			"over loopback and prints throughput, latency, allocations and memory side by side.\n"+
			"PostgreSQL and MySQL run when %s / %s hold a server DSN.\n\nFlags:\n", envPostgres, envMySQL)
		fs.PrintDefaults()
	}
	o := &options{}
	fs.DurationVar(&o.set.Duration, "duration", 3*time.Second, "max-rate load per server and scenario (split into -rounds)")
	fs.DurationVar(&o.set.Latency, "latency", time.Second, "constant-rate load per server and scenario, for p50/p99")
	fs.Float64Var(&o.set.LatencyLoad, "latency-load", 0.4, "rate of the constant-rate load, as a fraction of the lower max-rate throughput")
	fs.DurationVar(&o.set.Warmup, "warmup", 500*time.Millisecond, "unmeasured load per server before each scenario")
	fs.IntVar(&o.set.Rounds, "rounds", 3, "rounds the max-rate load is split into, servers alternating")
	fs.IntVar(&o.set.Workers, "workers", 16, "concurrent connections of the max-rate load")
	fs.IntVar(&o.set.Rows, "rows", 10000, "rows seeded into the item table")
	fs.BoolVar(&o.set.Quick, "quick", false, "smoke run for CI: short loads, 2000 rows")
	engines := fs.String("engines", "", "comma-separated engines (sqlite,pgsql,mysql); default: sqlite and every engine whose DSN variable is set")
	scen := fs.String("scenarios", "", "comma-separated scenarios ("+strings.Join(scenarioNames(), ",")+"); default: all")
	fs.StringVar(&o.jsonFile, "json", "", "write the results as JSON to this file")
	fs.StringVar(&o.set.profileDir, "profile", "", "write CPU and allocation profiles of the max-rate runs to this folder (the baseline's named …-baseline)")
	fs.StringVar(&o.set.Loader, "loader", "auto", "what drives the max-rate rounds: wrk, vegeta, or auto (wrk when it is on PATH)")
	fs.BoolVar(&o.accessLog, "accesslog", false, "keep Portcullis's access log on (written to a discarding JSON handler)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.set.Quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quick := map[string]func(){
			"duration": func() { o.set.Duration = 400 * time.Millisecond },
			"latency":  func() { o.set.Latency = 200 * time.Millisecond },
			"warmup":   func() { o.set.Warmup = 100 * time.Millisecond },
			"rounds":   func() { o.set.Rounds = 1 },
			"rows":     func() { o.set.Rows = 2000 },
			"workers":  func() { o.set.Workers = 8 },
		}
		for name, apply := range quick {
			if !set[name] {
				apply()
			}
		}
	}
	var errs []error
	if o.set.Duration <= 0 || o.set.Latency <= 0 || o.set.Warmup < 0 {
		errs = append(errs, errors.New("-duration and -latency must be positive, -warmup not negative"))
	}
	if o.set.LatencyLoad <= 0 || o.set.LatencyLoad > 1 {
		errs = append(errs, errors.New("-latency-load must be in (0, 1]"))
	}
	if o.set.Rounds < 1 || o.set.Workers < 1 {
		errs = append(errs, errors.New("-rounds and -workers must be at least 1"))
	}
	switch o.set.Loader {
	case "auto", "wrk":
		p, err := exec.LookPath("wrk")
		switch {
		case err == nil:
			o.set.Loader, o.set.wrkPath = "wrk", p
		case o.set.Loader == "wrk":
			errs = append(errs, fmt.Errorf("-loader wrk: %w (Debian: apt-get install wrk)", err))
		default:
			o.set.Loader = "vegeta"
		}
	case "vegeta":
	default:
		errs = append(errs, fmt.Errorf("-loader must be wrk, vegeta or auto, not %q", o.set.Loader))
	}
	if o.set.Rows < 1000 {
		errs = append(errs, errors.New("-rows must be at least 1000 (the 1000-row page)"))
	}
	if *engines == "" {
		for _, k := range allKinds {
			if k == dialects.SQLite || adminDSN(k) != "" {
				o.engines = append(o.engines, k)
			}
		}
	} else {
		for _, e := range splitList(*engines) {
			k := dialects.Kind(e)
			if e == "postgres" || e == "pg" {
				k = dialects.Postgres
			}
			if !slices.Contains(allKinds, k) {
				errs = append(errs, fmt.Errorf("unknown engine %q (sqlite, pgsql, mysql)", e))
				continue
			}
			if k != dialects.SQLite && adminDSN(k) == "" {
				env := envPostgres
				if k == dialects.MySQL {
					env = envMySQL
				}
				errs = append(errs, fmt.Errorf("engine %s needs %s (e.g. %s)", k, env, exampleDSN(k)))
				continue
			}
			if !slices.Contains(o.engines, k) {
				o.engines = append(o.engines, k)
			}
		}
	}
	if *scen == "" {
		o.scenarios = scenarioNames()
	} else {
		for _, s := range splitList(*scen) {
			if !slices.Contains(scenarioNames(), s) {
				errs = append(errs, fmt.Errorf("unknown scenario %q (%s)", s, strings.Join(scenarioNames(), ", ")))
				continue
			}
			o.scenarios = append(o.scenarios, s)
		}
	}
	if len(o.engines) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no engine to run"))
	}
	return o, errors.Join(errs...)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.ToLower(p))
		}
	}
	return out
}

// report is the JSON written by -json.
type report struct {
	Started  time.Time     `json:"started"`
	Elapsed  float64       `json:"elapsed_seconds"`
	Machine  machine       `json:"machine"`
	Settings settings      `json:"settings"`
	Limits   int           `json:"limits"`
	Applying int           `json:"limits_applying_per_request"`
	Results  []*caseResult `json:"results"`
	Summary  summary       `json:"summary"`
}

type machine struct {
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	LoadStart  string `json:"load_average_start"`
	LoadEnd    string `json:"load_average_end"`
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	rep, err := bench(ctx, o, stdout)
	if err != nil {
		return err
	}
	if o.jsonFile != "" {
		return writeReport(o.jsonFile, rep)
	}
	return nil
}

// writeReport writes rep as indented JSON to path.
func writeReport(path string, rep *report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// bench sets everything up, runs the selected cases and prints the table.
func bench(ctx context.Context, o *options, stdout io.Writer) (*report, error) {
	rep := &report{Started: time.Now(), Settings: o.set, Machine: machine{
		GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadStart: loadAverages(),
	}}
	fmt.Fprintf(stdout, "Portcullis bench: %s %s, %d CPUs, load average %s; engines %s; %d rows; %v max-rate (%d rounds, %s) + %v at constant rate per server, %d connections\n",
		rep.Machine.GoVersion, rep.Machine.OS, rep.Machine.CPUs, rep.Machine.LoadStart, kindsText(o.engines),
		o.set.Rows, o.set.Duration, o.set.Rounds, loaderText(o.set), o.set.Latency, o.set.Workers)

	dir, err := os.MkdirTemp("", "portcullis-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	var dbs []*database
	defer func() {
		for _, d := range dbs {
			if d.drop != nil {
				d.drop()
			}
		}
	}()
	baseDBs := map[string]*baseDB{}
	defer func() {
		for _, b := range baseDBs {
			b.db.Close()
		}
	}()
	for _, k := range o.engines {
		d, err := createDatabase(ctx, k, dir)
		if err != nil {
			return nil, err
		}
		dbs = append(dbs, d)
		if err := seed(ctx, d, o.set.Rows); err != nil {
			return nil, fmt.Errorf("seed %s: %w", k, err)
		}
		db, err := openBaselineDB(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("baseline pool on %s: %w", k, err)
		}
		bd := newBaseDB(k, db)
		if err := bd.prepare(ctx); err != nil {
			return nil, fmt.Errorf("baseline on %s: %w", k, err)
		}
		baseDBs[string(k)] = bd
	}

	upURL, stopUp, err := serve(upstreamHandler())
	if err != nil {
		return nil, err
	}
	defer stopUp()
	base := newBaseline(baseDBs, upURL)
	baseURL, stopBase, err := serve(base)
	if err != nil {
		return nil, err
	}
	defer stopBase()

	inst, err := startInstance(ctx, dir, dbs, upURL, o.accessLog)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	rep.Limits, rep.Applying = inst.limits, inst.applying
	if err := inst.learnTrivial(ctx, o.engines[0], base); err != nil {
		return nil, err
	}

	load, err := startLoader()
	if err != nil {
		return nil, err
	}
	defer load.close()

	type todo struct {
		sc   scenario
		kind dialects.Kind
	}
	var cases []todo
	for _, sc := range scenarios {
		if !slices.Contains(o.scenarios, sc.name) {
			continue
		}
		if !sc.perEngine {
			cases = append(cases, todo{sc, o.engines[0]})
			continue
		}
		for _, k := range o.engines {
			cases = append(cases, todo{sc, k})
		}
	}
	prog := newProgress(len(cases) * (4 + 2*o.set.Rounds))
	r := &runner{set: o.set, load: load, prog: prog,
		env: &env{inst: inst, baseURL: baseURL, upstream: upURL, rows: o.set.Rows}}
	for _, c := range cases {
		res, err := r.runCase(ctx, c.sc, c.kind)
		if err != nil {
			prog.finish()
			return nil, err
		}
		rep.Results = append(rep.Results, res)
		prog.caseDone(res)
	}
	prog.finish()

	rep.Machine.LoadEnd = loadAverages()
	rep.Elapsed = time.Since(rep.Started).Seconds()
	rep.Summary = summarise(rep.Results)
	fmt.Fprintf(stdout, "%d limits configured, %d count each bench request; load average at the end %s; %s in all\n\n",
		rep.Limits, rep.Applying, rep.Machine.LoadEnd, time.Since(rep.Started).Round(time.Second))
	printTable(stdout, rep.Results)
	printSummary(stdout, rep.Summary)
	fmt.Fprintf(stdout, "\np50/p99 are taken at @rate, %.0f%% of the lower of the two max-rate throughputs; CPU is the servers' process (user+system); peak RSS is the servers' process during the max-rate runs (* = lifetime peak).\n", 100*o.set.LatencyLoad)
	return rep, nil
}

// serve starts h on a loopback port.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func kindsText(ks []dialects.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return joinKinds(s)
}

// loadAverages returns the three load averages from /proc/loadavg.
func loadAverages() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
