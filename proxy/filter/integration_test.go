package filter

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite"
)

// engine is one database with the test tables created and filled.
type engine struct {
	name string
	db   *bun.DB
	s    itemsSchema
}

// The test data. Names hold LIKE wildcards, a quote, a backslash and
// non-ASCII text; some columns are NULL.
var (
	ownerRows = [][]any{{1, "Alice"}, {2, "Bob"}, {3, "anna"}}
	itemRows  = [][]any{
		// id, name, status, priority, score, active, created, owner_id, data
		{1, "Alpha", "open", 3, 1.5, true, "2024-01-10", 1, "x"},
		{2, "beta_x", "open", 1, 2.25, false, "2024-02-01", 2, "y"},
		{3, "100% sure", "closed", 5, nil, true, "2024-03-15", 1, nil},
		{4, "a_b%c", "open", 2, 0.5, false, nil, nil, "x"},
		{5, "O'Brien", "closed", 4, 9.75, true, "2024-01-31", 3, "z"},
		{6, `back\slash`, "open", nil, 3.0, false, "2023-12-31", 2, "y"},
		{7, "ab", "pending", 3, nil, nil, "2024-06-01", nil, nil},
		{8, "Ünïcödé ☃", "open", 5, 7.0, true, "2024-01-31", 3, "x"},
	}
	tagRows = [][]any{{1, 1, "red"}, {2, 1, "blue"}, {3, 3, "red"}, {4, 5, "green"}, {5, 8, "50%off"}}
)

// forEachEngine runs fn as a subtest on SQLite and, when their DSN variables
// are set, on PostgreSQL and MySQL, each with freshly created tables that are
// dropped afterwards.
func forEachEngine(t *testing.T, fn func(t *testing.T, e engine)) {
	t.Helper()
	for _, open := range []struct {
		name string
		fn   func(t *testing.T) engine
	}{{"sqlite", openSQLite}, {"postgres", openPostgres}, {"mysql", openMySQL}} {
		t.Run(open.name, func(t *testing.T) {
			e := open.fn(t)
			fn(t, e)
		})
	}
}

