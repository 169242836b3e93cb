package sqldb_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestMySQLDriverReadsMatchGeneral checks the reads by key and pages that
// MySQL runs on the driver itself (myfast.go) against the general path,
// forced by naming every column, and against the same fast reads through
// database/sql, over MySQL's types with edge values (decimals, dates and
// times with fractions and zero dates, booleans and bits, JSON, binary
// strings, unsigned and floating numbers, text keys in another case): the
// same bytes. It then adds a column: the next reads answer with it at
// once; and closing the backend drops the statements.
func TestMySQLDriverReadsMatchGeneral(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.MySQL)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	cols := "id,i,u,f,dbl,dm,b,bt,bits,t,vc,j,d,tm,dt,ts,y,bl,vb,e,st"
	for _, q := range []string{
		`CREATE TABLE typed (id BIGINT PRIMARY KEY, i INT, u BIGINT UNSIGNED, f FLOAT, dbl DOUBLE, dm DECIMAL(12,3),
			b TINYINT(1), bt BIT(1), bits BIT(10), t TEXT, vc VARCHAR(20), j JSON, d DATE, tm TIME(3), dt DATETIME(6),
			ts TIMESTAMP NULL, y YEAR, bl BLOB, vb VARBINARY(8), e ENUM('a','b'), st SET('x','y'))`,
		`INSERT INTO typed VALUES (1, -2147483648, 18446744073709551615, 1.5, -0.1, 123456789.125, 1, b'1', b'1010101010',
			'quote " back \\ tab 	 é 😀 <b>&', 'vc', '{"b": 1, "a": [1, 2.50]}', '2024-02-29', '-838:59:59.000',
			'2024-02-29 10:11:12.123456', '2024-02-29 10:11:12', 2024, x'00ff10', x'ff', 'b', 'x,y')`,
		`INSERT INTO typed VALUES (2, 0, 0, -0, 1e300, -0.001, 0, b'0', b'0', '', NULL, 'null', '0000-00-00', '00:00:00',
			'0000-00-00 00:00:00', NULL, 0000, '', '', 'a', '')`,
		`INSERT INTO typed (id) VALUES (3)`,
		`INSERT INTO typed (id, dm, dt, tm, f) VALUES (4, 12.5, '1999-12-31 23:59:59.5', '838:59:59.999', 3.4028234e38)`,
		`CREATE TABLE named (code VARCHAR(20) PRIMARY KEY, n INT)`,
		`INSERT INTO named VALUES ('Abc', 1), ('abd', 2), ('x y', 3)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d := newDirectOn(t, cfg)
	check := func(when, cols string) {
		t.Helper()
		for _, target := range []string{
			"_table/typed/1", "_table/typed/2", "_table/typed/3", "_table/typed/4", "_table/typed/5",
			"_table/typed/0", "_table/typed/x", "_table/typed/-1", "_table/typed/99999999999999999999",
			"_table/typed?limit=2", "_table/typed?limit=3&offset=2", "_table/typed?limit=10", "_table/typed?offset=9",
			"_table/named/Abc", "_table/named/abc", "_table/named/ABD", "_table/named/x%20y", "_table/named/zz",
			"_table/named?limit=2&offset=1",
		} {
			sep := "?"
			if strings.Contains(target, "?") {
				sep = "&"
			}
			fields := cols
			if strings.HasPrefix(target, "_table/named") {
				fields = "code,n"
			}
			fs, fb := d.call(t, nil, http.MethodGet, target, nil)
			gs, gb := d.call(t, nil, http.MethodGet, target+sep+"fields="+fields, nil)
			if fs != gs || fb != gb {
				t.Errorf("%s %s: fast path %d %s, general path %d %s", when, target, fs, fb, gs, gb)
			}
			restore := sqldb.SetNativeMy(false)
			ds, db := d.call(t, nil, http.MethodGet, target, nil)
			restore()
			if fs != ds || fb != db {
				t.Errorf("%s %s: on the driver %d %s, through database/sql %d %s", when, target, fs, fb, ds, db)
			}
		}
	}
	check("before", cols)
	for range 3 { // the statements are now prepared on the connections used
		check("again", cols)
	}
	if n := sqldb.LiteStatements(d.b); n < 2 {
		t.Errorf("%d statements kept on the driver's connections, want the reads by key and the pages", n)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE typed ADD COLUMN extra VARCHAR(8) DEFAULT 'new'`); err != nil {
		t.Fatal(err)
	}
	d.b.(interface{ InvalidateSchema() }).InvalidateSchema()
	check("after a new column", cols+",extra")
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed/1", nil); !strings.Contains(body, `"extra":"new"`) {
		t.Errorf("after a new column: %s", body)
	}
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed?limit=1", nil); !strings.Contains(body, `"extra":"new"`) {
		t.Errorf("page after a new column: %s", body)
	}
	if err := d.b.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	if n := sqldb.LiteStatements(d.b); n != 0 {
		t.Errorf("%d statements left after Close", n)
	}
}

