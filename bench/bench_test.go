package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
)

// TestMain lets the test binary act as the load generator, as the bench
// program does, when the harness starts it as its child.
func TestMain(m *testing.M) {
	if os.Getenv(envLoader) == "1" {
		if err := loaderMain(os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs the harness end to end on SQLite with two tiny scenarios
// (about a second of load), so that CI keeps it working: setup through the
// system API, the baseline giving the same bytes, the child load
// generator, the measurements and the JSON report.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole instance and a load generator; skipped with -short")
	}
	o := &options{
		set: settings{Duration: 300 * time.Millisecond, Latency: 150 * time.Millisecond, LatencyLoad: 0.4, Warmup: 50 * time.Millisecond,
			Rounds: 1, Workers: 4, Rows: 1000, Quick: true},
		engines:   []dialects.Kind{dialects.SQLite},
		scenarios: []string{"pipeline", "page25"},
		jsonFile:  filepath.Join(t.TempDir(), "out.json"),
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
		for name, s := range map[string]sideResult{"portcullis": c.Portcullis, "baseline": c.Baseline} {
			if s.Requests == 0 || s.RPS <= 0 || s.P50us <= 0 || s.P99us < s.P50us || s.Allocs <= 0 || s.PeakRSS == 0 || s.BodyBytes == 0 {
				t.Errorf("%s %s: implausible figures %+v", c.Scenario, name, s)
			}
		}
		if c.RatioRPS <= 0 {
			t.Errorf("%s: ratio %v", c.Scenario, c.RatioRPS)
		}
	}
	if rep.Limits < 30 || rep.Applying < 4 {
		t.Errorf("%d limits, %d applying: the pipeline is not exercised with limits", rep.Limits, rep.Applying)
	}
	table := out.String()
	for _, want := range []string{"scenario", "pipeline", "page25", "portcullis", "baseline", "full pipeline"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if err := writeReport(o.jsonFile, rep); err != nil {
		t.Fatal(err)
	}
	var back report
	data, err := os.ReadFile(o.jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &back); err != nil || len(back.Results) != 2 {
		t.Errorf("JSON report: %v, %d results", err, len(back.Results))
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "<b>&</b>", "tab\tnew\nline\r\b\f\x00\x1f",
		"Größe — ✓", "\u2028\u2029", "bad \xff utf8 \xc3", "emoji 😀"} {
		t.Run(s, func(t *testing.T) {
			want, _ := json.Marshal(s)
			if got := appendJSONString(nil, []byte(s)); string(got) != string(want) {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("a<b>&\"c\\\n\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, []byte(s)); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestAppendScale2(t *testing.T) {
	for in, want := range map[string]string{"12.50": "12.50", "12.5": "12.50", "13": "13.00", "0.05": "0.05", "1e+06": "1000000.00", "-3.1": "-3.10"} {
		if got := string(appendScale2(nil, []byte(in))); got != want {
			t.Errorf("appendScale2(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	t.Setenv(envPostgres, "")
	t.Setenv(envMySQL, "")
	cases := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *options)
	}{
		{name: "defaults", check: func(t *testing.T, o *options) {
			if diff := cmp.Diff([]dialects.Kind{dialects.SQLite}, o.engines); diff != "" {
				t.Errorf("engines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(scenarioNames(), o.scenarios); diff != "" {
				t.Errorf("scenarios (-want +got):\n%s", diff)
			}
		}},
		{name: "quick keeps explicit values", args: []string{"-quick", "-duration", "1s"}, check: func(t *testing.T, o *options) {
			if o.set.Duration != time.Second || o.set.Rows != 2000 || o.set.Rounds != 1 {
				t.Errorf("settings %+v", o.set)
			}
		}},
		{name: "lists", args: []string{"-scenarios", "byid, post", "-engines", "SQLite"}, check: func(t *testing.T, o *options) {
			if diff := cmp.Diff([]string{"byid", "post"}, o.scenarios); diff != "" {
				t.Errorf("scenarios (-want +got):\n%s", diff)
			}
		}},
		{name: "unknown scenario", args: []string{"-scenarios", "nope"}, wantErr: `unknown scenario "nope"`},
		{name: "engine without DSN", args: []string{"-engines", "pgsql"}, wantErr: "engine pgsql needs " + envPostgres},
		{name: "unknown engine", args: []string{"-engines", "oracle"}, wantErr: `unknown engine "oracle"`},
		{name: "bad numbers", args: []string{"-rounds", "0", "-rows", "10"}, wantErr: "-rows must be at least 1000"},
		{name: "bad latency load", args: []string{"-latency-load", "1.5"}, wantErr: "-latency-load must be in (0, 1]"},
		{name: "extra arguments", args: []string{"now"}, wantErr: "unexpected arguments"},
		{name: "unknown loader", args: []string{"-loader", "ab"}, wantErr: `-loader must be wrk, vegeta or auto, not "ab"`},
		{name: "vegeta loader", args: []string{"-loader", "vegeta"}, check: func(t *testing.T, o *options) {
			if o.set.Loader != "vegeta" || o.set.wrkPath != "" || loaderText(o.set) != "on vegeta" {
				t.Errorf("loader %q, wrk %q, text %q", o.set.Loader, o.set.wrkPath, loaderText(o.set))
			}
		}},
		{name: "auto loader", check: func(t *testing.T, o *options) {
			_, err := exec.LookPath("wrk")
			if want := map[bool]string{true: "wrk", false: "vegeta"}[err == nil]; o.set.Loader != want {
				t.Errorf("auto picked %q, want %q", o.set.Loader, want)
			}
		}},
		{name: "wrk takes whole seconds", args: []string{"-duration", "1500ms", "-rounds", "1"}, check: func(t *testing.T, o *options) {
			if o.set.Loader == "wrk" && loaderText(o.set) != "on vegeta: wrk takes rounds of whole seconds" {
				t.Errorf("text %q", loaderText(o.set))
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(c.args, io.Discard)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, o)
		})
	}
}

func TestPercentile(t *testing.T) {
	lat := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]time.Duration{0.5: 5 * time.Microsecond, 0.99: 10 * time.Microsecond, 0: time.Microsecond} {
		if got := percentile(lat, q); got != want {
			t.Errorf("percentile(%v) = %v, want %v", q, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing")
	}
}

func TestVerifySame(t *testing.T) {
	srv := func(body string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
		t.Cleanup(s.Close)
		return s.URL
	}
	same, other, posted := srv(`{"resource":[{"id":1}]}`), srv(`{"resource":[{"id":2}]}`), srv(`{"resource":[{"id":1}]}`)
	get := func(u string) reqSpec { return reqSpec{Method: http.MethodGet, URL: u} }
	p, b := &side{res: &sideResult{}}, &side{res: &sideResult{}}
	if err := verifySame(t.Context(), get(same), get(posted), false, p, b); err != nil {
		t.Errorf("equal answers: %v", err)
	}
	if err := verifySame(t.Context(), get(same), get(other), false, p, b); err == nil || !strings.Contains(err.Error(), "differ at byte 19") {
		t.Errorf("different answers: %v", err)
	}
	if err := verifySame(t.Context(), get(same), get(other), true, p, b); err != nil {
		t.Errorf("writes are compared with ids masked: %v", err)
	}
	if p.res.BodyBytes != 23 {
		t.Errorf("body bytes %d", p.res.BodyBytes)
	}
}

// BenchmarkInProcess sends the pipeline and rws scenarios' requests
// straight to the Portcullis handler (no sockets on the client side), so
// that -benchmem and -memprofile show what the server alone allocates per
// request: `go test -run X -bench InProcess -benchmem ./bench/`.
func BenchmarkInProcess(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	d, err := createDatabase(ctx, dialects.SQLite, dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := seed(ctx, d, 100); err != nil {
		b.Fatal(err)
	}
	upURL, stopUp, err := serve(upstreamHandler())
	if err != nil {
		b.Fatal(err)
	}
	defer stopUp()
	inst, err := startInstance(ctx, dir, []*database{d}, upURL, false)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.close()
	for _, c := range []struct{ name, path string }{
		{"pipeline", "/api/v2/" + inst.services[dialects.SQLite]},
		{"byid", "/api/v2/" + inst.services[dialects.SQLite] + "/_table/item/7"},
		{"rws", "/api/v2/" + rwsService + "/orders/101?expand=lines"},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := inst.headers()
			call := func() {
				r := httptest.NewRequest(http.MethodGet, c.path, nil)
				r.Header = h.Clone()
				w := httptest.NewRecorder()
				inst.srv.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
				}
			}
			call()
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

// TestOtherClientTitle: the database CPU figure leaves out PostgreSQL
// backends of other databases, and only those.
func TestOtherClientTitle(t *testing.T) {
	for _, c := range []struct {
		title string
		other bool
	}{
		{"postgres: 15/main: postgres test 127.0.0.1(41234) idle", true},
		{"postgres: 15/main: postgres pc_bench_x1y2 127.0.0.1(41234) BIND", false},
		{"postgres: postgres test [local] idle", true},
		{"postgres: postgres pc_bench_ab [local] SELECT\x00\x00\x00", false},
		{"postgres: 15/main: checkpointer   ", false},
		{"postgres: 15/main: walwriter", false},
		{"postgres: 15/main: autovacuum worker test", false},
		{"/usr/lib/postgresql/15/bin/postgres\x00-D\x00/var/lib/postgresql/15/main", false},
		{"postgres: 15/main: logical replication launcher", false},
	} {
		if got := otherClientTitle([]byte(c.title)); got != c.other {
			t.Errorf("%q: other client %v, want %v", c.title, got, c.other)
		}
	}
}
