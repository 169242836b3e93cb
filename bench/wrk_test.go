package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// TestRunWrk drives an httptest server with wrk: every target is sent with
// its method, headers and body, in turn, and the counts, failures and
// latencies come back. It needs wrk (Debian: apt-get install wrk) and
// says so when it is missing.
func TestRunWrk(t *testing.T) {
	if testing.Short() {
		t.Skip("a second of load; skipped with -short")
	}
	path, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not installed (apt-get install wrk); the max-rate rounds fall back to vegeta")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Key")+" "+string(body)]++
		mu.Unlock()
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	j := job{Duration: jsonDuration(time.Second), Workers: 4, Wrk: path, Targets: []reqSpec{
		{Method: http.MethodGet, URL: srv.URL + "/a?x=1&y=%27q%27", Header: http.Header{"X-Key": {"k\"1]]"}}},
		{Method: http.MethodPost, URL: srv.URL + "/b", Header: http.Header{"X-Key": {"k2"}}, Body: []byte("{\"n\":\"]==]\\u00e9\"}")},
	}}
	if _, _, ok := wrkUsable(j); !ok {
		t.Fatal("a one-second max-rate job on one server should run on wrk")
	}
	res, err := runAttack(j, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 100 || res.Succeeded != res.Requests || len(res.Errors) != 0 {
		t.Fatalf("requests %d, succeeded %d, errors %v", res.Requests, res.Succeeded, res.Errors)
	}
	if e := time.Duration(res.Elapsed); e < 900*time.Millisecond || e > 2*time.Second {
		t.Errorf("elapsed %v", e)
	}
	if len(res.Latencies) != wrkLatencies || res.Latencies[0] > res.Latencies[len(res.Latencies)-1] {
		t.Errorf("%d latencies, first %v", len(res.Latencies), res.Latencies[:1])
	}
	if res.CPU <= 0 {
		t.Error("wrk's CPU time is missing")
	}
	mu.Lock()
	a, b := seen["GET /a?x=1&y=%27q%27 k\"1]] "], seen["POST /b k2 {\"n\":\"]==]\\u00e9\"}"]
	mu.Unlock()
	if a == 0 || b == 0 || a+b < res.Requests || len(seen) != 2 {
		t.Errorf("the server saw %v", seen)
	}

	// Answers of 400 and more are failures.
	j.Targets = []reqSpec{{Method: http.MethodGet, URL: srv.URL + "/bad"}}
	res, err = runAttack(j, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Succeeded != 0 || len(res.Errors) != 1 {
		t.Errorf("teapots: requests %d, succeeded %d, errors %v", res.Requests, res.Succeeded, res.Errors)
	}
}

// TestWrkUsable: wrk takes max-rate jobs of whole seconds on one http
// server only; the others stay on vegeta.
func TestWrkUsable(t *testing.T) {
	one := []reqSpec{{Method: http.MethodGet, URL: "http://127.0.0.1:1/a"}}
	for _, c := range []struct {
		name string
		j    job
		want bool
	}{
		{"max rate, 1s", job{Duration: jsonDuration(time.Second), Targets: one}, true},
		{"max rate, 2s", job{Duration: jsonDuration(2 * time.Second), Targets: one}, true},
		{"paced", job{Rate: 100, Duration: jsonDuration(time.Second), Targets: one}, false},
		{"500ms", job{Duration: jsonDuration(500 * time.Millisecond), Targets: one}, false},
		{"1.5s", job{Duration: jsonDuration(1500 * time.Millisecond), Targets: one}, false},
		{"no targets", job{Duration: jsonDuration(time.Second)}, false},
		{"two servers", job{Duration: jsonDuration(time.Second), Targets: append(one, reqSpec{Method: http.MethodGet, URL: "http://127.0.0.1:2/a"})}, false},
		{"https", job{Duration: jsonDuration(time.Second), Targets: []reqSpec{{Method: http.MethodGet, URL: "https://127.0.0.1:1/a"}}}, false},
	} {
		if _, _, got := wrkUsable(c.j); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
