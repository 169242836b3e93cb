package sqldb

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/portcullis-dev/portcullis/dialects"
)

func TestLimitOffset(t *testing.T) {
	for _, c := range []struct {
		kind dialects.Kind
		want string
	}{
		{dialects.SQLite, " LIMIT +? OFFSET ?"},
		{dialects.MySQL, " LIMIT ? OFFSET ?"},
	} {
		if got := limitOffset(c.kind); got != c.want {
			t.Errorf("%s: %q, want %q", c.kind, got, c.want)
		}
	}
}

// TestLimitOffsetKeepsSQLiteStatement runs one page statement with several
// limits and offsets on one SQLite connection: the rows are those of the
// values bound, and SQLite never prepares the statement again (it does
// with a bare "LIMIT ?", whose value its planner reads).
func TestLimitOffsetKeepsSQLiteStatement(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "limit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY);
		INSERT INTO t (id) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range []struct {
		text       string
		reprepared bool
	}{
		{"SELECT id FROM t ORDER BY id" + limitOffset(dialects.SQLite), false},
		{"SELECT id FROM t ORDER BY id LIMIT ? OFFSET ?", true}, // what it avoids
	} {
		st, err := conn.PrepareContext(ctx, c.text)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct{ limit, offset, first, n int64 }{{3, 0, 1, 3}, {2, 5, 6, 2}, {4, 8, 9, 2}} {
			rows, err := st.QueryContext(ctx, p.limit, p.offset)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				got = append(got, id)
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != p.n || got[0] != p.first {
				t.Errorf("%s with %d, %d: %v", c.text, p.limit, p.offset, got)
			}
		}
		n, ok := reprepares(t, conn, c.text)
		if !ok {
			t.Skip("not a driver connection this test can inspect")
		}
		if got := n > 0; got != c.reprepared {
			t.Errorf("%s: prepared again %d times", c.text, n)
		}
		st.Close()
	}
}

// reprepares returns how many times SQLite prepared again the statement of
// text open on conn (sqlite3_stmt_status); ok is false when conn is not a
// modernc.org/sqlite connection of the form it knows.
func reprepares(t *testing.T, conn *sql.Conn, text string) (n int32, ok bool) {
	t.Helper()
	_ = conn.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return nil
		}
		f := v.Elem().FieldByName("db")
		if !f.IsValid() || f.Kind() != reflect.Uintptr {
			return nil
		}
		h := uintptr(f.Uint())
		tls := libc.NewTLS()
		defer tls.Close()
		for s := sqlite3.Xsqlite3_next_stmt(tls, h, 0); s != 0; s = sqlite3.Xsqlite3_next_stmt(tls, h, s) {
			if libc.GoString(sqlite3.Xsqlite3_sql(tls, s)) == text {
				n, ok = sqlite3.Xsqlite3_stmt_status(tls, s, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0), true
			}
		}
		return nil
	})
	return n, ok
}

func TestKeepDateTime(t *testing.T) {
	for _, c := range []struct {
		decl, s string
		keep    bool
	}{
		{"DATETIME", "2024-02-29 10:11:12", true},
		{"TIMESTAMP", "2024-13-40 25:61:61", true}, // not a time: written as the text either way
		{"DATE", "2024-02-29 10:11:12", false},     // a time writes only its date
		{"DATETIME", "2024-02-29T10:11:12", false},
		{"DATETIME", "2024-02-29 10:11:12.5", false},
		{"DATETIME", "2024-02-29 10:11", false},
		{"", "2024-02-29 10:11:12", false},
	} {
		if got := keepDateTime(c.decl, c.s); got != c.keep {
			t.Errorf("keepDateTime(%q, %q) = %v, want %v", c.decl, c.s, got, c.keep)
		}
	}
}
