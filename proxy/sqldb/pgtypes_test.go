package sqldb_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// TestBoundValuesOfPostgresTypes writes and filters PostgreSQL's own
// column types with bound parameters (the values travel apart from the
// text, so each must be encodable for its column's type).
func TestBoundValuesOfPostgresTypes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		if cfg.Kind != dialects.Postgres {
			t.Skip("PostgreSQL types")
		}
		db := dbtest.Open(t, cfg)
		if _, err := db.ExecContext(t.Context(), `CREATE TABLE typed (id SERIAL PRIMARY KEY, u UUID, j JSONB, js JSON,
			n NUMERIC(10,2), d DATE, ts TIMESTAMPTZ, b BOOLEAN, big BIGINT, r REAL, t TEXT, ip INET, iv INTERVAL, tm TIME)`); err != nil {
			t.Fatal(err)
		}
		d := newDirectOn(t, cfg)
		rec := map[string]any{"u": "6f1c2b9e-1d2a-4c4e-9a47-0c9f1d9a7b11", "j": map[string]any{"a": 1}, "js": []any{1, "x"},
			"n": "12.50", "d": "2024-02-29", "ts": "2024-02-29T10:11:12Z", "b": true, "big": 9007199254740993, "r": 1.5,
			"t": "it's", "ip": "10.1.2.3", "iv": "1 day", "tm": "10:11:12"}
		code, body := d.call(t, nil, http.MethodPost, "_table/typed", map[string]any{"resource": []any{rec}})
		if code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		if code, body := d.call(t, nil, http.MethodGet, "_table/typed/1", nil); code != http.StatusOK || !strings.Contains(body, `"j":{"a":1}`) || !strings.Contains(body, `"n":12.50`) || !strings.Contains(body, `"big":9007199254740993`) {
			t.Errorf("read back: %d %s", code, body)
		}
		for _, f := range []string{"u='6f1c2b9e-1d2a-4c4e-9a47-0c9f1d9a7b11'", "n=12.5", "d='2024-02-29'", "b=true", "big=9007199254740993",
			"t='it''s'", "ip='10.1.2.3'", "ts>'2024-01-01'"} {
			code, body := d.call(t, nil, http.MethodGet, "_table/typed?filter="+f, nil)
			if code != http.StatusOK || !strings.Contains(body, `"id":1`) {
				t.Errorf("filter %s: %d %s", f, code, body)
			}
		}
	})
}
