package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The max-rate rounds run on wrk when it is installed (-loader). vegeta's
// client is Go's net/http: about 20-35 µs of CPU per request on the
// machines of bench/README, and more per request the slower the server
// answers (its idle workers and spinning scheduler), so on a machine the
// servers share with the loader, the loader's own cost moved the ratio by
// several points, always against the slower server. wrk is an event loop
// in C with the requests built once (wrkScript): a few µs per request,
// the same for both servers, as in the issue's own measurement. The
// constant-rate latency runs and the warm-ups stay on vegeta, which paces
// requests (wrk cannot) and takes durations under a second.

// wrkLatencies is how many latency quantiles a wrk round reports (its
// Latencies, for the max-rate p50 and p99 merged over rounds).
const wrkLatencies = 1000

// wrkUsable reports whether job j can run on wrk, a max-rate job of whole
// seconds whose targets all go to one http server, and if so returns that
// server's base URL and each target's request-URI.
func wrkUsable(j job) (base string, paths []string, ok bool) {
	if j.Rate != 0 || !wrkTakes(time.Duration(j.Duration)) || len(j.Targets) == 0 {
		return "", nil, false
	}
	base, paths, err := wrkTargets(j.Targets)
	return base, paths, err == nil
}

// wrkTakes reports whether wrk can run for d: whole seconds only.
func wrkTakes(d time.Duration) bool { return d >= time.Second && d%time.Second == 0 }

// wrkTargets returns the server's base URL and each target's
// request-URI, or an error when the targets do not share one http
// server.
func wrkTargets(ts []reqSpec) (base string, paths []string, err error) {
	for _, t := range ts {
		u, err := url.Parse(t.URL)
		if err != nil {
			return "", nil, err
		}
		if u.Scheme != "http" {
			return "", nil, fmt.Errorf("wrk: %s is not http", t.URL)
		}
		b := u.Scheme + "://" + u.Host
		if base == "" {
			base = b
		} else if b != base {
			return "", nil, fmt.Errorf("wrk: targets on %s and %s", base, b)
		}
		paths = append(paths, u.RequestURI())
	}
	return base, paths, nil
}

// wrkScript is the Lua script that makes wrk send j's targets in turn:
// each request is built once per thread (wrk.format) from hex (any byte
// survives), each thread starting at its own offset, and done() prints
// the counts and the latency quantiles on lines wrkParse reads. With no
// response() function wrk does not parse answers beyond their status.
func wrkScript(j job, paths []string) []byte {
	var b bytes.Buffer
	b.WriteString("local function unhex(s) return (s:gsub('..', function(c) return string.char(tonumber(c, 16)) end)) end\n")
	b.WriteString("local specs = {\n")
	for i, t := range j.Targets {
		var hdr []string
		for _, k := range slices.Sorted(maps.Keys(t.Header)) {
			hdr = append(hdr, fmt.Sprintf("[unhex(%q)] = unhex(%q)", hex.EncodeToString([]byte(k)),
				hex.EncodeToString([]byte(strings.Join(t.Header[k], ", ")))))
		}
		body := "nil"
		if len(t.Body) > 0 {
			body = fmt.Sprintf("unhex(%q)", hex.EncodeToString(t.Body))
		}
		fmt.Fprintf(&b, "  {%q, unhex(%q), {%s}, %s},\n", t.Method, hex.EncodeToString([]byte(paths[i])), strings.Join(hdr, ", "), body)
	}
	b.WriteString("}\n")
	b.WriteString(`local threads, reqs, at = 0, {}, 0
function setup(thread) thread:set("offset", threads); threads = threads + 1 end
function init(args)
  for i, s in ipairs(specs) do reqs[i] = wrk.format(s[1], s[2], s[3], s[4]) end
  at = ((offset or 0) * 7919) % #reqs
end
function request() at = at % #reqs + 1; return reqs[at] end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wrk-result %d %d %d %d %d %d %d\n", summary.requests, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout))
  local q = {}
  for i = 1, ` + strconv.Itoa(wrkLatencies) + ` do q[i] = latency:percentile(100 * (i - 0.5) / ` + strconv.Itoa(wrkLatencies) + `) end
  io.write("wrk-latency " .. table.concat(q, " ") .. "\n")
end
`)
	return b.Bytes()
}

// runWrk runs max-rate job j on the wrk at path against base, the
// targets' request-URIs in paths (wrkUsable): workers connections on as
// many threads as the machine has CPUs (at most one per connection). The
// result's CPU is wrk's own (its rusage).
func runWrk(path string, j job, base string, paths []string) (*attackResult, error) {
	f, err := os.CreateTemp("", "portcullis-bench-*.lua")
	if err != nil {
		return nil, fmt.Errorf("wrk script: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(wrkScript(j, paths)); err != nil {
		f.Close()
		return nil, fmt.Errorf("wrk script: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("wrk script: %w", err)
	}
	workers := max(j.Workers, 1)
	threads := min(runtime.NumCPU(), workers)
	secs := int(time.Duration(j.Duration) / time.Second)
	cmd := exec.Command(path, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(workers),
		"-d", strconv.Itoa(secs)+"s", "--timeout", "30s", "-s", f.Name(), base)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("wrk: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	res, err := wrkParse(out)
	if err != nil {
		return nil, err
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.CPU = jsonDuration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return res, nil
}

// wrkParse reads the lines wrkScript's done() prints.
func wrkParse(out []byte) (*attackResult, error) {
	var res *attackResult
	var lat []int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "wrk-result":
			if len(f) != 8 {
				return nil, fmt.Errorf("wrk: bad result line %q", sc.Text())
			}
			var n [7]int64
			for i := range n {
				v, err := strconv.ParseInt(f[i+1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("wrk: bad result line %q", sc.Text())
				}
				n[i] = v
			}
			requests, failed := int(n[0]), int(n[2]+n[3]+n[4]+n[5]+n[6])
			res = &attackResult{Requests: requests, Succeeded: max(requests-failed, 0),
				Elapsed: jsonDuration(time.Duration(n[1]) * time.Microsecond), Codes: map[string]int{}}
			if n[5] > 0 {
				res.Errors = append(res.Errors, fmt.Sprintf("%d answers with a status of 400 or more", n[5]))
			}
			if c := n[2] + n[3] + n[4] + n[6]; c > 0 {
				res.Errors = append(res.Errors, fmt.Sprintf("%d socket errors or timeouts (connect %d, read %d, write %d, timeout %d)", c, n[2], n[3], n[4], n[6]))
			}
		case "wrk-latency":
			for _, s := range f[1:] {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("wrk: bad latency %q", s)
				}
				lat = append(lat, int64(v))
			}
		}
	}
	if res == nil {
		return nil, errors.New("wrk: no result in its output")
	}
	res.Latencies = lat
	return res, nil
}

// loaderText names what drives the max-rate rounds of a run with s.
func loaderText(s settings) string {
	if s.Loader != "wrk" {
		return "on vegeta"
	}
	if !wrkTakes(s.Duration / time.Duration(max(s.Rounds, 1))) {
		return "on vegeta: wrk takes rounds of whole seconds"
	}
	return "on wrk"
}