func uniqueSuffix(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func openSQLite(t *testing.T) engine {
	sqldb, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "filter.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	db := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { db.Close() })
	e := engine{name: "sqlite", db: db, s: itemsSchema{items: "items", owners: "owners", tags: "tags"}}
	e.create(t, map[string]string{
		"items":  "id INTEGER PRIMARY KEY, name TEXT, status TEXT, priority INTEGER, score REAL, active BOOLEAN, created DATE, owner_id INTEGER, data TEXT",
		"owners": "id INTEGER PRIMARY KEY, name TEXT",
		"tags":   "id INTEGER PRIMARY KEY, item_id INTEGER, label TEXT",
	}, "")
	return e
}

// withParam adds a parameter to a URL-style or key=value PostgreSQL DSN.
func withParam(dsn, key, value string) (string, error) {
	if !strings.Contains(dsn, "://") {
		return dsn + " " + key + "=" + value, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func openPostgres(t *testing.T) engine {
	dsn := os.Getenv("PORTCULLIS_TEST_PG")
	if dsn == "" {
		t.Skip("PORTCULLIS_TEST_PG is not set: PostgreSQL not tested")
	}
	dsn, err := withParam(dsn, "default_query_exec_mode", "simple_protocol")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	adminDB := bun.NewDB(admin, pgdialect.New())
	t.Cleanup(func() { adminDB.Close() })
	schemaName := "filter_test_" + uniqueSuffix(t)
	if _, err := adminDB.NewRaw("CREATE SCHEMA ?", bun.Ident(schemaName)).Exec(ctx); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := adminDB.NewRaw("DROP SCHEMA ? CASCADE", bun.Ident(schemaName)).Exec(context.Background()); err != nil {
			t.Errorf("drop schema %s: %v", schemaName, err)
		}
	})
	scoped, err := withParam(dsn, "search_path", schemaName)
	if err != nil {
		t.Fatal(err)
	}
	sqldb, err := sql.Open("pgx", scoped)
	if err != nil {
		t.Fatal(err)
	}
	db := bun.NewDB(sqldb, pgdialect.New())
	t.Cleanup(func() { db.Close() }) // registered last, runs before the drop
	e := engine{name: "postgres", db: db, s: itemsSchema{items: "items", owners: "owners", tags: "tags"}}
	e.create(t, map[string]string{
		"items":  "id INTEGER PRIMARY KEY, name VARCHAR(100), status VARCHAR(20), priority INTEGER, score NUMERIC(10,2), active BOOLEAN, created DATE, owner_id INTEGER, data TEXT",
		"owners": "id INTEGER PRIMARY KEY, name VARCHAR(100)",
		"tags":   "id INTEGER PRIMARY KEY, item_id INTEGER, label VARCHAR(100)",
	}, "")
	return e
}

func openMySQL(t *testing.T) engine {
	dsn := os.Getenv("PORTCULLIS_TEST_MYSQL")
	if dsn == "" {
		t.Skip("PORTCULLIS_TEST_MYSQL is not set: MySQL not tested")
	}
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(dsn, "mysql://"))
	if err != nil {
		t.Fatalf("PORTCULLIS_TEST_MYSQL: %v", err)
	}
	cfg.ParseTime = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := bun.NewDB(sql.OpenDB(connector), mysqldialect.New())
	t.Cleanup(func() { db.Close() })
	sfx := uniqueSuffix(t)
	e := engine{name: "mysql", db: db, s: itemsSchema{items: "filter_items_" + sfx, owners: "filter_owners_" + sfx, tags: "filter_tags_" + sfx}}
	e.create(t, map[string]string{
		e.s.items:  "id INTEGER PRIMARY KEY, name VARCHAR(100), status VARCHAR(20), priority INTEGER, score DECIMAL(10,2), active BOOLEAN, created DATE, owner_id INTEGER, data TEXT",
		e.s.owners: "id INTEGER PRIMARY KEY, name VARCHAR(100)",
		e.s.tags:   "id INTEGER PRIMARY KEY, item_id INTEGER, label VARCHAR(100)",
	}, " DEFAULT CHARSET=utf8mb4")
	return e
}

// create makes the three tables (keyed by their names in the map), drops
// them at cleanup, and inserts the test rows.
func (e engine) create(t *testing.T, ddl map[string]string, suffix string) {
	t.Helper()
	ctx := context.Background()
	for table, cols := range ddl {
		if _, err := e.db.NewRaw("CREATE TABLE ? ("+cols+")"+suffix, bun.Ident(table)).Exec(ctx); err != nil {
			t.Fatalf("%s: create %s: %v", e.name, table, err)
		}
		t.Cleanup(func() {
			if _, err := e.db.NewRaw("DROP TABLE IF EXISTS ?", bun.Ident(table)).Exec(context.Background()); err != nil {
				t.Errorf("%s: drop %s: %v", e.name, table, err)
			}
		})
	}
	insert := func(table, cols string, rows [][]any) {
		n := strings.Count(cols, ",") + 1
		ph := strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
		for _, r := range rows {
			args := append([]any{bun.Ident(table)}, r...)
			if _, err := e.db.NewRaw("INSERT INTO ? ("+cols+") VALUES ("+ph+")", args...).Exec(ctx); err != nil {
				t.Fatalf("%s: insert into %s: %v", e.name, table, err)
			}
		}
	}
	insert(e.s.owners, "id, name", ownerRows)
	insert(e.s.items, "id, name, status, priority, score, active, created, owner_id, data", itemRows)
	insert(e.s.tags, "id, item_id, label", tagRows)
}

