package enforce_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/handlers/enforce"
	"github.com/portcullis-dev/portcullis/proxy/contract"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// source serves a fixed schema.
type source struct{ s *dialects.Schema }

func (s *source) ContractSchema(context.Context, time.Duration) (*dialects.Schema, error) {
	return s.s, nil
}

func table(cols ...string) *dialects.Table {
	t := &dialects.Table{Name: "item", PrimaryKey: []string{"id"}}
	for _, c := range cols {
		t.Columns = append(t.Columns, &dialects.Column{Name: c, Type: dialects.TypeString, AllowNull: true})
	}
	return t
}

// setup locks table item with columns id and name under mode, and serves
// a live schema whose item has cols.
func setup(t testing.TB, mode string, cols ...string) (http.Handler, *int) {
	locked := contract.FromTable(dialects.NewSchema([]*dialects.Table{table("id", "name")}).Table("item"))
	svc := &store.Service{ID: 7, Name: "db", Type: "sqlite"}
	snap := store.NewSnapshot([]*store.Service{svc}, nil, nil).WithContracts(
		[]*store.SchemaContract{{ServiceID: 7, ServiceName: "db", Mode: "auto", RuntimeEnforcement: mode, Enabled: true}},
		[]*store.SchemaSnapshot{{ID: 1, ServiceID: 7, TableName: "item", ContractVersion: 3, Status: "active",
			SchemaHash: locked.Hash(), SchemaJSON: string(locked.JSON())}})
	src := &source{dialects.NewSchema([]*dialects.Table{table(cols...)})}
	stage, err := enforce.New(enforce.Options{
		Snapshot: func() *store.Snapshot { return snap },
		Source:   func(string) (contract.Source, bool) { return src, true },
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		rec := map[string]any{}
		for _, c := range cols {
			rec[c] = c
		}
		json.NewEncoder(w).Encode(map[string]any{"resource": []any{rec}})
	})
	h := stage(backend)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := strings.TrimPrefix(r.URL.Path, "/")
		h.ServeHTTP(w, r.WithContext(service.WithTarget(r.Context(), &service.Target{Service: svc, Resource: res, Verb: r.Method})))
	}), &calls
}

func TestStage(t *testing.T) {
	tests := []struct {
		name, mode, method, path string
		cols                     []string
		status                   int
		want                     string // a key the answer must (+) or must not (-) hold
		reached                  bool
	}{
		{"off leaves everything", "off", "GET", "/_table/item", []string{"id", "name", "extra"}, 200, "+extra", true},
		{"shape drops new fields", "shape_response", "GET", "/_table/item", []string{"id", "name", "extra"}, 200, "-extra", true},
		{"shape with no drift", "shape_response", "GET", "/_table/item", []string{"id", "name"}, 200, "+name", true},
		{"shape allows writes", "shape_response", "POST", "/_table/item", []string{"id", "name", "extra"}, 200, "-extra", true},
		{"strict refuses writes on drift", "strict", "POST", "/_table/item", []string{"id", "name", "extra"}, 400, "+context", false},
		{"strict refuses deletes on drift", "strict", "DELETE", "/_table/item/1", []string{"id", "extra"}, 400, "+context", false},
		{"strict reads are shaped", "strict", "GET", "/_table/item", []string{"id", "name", "extra"}, 200, "-extra", true},
		{"strict writes without drift", "strict", "PATCH", "/_table/item/1", []string{"id", "name"}, 200, "+name", true},
		{"other tables untouched", "strict", "POST", "/_table/other", []string{"id", "name", "extra"}, 200, "+extra", true},
		{"schema requests untouched", "strict", "POST", "/_schema/item", []string{"id", "name", "extra"}, 200, "+extra", true},
		{"table names match case-insensitively", "strict", "POST", "/_table/ITEM", []string{"id", "name", "extra"}, 400, "+context", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, calls := setup(t, tc.mode, tc.cols...)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{"resource":[{"name":"x"}]}`)))
			if rec.Code != tc.status || (*calls > 0) != tc.reached {
				t.Fatalf("status %d, backend reached %v: %s", rec.Code, *calls > 0, rec.Body)
			}
			key := `"` + tc.want[1:] + `"`
			if has := strings.Contains(rec.Body.String(), key); has != (tc.want[0] == '+') {
				t.Errorf("body %s: want %s", rec.Body, tc.want)
			}
		})
	}
}

// BenchmarkStage measures the stage on a table read: a table without a
// contract, a contract with no drift, and a drifted table (buffered and
// shaped). Compare the ratios against "no contract".
func BenchmarkStage(b *testing.B) {
	for _, bc := range []struct {
		name, path string
		cols       []string
	}{
		{"no contract", "/_table/other", []string{"id", "name"}},
		{"no drift", "/_table/item", []string{"id", "name"}},
		{"drifted", "/_table/item", []string{"id", "name", "extra"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, _ := setup(b, "strict", bc.cols...)
			req := httptest.NewRequest("GET", bc.path, nil)
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
