package accesslog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portcullis-dev/portcullis/handlers/accesslog"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

func TestLogsMetricsAndRedaction(t *testing.T) {
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	stage, err := accesslog.New(accesslog.Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accesslog.SetService(r.Context(), "db")
		if r.URL.Path == "/boom" {
			apierr.Write(w, apierr.Internal(errors.New("database exploded")))
			return
		}
		w.Write([]byte("ok"))
	}))
	for _, target := range []string{"/ok?api_key=SECRETKEY&session_token=SECRETTOKEN&limit=5", "/boom"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	}
	logs := buf.String()
	if strings.Contains(logs, "SECRETKEY") || strings.Contains(logs, "SECRETTOKEN") {
		t.Fatalf("credentials in the access log:\n%s", logs)
	}
	if !strings.Contains(logs, `limit=5`) || !strings.Contains(logs, `"status":500`) || !strings.Contains(logs, "database exploded") {
		t.Fatalf("access log misses the query, the 500 or its cause:\n%s", logs)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		if mf.GetName() == "portcullis_http_requests_total" {
			for _, m := range mf.GetMetric() {
				series++
				for _, l := range m.GetLabel() {
					if l.GetName() == "service" && l.GetValue() != "db" {
						t.Errorf("service label %q, want db", l.GetValue())
					}
				}
			}
		}
	}
	if series != 2 {
		t.Fatalf("%d request series, want 2 (200 and 500)", series)
	}
	if _, err := accesslog.New(accesslog.Options{}); err == nil {
		t.Fatal("New without a logger succeeded")
	}
}

func TestRedactQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a=1", "a=1"},
		{"API_KEY=x&b=2", "API_KEY=%2A%2A%2A&b=2"},
		{"password=p&reset_code=c", "password=%2A%2A%2A&reset_code=%2A%2A%2A"},
		{"%zz", "(unparsable)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := accesslog.RedactQuery(tt.in); got != tt.want {
				t.Fatalf("RedactQuery(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLinesBelowTheLevelAreSkipped(t *testing.T) {
	var buf bytes.Buffer
	stage, err := accesslog.New(accesslog.Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			apierr.Write(w, apierr.Internal(errors.New("cause")))
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/fine", nil))
	if buf.Len() != 0 {
		t.Fatalf("an Info line was written at level Warn: %s", buf.String())
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/boom", nil))
	if !strings.Contains(buf.String(), "request failed") || !strings.Contains(buf.String(), "cause") {
		t.Fatalf("5xx not logged at Error: %s", buf.String())
	}
}

// TestClientClosedIs499: a request whose client went away is logged and
// counted as 499, not as a server error.
func TestClientClosedIs499(t *testing.T) {
	var buf bytes.Buffer
	stage, err := accesslog.New(accesslog.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/upload" {
			apierr.Write(w, apierr.ClientClosed(errors.New("unexpected EOF")))
			return
		}
		<-r.Context().Done()
		apierr.Write(w, apierr.Internal(r.Context().Err()))
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/upload", nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/wait", nil).WithContext(ctx))
	out := buf.String()
	if strings.Count(out, "status=499") != 2 || strings.Contains(out, "status=500") || strings.Contains(out, "request failed") {
		t.Fatalf("client-closed requests logged as:\n%s", out)
	}
}

// TestMetricsPerLabels sends requests of several services, methods and
// statuses, concurrently, to two stages sharing a registry (as the
// pipeline's and the public files' do), and checks every series' count
// and the histograms' sample counts: the stage keeps each series' metrics
// after its first request, and that must count exactly as looking them up
// each time did.
func TestMetricsPerLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	var stages []func(http.Handler) http.Handler
	for range 2 {
		stage, err := accesslog.New(accesslog.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		stages = append(stages, stage)
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if svc := r.URL.Query().Get("svc"); svc != "" {
			accesslog.SetService(r.Context(), svc)
		}
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.WriteHeader(code)
	})
	type series struct{ service, method, code string }
	want := map[series]int{}
	latency := map[[2]string]int{}
	var reqs []*http.Request
	for i := range 400 {
		svc := []string{"", "db", "files"}[i%3]
		method := []string{"GET", "POST", "BREW", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}[i%8]
		code := []int{200, 404, 429, 500}[i%7%4]
		reqs = append(reqs, httptest.NewRequest(method, fmt.Sprintf("/x?svc=%s&code=%d", svc, code), nil))
		label, m := svc, method
		if label == "" {
			label = "unknown"
		}
		if m == "BREW" {
			m = "OTHER"
		}
		want[series{label, m, strconv.Itoa(code)}]++
		latency[[2]string{label, m}]++
	}
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() { stages[i%2](inner).ServeHTTP(httptest.NewRecorder(), r) })
	}
	wg.Wait()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[series]int{}
	gotLatency := map[[2]string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			switch mf.GetName() {
			case "portcullis_http_requests_total":
				got[series{l["service"], l["method"], l["status"]}] = int(m.GetCounter().GetValue())
			case "portcullis_http_request_duration_seconds":
				gotLatency[[2]string{l["service"], l["method"]}] = int(m.GetHistogram().GetSampleCount())
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("request series:\n got %v\nwant %v", got, want)
	}
	if !maps.Equal(gotLatency, latency) {
		t.Errorf("latency samples:\n got %v\nwant %v", gotLatency, latency)
	}
}
