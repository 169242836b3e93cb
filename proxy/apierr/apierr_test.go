package apierr_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

func render(t *testing.T, err error) (int, http.Header, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	apierr.Write(w, err)
	var env map[string]any
	if e := json.Unmarshal(w.Body.Bytes(), &env); e != nil {
		t.Fatalf("not JSON: %s", w.Body)
	}
	return w.Code, w.Header(), env["error"].(map[string]any)
}

func TestEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		code   float64
		msg    string
	}{
		{"bad request", apierr.BadRequest("Field '%s' is required.", "name"), 400, 400, "Field 'name' is required."},
		{"invalid json", apierr.InvalidJSON(errors.New("unexpected EOF")), 400, 400, "Invalid or malformed JSON: unexpected EOF"},
		{"not found", apierr.NotFound("Record with identifier '5' not found."), 404, 404, "Record with identifier '5' not found."},
		{"conflict", apierr.Conflict("Duplicate entry."), 409, 409, "Duplicate entry."},
		{"wrapped", fmt.Errorf("layer: %w", apierr.Forbidden("No.")), 403, 403, "No."},
		{"unknown error hides its cause", errors.New("password=hunter2 connection failed"), 500, 500, "An internal error occurred."},
		{"too large", &http.MaxBytesError{Limit: 10}, 413, 413, "Request body exceeds the limit of 10 bytes."},
		{"batch", apierr.Batch("Batch Error: Not all requested records could be created.", []apierr.BatchItem{{Index: 1, Message: "bad"}}, nil), 400, 1000, "Batch Error: Not all requested records could be created."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, env := render(t, tt.err)
			if status != tt.status || env["code"] != tt.code || env["status_code"] != float64(tt.status) || env["message"] != tt.msg {
				t.Fatalf("got %d %v", status, env)
			}
			if h.Get("Content-Type") != "application/json" {
				t.Fatalf("content type %q", h.Get("Content-Type"))
			}
			if _, ok := env["context"]; !ok {
				t.Fatal("context key missing (must be present, null when empty)")
			}
		})
	}
	_, _, env := render(t, apierr.Batch("x", []apierr.BatchItem{{Index: 2, Message: "dup"}}, nil))
	want := map[string]any{"errors": []any{map[string]any{"index": float64(2), "message": "dup"}}}
	if d := cmp.Diff(want, env["context"]); d != "" {
		t.Fatalf("batch context (-want +got):\n%s", d)
	}
	e := apierr.TooManyRequests("slow down")
	e.Header = http.Header{"Retry-After": {"7"}}
	if _, h, _ := render(t, e); h.Get("Retry-After") != "7" {
		t.Fatal("error headers not written")
	}
}

func TestUnmarshal(t *testing.T) {
	var v map[string]any
	for _, bad := range []string{`{"a":`, `{"a":1} trailing`, `[1,]`, `{}}`, `{"a":1}]`} {
		if err := apierr.Unmarshal([]byte(bad), &v, false); apierr.As(err).Status != 400 {
			t.Errorf("Unmarshal(%q) = %v, want a 400", bad, err)
		}
	}
	if err := apierr.Unmarshal([]byte("  "), &v, true); err != nil {
		t.Errorf("empty body with allowEmpty: %v", err)
	}
	if err := apierr.Unmarshal([]byte(""), &v, false); err == nil || !strings.Contains(err.Error(), "No record") {
		t.Errorf("empty body: %v", err)
	}
	var typed struct{ N int }
	if err := apierr.Unmarshal([]byte(`{"N":"x"}`), &typed, false); err == nil || !strings.Contains(apierr.As(err).Message, "'N'") {
		t.Errorf("type error: %v", err)
	}
}
