package requestid_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/handlers/requestid"
)

func TestRequestID(t *testing.T) {
	tests := []struct {
		name     string
		trust    bool
		incoming string
		keep     bool
	}{
		{"generated when absent", true, "", false},
		{"client id kept when trusted", true, "abc-123_x.y", true},
		{"client id replaced when not trusted", false, "abc-123", false},
		{"hostile id replaced", true, "abc\r\nX-Evil: 1", false},
		{"overlong id replaced", true, strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stage, err := requestid.New(requestid.Options{TrustClient: tt.trust})
			if err != nil {
				t.Fatal(err)
			}
			var seen string
			h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = requestid.From(r.Context()) }))
			r := httptest.NewRequest("GET", "/", nil)
			if tt.incoming != "" {
				r.Header[requestid.Header] = []string{tt.incoming}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			got := w.Header().Get(requestid.Header)
			if got == "" || got != seen {
				t.Fatalf("header %q, context %q", got, seen)
			}
			if (got == tt.incoming) != tt.keep {
				t.Fatalf("id = %q (incoming %q), keep = %v", got, tt.incoming, tt.keep)
			}
		})
	}
}

// TestGeneratedIDs: a generated id is 24 lowercase hex digits, and ids do
// not repeat.
func TestGeneratedIDs(t *testing.T) {
	stage, err := requestid.New(requestid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := stage(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	seen := map[string]bool{}
	for range 2000 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		id := w.Header().Get(requestid.Header)
		if len(id) != 24 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("id %q: want 24 lowercase hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q generated twice", id)
		}
		seen[id] = true
	}
}
