package cors_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/portcullis-dev/portcullis/handlers/cors"
)

func TestCORS(t *testing.T) {
	set, err := cors.Compile([]cors.Rule{
		{Path: "*", Origins: []string{"https://any.example"}, Methods: []string{"GET"}},
		{Path: "api/v2/*", Origins: []string{"https://app.example"}, Methods: []string{"GET", "POST"},
			Headers: []string{"X-Platform-API-Key", "Content-Type"}, ExposedHeaders: []string{"X-RateLimit-Limit"}, MaxAge: 600, SupportsCredentials: true},
		{Path: "^/?api/v2/open/.*", Origins: []string{"*"}, Methods: []string{"GET", "DELETE"}, Headers: []string{"*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	stage, err := cors.New(cors.Options{Rules: func() *cors.Set { return set }})
	if err != nil {
		t.Fatal(err)
	}
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }))
	tests := []struct {
		name, method, path, origin, reqMethod, reqHeaders string
		status                                            int
		header                                            map[string]string
	}{
		{"no origin passes", "GET", "/api/v2/db", "", "", "", 299, map[string]string{"Access-Control-Allow-Origin": ""}},
		{"longest path wins", "GET", "/api/v2/db", "https://app.example", "", "", 299,
			map[string]string{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true", "Access-Control-Expose-Headers": "X-RateLimit-Limit"}},
		{"unknown origin gets nothing", "GET", "/api/v2/db", "https://evil.example", "", "", 299, map[string]string{"Access-Control-Allow-Origin": ""}},
		{"preflight allowed", "OPTIONS", "/api/v2/db", "https://app.example", "POST", "content-type", 204,
			map[string]string{"Access-Control-Allow-Methods": "GET, POST", "Access-Control-Max-Age": "600", "Access-Control-Allow-Headers": "X-Platform-API-Key, Content-Type"}},
		{"preflight method refused", "OPTIONS", "/api/v2/db", "https://app.example", "DELETE", "", 405, nil},
		{"regex rule with any origin and any header", "OPTIONS", "/api/v2/open/x", "https://z.example", "DELETE", "X-Custom", 204,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "X-Custom"}},
		{"catch-all rule elsewhere", "GET", "/healthz", "https://any.example", "", "", 299, map[string]string{"Access-Control-Allow-Origin": "https://any.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.reqMethod != "" {
				r.Header.Set("Access-Control-Request-Method", tt.reqMethod)
			}
			if tt.reqHeaders != "" {
				r.Header.Set("Access-Control-Request-Headers", tt.reqHeaders)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d (%s)", w.Code, tt.status, w.Body)
			}
			for k, v := range tt.header {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	if _, err := cors.Compile([]cors.Rule{{Path: "^([", Origins: []string{"*"}}}); err == nil {
		t.Error("invalid regex accepted")
	}
}
