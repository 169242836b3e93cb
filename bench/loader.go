package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// envLoader, set to "1", makes the program (or the test binary) run as the
// load generator: it reads jobs from stdin and answers on stdout.
const envLoader = "PORTCULLIS_BENCH_LOADER"

// The load generator runs in a child process so that the servers' process
// measures its own allocations, CPU time and memory only: vegeta's client
// allocates per request too, and its garbage would otherwise be counted
// against the server being measured.

// job is one attack: requests cycling through targets, either as fast as
// Workers connections allow (Rate 0) or at a constant Rate per second.
type job struct {
	Targets  []reqSpec    `json:"targets"`
	Rate     int          `json:"rate"`
	Duration jsonDuration `json:"duration"`
	Workers  int          `json:"workers"`
	// Wrk, when set, is the wrk executable that runs the job instead of
	// vegeta, when wrkUsable says it can (wrk.go).
	Wrk string `json:"wrk,omitempty"`
}

// reqSpec is one request of a job.
type reqSpec struct {
	Method string      `json:"method"`
	URL    string      `json:"url"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
}

// jsonDuration is a time.Duration written as nanoseconds.
type jsonDuration time.Duration

// attackResult is what the loader reports for one job.
type attackResult struct {
	Requests  int            `json:"requests"`
	Succeeded int            `json:"succeeded"`
	Elapsed   jsonDuration   `json:"elapsed"` // first request sent to last answer
	Codes     map[string]int `json:"codes"`
	Errors    []string       `json:"errors,omitempty"`
	// Latencies holds every request's latency in microseconds, so that
	// rounds can be merged before percentiles are taken.
	Latencies []int64 `json:"latencies"`
	// CPU is what the loader's process spent (user + system) while the
	// attack ran: the client's share of the machine.
	CPU jsonDuration `json:"cpu"`
}

// rps is the attack's successful requests per second (0 when it took no
// time).
func (a *attackResult) rps() float64 {
	if e := time.Duration(a.Elapsed).Seconds(); e > 0 {
		return float64(a.Succeeded) / e
	}
	return 0
}

// loaderMain is the child's main loop: one job per input line, one
// progress line ("p <requests>") every 200ms while it runs and one result
// line ("r <json>") when it ends.
func loaderMain(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var mu sync.Mutex
	emit := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(out, s)
	}
	for sc.Scan() {
		var j job
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return fmt.Errorf("loader: bad job: %w", err)
		}
		res, err := runAttack(j, func(n int64) { emit("p " + strconv.FormatInt(n, 10) + "\n") })
		if err != nil {
			return err
		}
		b, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("loader: %w", err)
		}
		emit("r " + string(b) + "\n")
	}
	return sc.Err()
}

// runAttack runs one job with vegeta and summarises it.
func runAttack(j job, progress func(int64)) (*attackResult, error) {
	if len(j.Targets) == 0 {
		return nil, errors.New("loader: job without targets")
	}
	if j.Wrk != "" {
		if base, paths, ok := wrkUsable(j); ok {
			return runWrk(j.Wrk, j, base, paths)
		}
	}
	workers := max(j.Workers, 1)
	maxWorkers := uint64(workers)
	pacer := vegeta.Pacer(vegeta.Rate{}) // zero: as fast as the workers go
	if j.Rate > 0 {
		pacer = vegeta.Rate{Freq: j.Rate, Per: time.Second}
		maxWorkers = uint64(workers * 8) // room to keep the rate when answers slow down
	}
	// The client is ours so that the job's connections are closed when it
	// ends: left open, each would keep a server goroutine alive for the
	// rest of the run and skew the next measurements.
	tr := &http.Transport{
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: int(maxWorkers),
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	atk := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: tr, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}),
		vegeta.Workers(uint64(workers)),
		vegeta.MaxWorkers(maxWorkers),
		vegeta.MaxBody(0), // read and discard: bodies are checked before the load
	)
	targets := make([]vegeta.Target, len(j.Targets))
	for i, t := range j.Targets {
		targets[i] = vegeta.Target{Method: t.Method, URL: t.URL, Header: t.Header, Body: t.Body}
	}
	var next atomic.Uint64
	targeter := func(tgt *vegeta.Target) error {
		*tgt = targets[(next.Add(1)-1)%uint64(len(targets))]
		return nil
	}

	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				progress(done.Load())
			}
		}
	}()

	res := &attackResult{Codes: map[string]int{}}
	res.Latencies = make([]int64, 0, 1<<14)
	var first, last time.Time
	errs := map[string]bool{}
	cpu0 := sample().cpu
	for r := range atk.Attack(targeter, pacer, time.Duration(j.Duration), "bench") {
		done.Add(1)
		res.Requests++
		res.Codes[strconv.Itoa(int(r.Code))]++
		if r.Code >= 200 && r.Code < 300 && r.Error == "" {
			res.Succeeded++
		} else if r.Error != "" && !errs[r.Error] && len(errs) < 5 {
			errs[r.Error] = true
			res.Errors = append(res.Errors, r.Error)
		}
		res.Latencies = append(res.Latencies, r.Latency.Microseconds())
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
		if end := r.Timestamp.Add(r.Latency); end.After(last) {
			last = end
		}
	}
	res.CPU = jsonDuration(sample().cpu - cpu0)
	close(stop)
	wg.Wait()
	progress(done.Load())
	if !first.IsZero() {
		res.Elapsed = jsonDuration(last.Sub(first))
	}
	return res, nil
}

// loader is the parent's handle on the child process.
type loader struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startLoader starts the child: this same executable with envLoader set.
func startLoader() (*loader, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for the load generator: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envLoader+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start load generator: %w", err)
	}
	return &loader{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// run sends j and waits for its result, reporting progress as it comes.
func (l *loader) run(j job, progress func(int64)) (*attackResult, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	if _, err := l.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	for {
		line, err := l.out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("load generator stopped: %w", err)
		}
		switch {
		case len(line) > 2 && line[:2] == "p ":
			if n, err := strconv.ParseInt(line[2:len(line)-1], 10, 64); err == nil && progress != nil {
				progress(n)
			}
		case len(line) > 2 && line[:2] == "r ":
			var res attackResult
			if err := json.Unmarshal([]byte(line[2:]), &res); err != nil {
				return nil, fmt.Errorf("load generator result: %w", err)
			}
			return &res, nil
		default:
			return nil, fmt.Errorf("load generator said %q", line)
		}
	}
}

// close ends the child and waits for it.
func (l *loader) close() error {
	l.in.Close()
	return l.cmd.Wait()
}

// percentile returns the q-quantile (0..1) of sorted latencies in µs.
func percentile(sorted []int64, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return time.Duration(sorted[i]) * time.Microsecond
}

// sortedLatencies merges and sorts the latencies of several results.
func sortedLatencies(rs ...*attackResult) []int64 {
	var all []int64
	for _, r := range rs {
		all = append(all, r.Latencies...)
	}
	slices.Sort(all)
	return all
}

// codesText lists status codes and counts, for error messages.
func codesText(rs ...*attackResult) string {
	m := map[string]int{}
	var errs []string
	for _, r := range rs {
		for k, v := range r.Codes {
			m[k] += v
		}
		errs = append(errs, r.Errors...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %s×%d", k, m[k])
	}
	if len(errs) > 0 {
		s += fmt.Sprintf(" (e.g. %q)", errs[0])
	}
	return s
}
