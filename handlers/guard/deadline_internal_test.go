package guard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestCanSetWriteDeadline: the writers the guard wraps are those whose
// deadline http.ResponseController can set.
func TestCanSetWriteDeadline(t *testing.T) {
	check := func(name string, w http.ResponseWriter, want bool) {
		t.Helper()
		if got := canSetWriteDeadline(w); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
		err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute))
		if ctl := !errors.Is(err, http.ErrNotSupported); ctl != want {
			t.Errorf("%s: ResponseController can set it: %v (%v)", name, ctl, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		check("server's writer", w, true)
		check("wrapped server's writer", &deadlineWriter{ResponseWriter: w}, true)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rec := httptest.NewRecorder()
	check("recorder", rec, false)
	check("wrapped recorder", &deadlineWriter{ResponseWriter: rec}, false)
}
