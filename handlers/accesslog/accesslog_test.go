package accesslog_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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