// selectIDs returns the ids of the items matching a compiled condition.
func (e engine) selectIDs(ctx context.Context, where string, args []any) ([]int64, error) {
	q := e.db.NewSelect().
		ColumnExpr("?.?", bun.Ident("t"), bun.Ident("id")).
		TableExpr("? AS ?", bun.Ident(e.s.items), bun.Ident("t")).
		OrderExpr("?.? ASC", bun.Ident("t"), bun.Ident("id"))
	if where != "" {
		q = q.Where(where, args...)
	}
	ids := []int64{}
	err := q.Scan(ctx, &ids)
	return ids, err
}

// filterIDs parses, compiles and runs a filter.
func (e engine) filterIDs(t *testing.T, src string) []int64 {
	t.Helper()
	ex, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	q, args, err := Compile(ex, e.s)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	ids, err := e.selectIDs(t.Context(), q, args)
	if err != nil {
		t.Fatalf("%s: filter %q: %v", e.name, src, err)
	}
	return ids
}

// TestIntegrationFilters runs the same filters on every engine and expects
// the same rows. Where an engine legitimately differs (LIKE and case), the
// expectation names the engine.
func TestIntegrationFilters(t *testing.T) {
	tests := []struct {
		filter string
		want   []int64
		per    map[string][]int64 // engine-specific results, when they differ
	}{
		{filter: "", want: []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{filter: "status = 'open'", want: []int64{1, 2, 4, 6, 8}},
		{filter: "(status = 'open') and (priority >= 3 or owner.name like 'A%')", want: []int64{1, 8}},
		{filter: "status = open and priority gte 3", want: []int64{1, 8}},
		{filter: "name contains '%'", want: []int64{3, 4}},
		{filter: "name contains '_'", want: []int64{2, 4}},
		{filter: `name contains '\\'`, want: []int64{6}},  // '\\' is one backslash
		{filter: `name contains 'k\s'`, want: []int64{6}}, // a backslash before s is kept
		{filter: "name not contains '%'", want: []int64{1, 2, 5, 6, 7, 8}},
		{filter: "name starts with 'a_'", want: []int64{4}},
		{filter: "name ends with '%c'", want: []int64{4}},
		{filter: `name like 'a\_b%'`, want: []int64{4}},
		{filter: `name like '%\%%'`, want: []int64{3, 4}},
		{filter: `name like 'back\slash'`, want: []int64{6}},
		{filter: `name like '%\\%'`, want: []int64{}},    // the string is %\%: ends with a literal %
		{filter: `name like '%\\\\%'`, want: []int64{6}}, // the string is %\\%: an escaped backslash
		{filter: "name like '_b'", want: []int64{7}},
		{filter: "name not like '%a%'", want: []int64{3, 5, 8}},
		{filter: "name like 'a%'", want: []int64{1, 4, 7},
			per: map[string][]int64{"postgres": {4, 7}}}, // PostgreSQL LIKE is case-sensitive
		{filter: "name = 'O''Brien'", want: []int64{5}},
		{filter: `name = "O'Brien"`, want: []int64{5}},
		{filter: `name = 'O\'Brien'`, want: []int64{5}},
		{filter: "name = 'Ünïcödé ☃'", want: []int64{8}},
		{filter: "name in ('ab', 'Alpha', null)", want: []int64{1, 7}},
		{filter: "priority in (3, null)", want: []int64{1, 6, 7}},
		{filter: "priority not in (3, null)", want: []int64{2, 3, 4, 5, 8}},
		{filter: "priority not in (3)", want: []int64{2, 3, 4, 5, 8}},
		{filter: "priority is null", want: []int64{6}},
		{filter: "priority = null", want: []int64{6}},
		{filter: "owner_id != null and owner_id ne 1", want: []int64{2, 5, 6, 8}},
		{filter: "priority between 2 and 4", want: []int64{1, 4, 5, 7}},
		{filter: "priority not between 2 and 4", want: []int64{2, 3, 8}},
		{filter: "priority > '3'", want: []int64{3, 5, 8}},
		{filter: "priority = true", want: []int64{2}},
		{filter: "score > 2", want: []int64{2, 5, 6, 8}},
		{filter: "score >= '2'", want: []int64{2, 5, 6, 8}},
		{filter: "score = 2.25", want: []int64{2}},
		{filter: "score < 1e0", want: []int64{4}},
		{filter: "score is null", want: []int64{3, 7}},
		{filter: "active = true", want: []int64{1, 3, 5, 8}},
		{filter: "active = 0", want: []int64{2, 4, 6}},
		{filter: "active = 'yes'", want: []int64{1, 3, 5, 8}},
		{filter: "active is null", want: []int64{7}},
		{filter: "created < '2024-01-31'", want: []int64{1, 6}},
		{filter: "created = 2024-01-31", want: []int64{5, 8}},
		{filter: "created between '2024-01-01' and '2024-02-01'", want: []int64{1, 2, 5, 8}},
		{filter: "data = 'x'", want: []int64{1, 4, 8}},
		{filter: "not (status = 'open')", want: []int64{3, 5, 7}},
		{filter: "not status = 'open' and not priority = 3", want: []int64{3, 5}},
		{filter: "status = 'open' xor priority >= 3", want: []int64{2, 3, 4, 5, 7}},
		{filter: "status = 'closed' nor priority < 3", want: []int64{1, 7, 8}},
		{filter: "status = 'open' && priority < 3 || id = 7", want: []int64{2, 4, 7}},
		{filter: "tag.label = 'red'", want: []int64{1, 3}},
		{filter: "not tag.label = 'red'", want: []int64{2, 4, 5, 6, 7, 8}},
		{filter: "tag.label contains '%'", want: []int64{8}},
		{filter: "tag.label is not null and tag.label != 'red'", want: []int64{1, 5, 8}},
		{filter: "owner.name = 'Bob' or tag.label in ('green')", want: []int64{2, 5, 6}},
		{filter: "owner.id > 2", want: []int64{5, 8}},
		{filter: "owner.name = 'nobody'", want: []int64{}},
		{filter: "id in (1,2,3) and name not like 'A%'", want: []int64{2, 3}},
		{filter: "name = '1'' OR ''1''=''1'", want: []int64{}},
		{filter: "name = '?' or name = ?0 or name = '$1'", want: []int64{}},
	}
	forEachEngine(t, func(t *testing.T, e engine) {
		for _, tt := range tests {
			t.Run(tt.filter, func(t *testing.T) {
				want := tt.want
				if w, ok := tt.per[e.name]; ok {
					want = w
				}
				got := e.filterIDs(t, tt.filter)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: filter %q ids mismatch (-want +got):\n%s", e.name, tt.filter, diff)
				}
			})
		}
	})
}

