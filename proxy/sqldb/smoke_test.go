package sqldb_test

import (
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

func TestSmoke(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for _, c := range []struct{ m, p string; b any }{
			{"GET", "", nil},
			{"GET", "_table", nil},
			{"GET", "_table/customer", nil},
			{"GET", "_table/customer/2", nil},
			{"GET", "_table/customer?filter=age>26&fields=id,name&order=name desc&include_count=true", nil},
			{"GET", "_table/customer?related=*&limit=2", nil},
			{"GET", "_table/orders?related=*", nil},
			{"POST", "_table/customer", map[string]any{"resource": []any{map[string]any{"name": "Eve", "age": 22}}}},
			{"PATCH", "_table/customer/1", map[string]any{"age": 31}},
			{"DELETE", "_table/customer/5", nil},
			{"GET", "_table/customer?count_only=true", nil},
		} {
			s, b := e.do(t, c.m, c.p, c.b)
			t.Logf("%s %s → %d %s", c.m, c.p, s, b)
		}
	})
}
