package sqldb_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestOddNames uses tables and columns whose names hold quotes, question
// marks, spaces, mixed case and SQL keywords.
func TestOddNames(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		ctx := t.Context()
		table := `Odd "Tab"?`
		if _, err := e.db.NewRaw("CREATE TABLE ? (? INTEGER PRIMARY KEY, ? VARCHAR(20), ? INTEGER)",
			bun.Ident(table), bun.Ident("ID"), bun.Ident("Select?"), bun.Ident("order")).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		b, _ := e.in.Proxy.Backend("data")
		if err := b.(service.CacheFlusher).FlushCache(ctx); err != nil {
			t.Fatal(err)
		}
		p := "_table/Odd%20%22Tab%22%3F"
		for _, s := range []step{
			{name: "create", method: "POST", path: p, body: res(rec("id", 1, "select?", "a'b", "ORDER", 3), rec("Id", 2, "Select?", "x?y", "order", 4)), status: 200,
				want: `{"resource":[{"id":1},{"id":2}]}`},
			{name: "list", method: "GET", path: p, status: 200, want: `{"resource":[{"id":1,"select?":"a'b","order":3},{"id":2,"select?":"x?y","order":4}]}`},
			{name: "filter quoted names", method: "GET", path: p + "?filter=" + "%60Select%3F%60%20%3D%20%27x%3Fy%27%20and%20%22order%22%20%3E%202", status: 200, ids: []int{2}},
			{name: "order and fields", method: "GET", path: p + "?fields=%60order%60&order=%60order%60%20desc", status: 200, want: `{"resource":[{"order":4},{"order":3}]}`},
			{name: "patch", method: "PATCH", path: p + "/1", body: rec("ORDER", 9), status: 200, want: `{"id":1,"select?":"a'b","order":9}`},
			{name: "delete", method: "DELETE", path: p + "?ids=2", status: 200, want: `{"resource":[{"id":2}]}`},
		} {
			status, body := e.do(t, s.method, s.path, s.body)
			checkStep(t, s, status, body)
		}
	})
}

// TestSchemaChanges shows that the cached schema follows the database:
// new tables are found, dropped and re-created columns are re-read, and
// FlushCache forgets everything.
func TestSchemaChanges(t *testing.T) {
	defer sqldb.SetSchemaRetryAge(0)()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		ctx := t.Context()
		if status, body := e.do(t, "GET", "_table/fresh", nil); status != 404 {
			t.Fatalf("before: %d %s", status, body)
		}
		if _, err := e.db.ExecContext(ctx, "CREATE TABLE fresh (id INTEGER PRIMARY KEY, a VARCHAR(5), b INTEGER)"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.ExecContext(ctx, "INSERT INTO fresh VALUES (1, 'x', 2)"); err != nil {
			t.Fatal(err)
		}
		status, body := e.do(t, "GET", "_table/fresh", nil)
		checkStep(t, step{name: "new table found", status: 200, want: `{"resource":[{"id":1,"a":"x","b":2}]}`}, status, body)
		// A column dropped behind the cache: the read is retried on the
		// schema read anew.
		if _, err := e.db.ExecContext(ctx, "ALTER TABLE fresh DROP COLUMN b"); err != nil {
			t.Fatal(err)
		}
		status, body = e.do(t, "GET", "_table/fresh", nil)
		checkStep(t, step{name: "dropped column", status: 200, want: `{"resource":[{"id":1,"a":"x"}]}`}, status, body)
		if _, err := e.db.ExecContext(ctx, "ALTER TABLE fresh ADD COLUMN c INTEGER"); err != nil {
			t.Fatal(err)
		}
		b, _ := e.in.Proxy.Backend("data")
		if err := b.(service.CacheFlusher).FlushCache(ctx); err != nil {
			t.Fatal(err)
		}
		status, body = e.do(t, "GET", "_table/fresh", nil)
		checkStep(t, step{name: "added column after flush", status: 200, want: `{"resource":[{"id":1,"a":"x","c":null}]}`}, status, body)
	})
}