// TestIntegrationParams runs fields, group, having, order and ids on every
// engine.
func TestIntegrationParams(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := t.Context()
		table := bun.SafeQuery("? AS ?", bun.Ident(e.s.items), bun.Ident("t"))

		t.Run("group having", func(t *testing.T) {
			for _, tt := range []struct {
				having   string
				statuses []string
				counts   []int64
			}{
				{"count(*) >= 2", []string{"closed", "open"}, []int64{2, 5}},
				{"sum(priority) > 10", []string{"open"}, []int64{5}},
				{"count(*) = 1 or min(id) = 1", []string{"open", "pending"}, []int64{5, 1}},
				{"max(created) > '2024-03-01' and status != 'pending'", []string{"closed"}, []int64{2}},
			} {
				sel, err := ParseFields("status, count(*)")
				if err != nil {
					t.Fatal(err)
				}
				cols, colArgs, err := CompileSelect(sel, e.s)
				if err != nil {
					t.Fatal(err)
				}
				group, err := ParseGroup("status")
				if err != nil {
					t.Fatal(err)
				}
				gq, gargs, err := CompileGroup(group, e.s)
				if err != nil {
					t.Fatal(err)
				}
				h, err := ParseHaving(tt.having)
				if err != nil {
					t.Fatal(err)
				}
				hq, hargs, err := CompileHaving(h, e.s)
				if err != nil {
					t.Fatal(err)
				}
				order, err := ParseOrder("status")
				if err != nil {
					t.Fatal(err)
				}
				oq, oargs, err := CompileOrder(order, e.s)
				if err != nil {
					t.Fatal(err)
				}
				var statuses []string
				var counts []int64
				err = e.db.NewSelect().ColumnExpr(cols, colArgs...).TableExpr("?", table).
					GroupExpr(gq, gargs...).Having(hq, hargs...).OrderExpr(oq, oargs...).
					Scan(ctx, &statuses, &counts)
				if err != nil {
					t.Fatalf("having %q: %v", tt.having, err)
				}
				if diff := cmp.Diff(tt.statuses, statuses); diff != "" {
					t.Errorf("having %q statuses (-want +got):\n%s", tt.having, diff)
				}
				if diff := cmp.Diff(tt.counts, counts); diff != "" {
					t.Errorf("having %q counts (-want +got):\n%s", tt.having, diff)
				}
			}
		})

		t.Run("order", func(t *testing.T) {
			for _, tt := range []struct {
				order string
				want  []int64
			}{
				{"priority desc nulls last, id", []int64{3, 8, 5, 1, 7, 4, 2, 6}},
				{"priority asc nulls first, id desc", []int64{6, 2, 4, 7, 1, 5, 8, 3}},
				{"priority nulls last, id", []int64{2, 4, 1, 7, 5, 3, 8, 6}},
				{"score DESC NULLS FIRST, ID", []int64{3, 7, 5, 8, 6, 2, 1, 4}},
			} {
				items, err := ParseOrder(tt.order)
				if err != nil {
					t.Fatal(err)
				}
				oq, oargs, err := CompileOrder(items, e.s)
				if err != nil {
					t.Fatal(err)
				}
				ids := []int64{}
				err = e.db.NewSelect().ColumnExpr("?.?", bun.Ident("t"), bun.Ident("id")).TableExpr("?", table).
					OrderExpr(oq, oargs...).Scan(ctx, &ids)
				if err != nil {
					t.Fatalf("order %q: %v", tt.order, err)
				}
				if diff := cmp.Diff(tt.want, ids); diff != "" {
					t.Errorf("order %q (-want +got):\n%s", tt.order, diff)
				}
			}
		})

		t.Run("fields", func(t *testing.T) {
			sel, err := ParseFields(`id, name as "label ""quoted""", priority`)
			if err != nil {
				t.Fatal(err)
			}
			cols, args, err := CompileSelect(sel, e.s)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := e.db.NewSelect().ColumnExpr(cols, args...).TableExpr("?", table).
				Where("?.? = ?", bun.Ident("t"), bun.Ident("id"), 5).Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			names, err := rows.Columns()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"id", `label "quoted"`, "priority"}, names); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if !rows.Next() {
				t.Fatal("no row")
			}
			var id, prio int64
			var name string
			if err := rows.Scan(&id, &name, &prio); err != nil {
				t.Fatal(err)
			}
			if id != 5 || name != "O'Brien" || prio != 4 {
				t.Errorf("row = %d %q %d", id, name, prio)
			}
		})

		t.Run("ids", func(t *testing.T) {
			ids, err := ParseIDs(" 1, '3' ,\"5\", 42")
			if err != nil {
				t.Fatal(err)
			}
			pred := &Predicate{Left: Term{Path: []string{"id"}}, Op: In, Values: ids}
			q, args, err := Compile(pred, e.s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.selectIDs(ctx, q, args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{1, 3, 5}, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	})
}
