package sqldb_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// TestLargePages reads pages bigger than the streaming buffer, with and
// without related records, and requires the same bytes from every engine.
func TestLargePages(t *testing.T) {
	got := map[string]map[dialects.Kind]string{}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		var sb strings.Builder
		sb.WriteString("INSERT INTO orders (customer_id, total, placed) VALUES ")
		for i := range 1500 {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "(%d, %d.%02d, '2024-%02d-%02d')", i%4+1, i, i%100, i%12+1, i%28+1)
		}
		if _, err := e.db.ExecContext(t.Context(), sb.String()); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{
			"_table/orders?limit=1000",
			"_table/orders?limit=1000&offset=1000&related=customer_by_customer_id,tag_by_order_tag",
			"_table/customer?related=orders_by_customer_id&fields=id",
		} {
			status, body := e.do(t, "GET", q(p), nil)
			if status != 200 {
				t.Fatalf("%s: %d %s", p, status, body)
			}
			var v struct {
				Resource []json.RawMessage `json:"resource"`
				Meta     map[string]int    `json:"meta"`
			}
			if err := json.Unmarshal([]byte(body), &v); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if strings.Contains(p, "offset=1000") {
				if len(v.Resource) != 504 || v.Meta != nil {
					t.Errorf("%s: %d records, meta %v", p, len(v.Resource), v.Meta)
				}
			} else if strings.HasPrefix(p, "_table/orders") && (len(v.Resource) != 1000 || v.Meta["next"] != 1000) {
				t.Errorf("%s: %d records, meta %v", p, len(v.Resource), v.Meta)
			}
			if got[p] == nil {
				got[p] = map[dialects.Kind]string{}
			}
			got[p][cfg.Kind] = body
		}
	})
	for p, byKind := range got {
		for k, body := range byKind {
			if base, ok := byKind[dialects.SQLite]; ok && body != base {
				t.Errorf("%s: %s differs from sqlite:\n%s", p, k, cmp.Diff(base, body))
			}
		}
	}
}
