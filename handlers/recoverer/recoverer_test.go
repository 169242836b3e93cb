package recoverer_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/handlers/recoverer"
)

func TestPanicBecomesA500InTheEnvelope(t *testing.T) {
	var logs bytes.Buffer
	stage, err := recoverer.New(recoverer.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := stage(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v2/db", nil))
	if w.Code != 500 || !strings.Contains(w.Body.String(), `"code":500`) || strings.Contains(w.Body.String(), "kaboom") {
		t.Fatalf("response = %d %s (the panic value must not reach the client)", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "kaboom") || !strings.Contains(logs.String(), "stack") {
		t.Fatalf("panic not logged with its stack:\n%s", logs.String())
	}
	if _, err := recoverer.New(recoverer.Options{}); err == nil {
		t.Fatal("New without a logger succeeded")
	}
}

func TestAbortHandlerPanicPassesThrough(t *testing.T) {
	stage, _ := recoverer.New(recoverer.Options{Logger: slog.New(slog.DiscardHandler)})
	h := stage(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler re-panicked", v)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
}
