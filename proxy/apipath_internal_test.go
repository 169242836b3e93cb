package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestIsCleanAPIPath: only paths the root mux would hand to the /api/v2
// pipeline unchanged skip it; anything it would clean, redirect or route
// elsewhere still goes through it.
func TestIsCleanAPIPath(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/api/v2", true},
		{"GET", "/api/v2/", true},
		{"GET", "/api/v2/db/_table/item/7", true},
		{"POST", "/api/v2/db/_table/item", true},
		{"GET", "/api/v2x", false},
		{"GET", "/api/v1/db", false},
		{"GET", "/api/docs/", false},
		{"GET", "/healthz", false},
		{"GET", "/api/v2//db", false},
		{"GET", "/api/v2/db/./_table", false},
		{"GET", "/api/v2/db/../system", false},
		{"GET", "/api/v2/db/..", false},
		{"GET", "/api/v2/db/.", false},
		{"CONNECT", "/api/v2/db", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Method, r.URL.Path = c.method, c.path
		if got := isCleanAPIPath(r); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.method, c.path, got, c.want)
		}
	}
}
