package sqldb_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestNativeCreateMatchesGeneral posts one record at a time with the pgx
// INSERT of PostgreSQL on and off (database/sql's statement) on every
// engine, each into a database of its own: the same status and bytes,
// and the same tables afterwards.
func TestNativeCreateMatchesGeneral(t *testing.T) {
	c := "_table/customer"
	posts := []struct{ target, body string }{
		{c, `{"resource":[{"name":"Eve","email":"eve@example.com","age":33,"active":false,"balance":12.5,"rating":4.25,"born":"1991-02-03","created":"2024-05-06 07:08:09","notes":"n"}]}`},
		{c, `[{"name":"Fay"}]`},
		{c, `{"resource":[{"id":50,"name":"Gus"}]}`},
		{c, `{"resource":[{"name":"Hal","active":null,"notes":null,"age":null}]}`},
		{c, `{"resource":[{"name":"Ida","age":"12","balance":"7","rating":1e2}]}`},
		{c, `{"resource":[{"name":"Lu","age":"abc"}]}`},
		{c, `{"resource":[{"name":"Mo","born":"2024-01-31T23:30:00-02:00","created":"2024-01-31T10:00:00Z"}]}`},
		{c, `{"resource":[{"name":"O\u00e9\ud83d\ude00\"\\\/","notes":"tab\there"}]}`},
		{c, `{"resource":[{"name":"nul\u0000"}]}`},
		{c, `{"resource":[{"name":"Dup","email":"alice@example.com"}]}`},
		{c, `{"resource":[{"id":1,"name":"Dup key"}]}`},
		{"_table/orders", `{"resource":[{"customer_id":2,"total":"3.10","placed":"2024-03-04"}]}`},
		{"_table/orders", `{"resource":[{"customer_id":99,"total":1}]}`},
		{"_table/tag", `{"resource":[{"id":9,"label":"nine"}]}`},
		{"_table/tag", `{"resource":[{"label":"no id"}]}`},
		{"_table/order_tag", `{"resource":[{"order_id":2,"tag_id":3}]}`},
		{"_table/order_tag", `{"resource":[{"order_id":2}]}`},
		{"_table/nokey", `{"resource":[{"a":3,"b":"three"}]}`},
	}
	all := []string{"_table/customer?order=id", "_table/orders?order=id", "_table/tag?order=id",
		"_table/order_tag?order=order_id,tag_id", "_table/nokey?order=a,b"}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		native := newDirect(t, cfg)
		general := newDirect(t, dbtest.Fresh(t, cfg.Kind))
		for round := range 2 { // the second time on prepared statements
			for _, p := range posts {
				ns, nb := native.call(t, nil, http.MethodPost, p.target, rawBody(p.body))
				restore := sqldb.SetNativePG(false)
				gs, gb := general.call(t, nil, http.MethodPost, p.target, rawBody(p.body))
				restore()
				if ns != gs || nb != gb {
					t.Errorf("round %d, POST %s %s:\n native  %d %s\n general %d %s", round, p.target, p.body, ns, nb, gs, gb)
				}
			}
		}
		for _, target := range all {
			ns, nb := native.call(t, nil, http.MethodGet, target, nil)
			gs, gb := general.call(t, nil, http.MethodGet, target, nil)
			if ns != http.StatusOK || ns != gs || nb != gb {
				t.Errorf("%s after the posts:\n native  %d %s\n general %d %s", target, ns, nb, gs, gb)
			}
		}
	})
}

// TestPostgresNativeCreateAfterTypeChange posts into a column whose type
// then changes: the next POST is prepared for the new type at once, and
// keys of other types (a UUID made by the database) read back as the
// general path reads them.
func TestPostgresNativeCreateAfterTypeChange(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	for _, q := range []string{
		`CREATE TABLE thing (id BIGSERIAL PRIMARY KEY, v INTEGER)`,
		`CREATE TABLE uthing (id UUID PRIMARY KEY DEFAULT gen_random_uuid(), v TEXT)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d := newDirectOn(t, cfg)
	post := func(target, body string) (int, string) {
		t.Helper()
		return d.call(t, nil, http.MethodPost, target, rawBody(body))
	}
	for range 3 {
		if s, b := post("_table/thing", `{"resource":[{"v":7}]}`); s != http.StatusOK {
			t.Fatalf("before: %d %s", s, b)
		}
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE thing ALTER COLUMN v TYPE TEXT`); err != nil {
		t.Fatal(err)
	}
	d.b.(interface{ InvalidateSchema() }).InvalidateSchema()
	if s, b := post("_table/thing", `{"resource":[{"v":"not a number"}]}`); s != http.StatusOK || b != `{"resource":[{"id":4}]}`+"\n" {
		t.Errorf("after a type change: %d %s", s, b)
	}
	s, nb := post("_table/uthing", `{"resource":[{"v":"x"}]}`)
	restore := sqldb.SetNativePG(false)
	gs, gb := post("_table/uthing", `{"resource":[{"v":"y"}]}`)
	restore()
	if s != gs || len(nb) != len(gb) || !strings.HasPrefix(nb, `{"resource":[{"id":"`) {
		t.Errorf("UUID key: native %d %s, general %d %s", s, nb, gs, gb)
	}
}
