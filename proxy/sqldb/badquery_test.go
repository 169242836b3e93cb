package sqldb_test

import (
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// TestBadGroupingIs400 reproduces issue 16: a column that is neither
// grouped nor aggregated, in fields or in having, was a 500 on PostgreSQL
// and a 409 "structure changed" on MySQL. It is the client's mistake: 400
// with the database's reason, on every engine. A negative limit is a 400
// too (it used to return every row).
func TestBadGroupingIs400(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for _, p := range []string{
			"_table/orders?fields=id,customer_id&group=customer_id",
			"_table/orders?fields=customer_id&group=customer_id&having=total>5",
			"_table/orders?limit=-5",
		} {
			status, body := e.do(t, "GET", q(p), nil)
			if status == 200 && (cfg.Kind == dialects.SQLite && !strings.Contains(p, "limit") ||
				cfg.Kind == dialects.MySQL && strings.HasPrefix(p, "_table/orders?fields=id,")) {
				continue // SQLite, and MariaDB without ONLY_FULL_GROUP_BY, allow bare columns in a grouped query
			}
			if status != 400 || !strings.Contains(body, `"message"`) {
				t.Errorf("%s = %d %s; want 400", p, status, body)
			}
		}
		if status, body := e.do(t, "GET", q("_table/orders?fields=customer_id,count(id) as n&group=customer_id&having=count(id)>1"), nil); status != 200 {
			t.Errorf("valid having = %d %s", status, body)
		}
	})
}
