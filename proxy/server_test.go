package proxy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

func TestHealthMetricsAndUnknownService(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		c := in.API()
		if r := c.Do(t, "GET", "/healthz", nil); r.Status != http.StatusOK {
			t.Fatalf("healthz = %d %s", r.Status, r.Body)
		}
		r := c.Do(t, "GET", "/api/v2/nosuch/_table", nil)
		if r.Status != http.StatusNotFound {
			t.Fatalf("unknown service = %d", r.Status)
		}
		env := r.Map(t)["error"].(map[string]any)
		if env["code"].(float64) != 404 || env["status_code"].(float64) != 404 || env["context"] != nil ||
			!strings.Contains(env["message"].(string), "nosuch") {
			t.Fatalf("envelope = %v", env)
		}
		if r := c.Do(t, "GET", "/api/v2/System", nil); r.Status != http.StatusNotFound {
			t.Fatalf("service names must match case-sensitively, got %d", r.Status)
		}
		if r := c.Do(t, "GET", "/metrics", nil); r.Status != 200 || !strings.Contains(string(r.Body), "portcullis_http_requests_total") {
			t.Fatalf("metrics = %d", r.Status)
		}
		if r := c.Do(t, "TRACE", "/api/v2/system", nil); r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("TRACE = %d", r.Status)
		}
	})
}

func TestOversizedBodyIs413(t *testing.T) {
	in := proxytest.StartSQLite(t)
	big := strings.Repeat("x", 17<<20)
	r := in.API().Do(t, "POST", "/api/v2/db/_table/t", big)
	if r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.Body), `"code":413`) {
		t.Fatalf("oversized body = %d %s", r.Status, r.Body)
	}
}