// logCount keeps what the MySQL driver logs.
type logCount struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logCount) Print(v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, fmt.Sprint(v...))
}

func (l *logCount) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs[n:])
}

func (l *logCount) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// TestMySQLDriverReadsEndWithTheRequest checks that a MySQL read on the
// driver (myfast.go) ends with its request as the same read through
// database/sql does: a read by key and a page blocked behind LOCK TABLES
// answer as soon as the request's context ends, with the same status and
// body, the driver logs nothing, and the next reads answer from a fresh
// connection. It then kills the pool's connections on the server: the
// driver's liveness check sees them dead when they leave the pool, and
// the reads go to new ones instead of failing.
func TestMySQLDriverReadsEndWithTheRequest(t *testing.T) {
	logs := &logCount{}
	if err := mysqldrv.SetLogger(logs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mysqldrv.SetLogger(log.New(os.Stderr, "[mysql] ", log.Ldate|log.Ltime)) })
	cfg := dbtest.Fresh(t, dialects.MySQL)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	for _, q := range []string{
		`CREATE TABLE locked (id BIGINT PRIMARY KEY, v VARCHAR(10))`,
		`INSERT INTO locked VALUES (1, 'one'), (2, 'two')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d := newDirectOn(t, cfg)
	const byKey, page = "_table/locked/1", "_table/locked?limit=1"
	want := map[string]string{
		byKey: `{"id":1,"v":"one"}` + "\n",
		page:  `{"resource":[{"id":1,"v":"one"}],"meta":{"next":1}}` + "\n",
	}
	readsOK := func(when string) {
		t.Helper()
		for _, target := range []string{byKey, page} {
			if status, body := d.call(t, nil, http.MethodGet, target, nil); status != 200 || body != want[target] {
				t.Errorf("%s: %s: %d %s", when, target, status, body)
			}
		}
	}
	readsOK("before")

	adm, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	if _, err := adm.ExecContext(ctx, "LOCK TABLES locked WRITE"); err != nil {
		t.Fatal(err)
	}
	// A read that does not end with its request ends here (and fails).
	unlock := time.AfterFunc(10*time.Second, func() { adm.ExecContext(context.Background(), "UNLOCK TABLES") })
	blocked := func(target string) (int, string) {
		rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		status, body := d.callCtx(rctx, nil, http.MethodGet, target, nil)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: answered %v after its context ended", target, took)
		}
		return status, body
	}
	for _, target := range []string{byKey, page} {
		n := logs.len()
		fs, fb := blocked(target)
		if msgs := logs.since(n); len(msgs) > 0 {
			t.Errorf("%s: the driver logged %q", target, msgs)
		}
		restore := sqldb.SetNativeMy(false)
		ds, dbody := blocked(target)
		restore()
		if fs != ds || fb != dbody || fs == 200 {
			t.Errorf("%s blocked: on the driver %d %s, through database/sql %d %s", target, fs, fb, ds, dbody)
		}
	}
	unlock.Stop()
	if _, err := adm.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	readsOK("after the interrupted reads")

	// Dead connections: kill every connection to the database but adm.
	for range 3 {
		readsOK("before the kill")
	}
	rows, err := adm.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatal("no connection of the backend on the server")
	}
	for _, id := range ids {
		if _, err := adm.ExecContext(ctx, "KILL "+strconv.FormatInt(id, 10)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // the server closes them
	readsOK("after the kill")
}
