package rowjson_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
)

var valsDDL = map[dialects.Kind]string{
	dialects.SQLite: `CREATE TABLE vals (id INTEGER PRIMARY KEY, big BIGINT, name VARCHAR(50), body TEXT, flag BOOLEAN,
		price DECIMAL(10,2), ratio DOUBLE, d DATE, t TIME, ts DATETIME, n INTEGER, doc JSON, bin BLOB)`,
	dialects.Postgres: `CREATE TABLE vals (id INTEGER PRIMARY KEY, big BIGINT, name VARCHAR(50), body TEXT, flag BOOLEAN,
		price DECIMAL(10,2), ratio DOUBLE PRECISION, d DATE, t TIME, ts TIMESTAMP, n INTEGER, doc JSONB, bin BYTEA)`,
	dialects.MySQL: `CREATE TABLE vals (id INT PRIMARY KEY, big BIGINT, name VARCHAR(50), body TEXT, flag BOOLEAN,
		price DECIMAL(10,2), ratio DOUBLE, d DATE, t TIME, ts DATETIME(6), n INT, doc JSON, bin BLOB)`,
}

var valsRows = [][]any{
	{1, int64(9007199254740993), "O'Brien \"q\" é\n\ttab", "a\x01b\u2028c", true, "12.50", 0.1,
		"2024-01-15", "10:30:00", "2024-01-15 10:30:00.5", nil, `{"a": [1, 2], "b": "x"}`, []byte{0, 1, 2, 255}},
	{2, int64(-1), "", "", false, "-0.50", 1e21, "1999-12-31", "23:59:59", "1999-12-31 23:59:59", 42, `[]`, []byte{}},
	{3, int64(0), "😀", "<b>&</b>", true, "12", 3.0, "2000-02-29", "00:00:00", "2000-02-29 00:00:00", -7, `"s"`, nil},
	{4, nil, nil, nil, nil, nil, 1e-7, nil, nil, nil, nil, nil, nil},
}

const valsJSON = `[` +
	`{"id":1,"big":9007199254740993,"name":"O'Brien \"q\" é\n\ttab","body":"a\u0001b\u2028c","flag":true,"price":12.50,"ratio":0.1,` +
	`"d":"2024-01-15","t":"10:30:00","ts":"2024-01-15 10:30:00.5","n":null,"doc":{"a":[1,2],"b":"x"},"bin":"AAEC/w=="},` +
	`{"id":2,"big":-1,"name":"","body":"","flag":false,"price":-0.50,"ratio":1e+21,` +
	`"d":"1999-12-31","t":"23:59:59","ts":"1999-12-31 23:59:59","n":42,"doc":[],"bin":""},` +
	`{"id":3,"big":0,"name":"😀","body":"\u003cb\u003e\u0026\u003c/b\u003e","flag":true,"price":12.00,"ratio":3,` +
	`"d":"2000-02-29","t":"00:00:00","ts":"2000-02-29 00:00:00","n":-7,"doc":"s","bin":null},` +
	`{"id":4,"big":null,"name":null,"body":null,"flag":null,"price":null,"ratio":1e-7,` +
	`"d":null,"t":null,"ts":null,"n":null,"doc":null,"bin":null}` +
	`]`

// setupVals creates and fills vals and returns the pool and its schema.
func setupVals(t *testing.T, cfg dialects.Config) (*bun.DB, *dialects.Table) {
	t.Helper()
	ctx := t.Context()
	db := dbtest.Open(t, cfg)
	if _, err := db.ExecContext(ctx, valsDDL[cfg.Kind]); err != nil {
		t.Fatal(err)
	}
	for _, r := range valsRows {
		if _, err := db.NewRaw("INSERT INTO vals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", r...).Exec(ctx); err != nil {
			t.Fatalf("insert %v: %v", r[0], err)
		}
	}
	d, _ := engines.Get(cfg.Kind)
	s, err := d.Introspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return db, s.Table("vals")
}

func query(t *testing.T, db *bun.DB, q string) *sql.Rows {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rows.Close() })
	return rows
}

func TestSameJSONOnEveryEngine(t *testing.T) {
	var mu sync.Mutex
	got := map[dialects.Kind]string{}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db, table := setupVals(t, cfg)
		in := query(t, db, "SELECT * FROM vals ORDER BY id")
		r, err := rowjson.New(cfg.Kind, in, rowjson.Options{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		n, err := r.WriteArray(&buf, 0)
		if err != nil || n != len(valsRows) {
			t.Fatalf("WriteArray = %d, %v", n, err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("invalid JSON: %s", buf.String())
		}
		if diff := cmp.Diff(valsJSON, buf.String()); diff != "" {
			t.Errorf("JSON (-want +got):\n%s", diff)
		}
		mu.Lock()
		got[cfg.Kind] = buf.String()
		mu.Unlock()
	})
	for k, v := range got {
		if v != got[dialects.SQLite] {
			t.Errorf("%s differs from sqlite:\n%s\n%s", k, v, got[dialects.SQLite])
		}
	}
}

func TestRecordsMatchStream(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db, table := setupVals(t, cfg)
		in := query(t, db, "SELECT * FROM vals ORDER BY id")
		recs, err := rowjson.ReadAll(cfg.Kind, in, rowjson.Options{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(recs)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(valsJSON, string(b)); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
		// Each value alone, through encoding/json, equals the streamed value.
		var want []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(valsJSON), &want); err != nil {
			t.Fatal(err)
		}
		for i, rec := range recs {
			m := rec.Map()
			for k, v := range m {
				enc, err := json.Marshal(v)
				if err != nil {
					t.Fatalf("row %d %s: %v", i, k, err)
				}
				if string(enc) != string(want[i][k]) {
					t.Errorf("row %d %s: Value encodes as %s, stream has %s (%T)", i, k, enc, want[i][k], v)
				}
			}
		}
		if v, ok := recs[0].Get("BIG"); !ok || v != int64(9007199254740993) {
			t.Errorf("Get(BIG) = %v %T", v, v)
		}
		if v, _ := recs[0].Get("flag"); v != true {
			t.Errorf("flag = %v %T", v, v)
		}
		if v, _ := recs[0].Get("price"); v != json.Number("12.50") {
			t.Errorf("price = %v %T", v, v)
		}
	})
}

func TestProjection(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db, table := setupVals(t, cfg)
		tests := []struct {
			name string
			q    string
			opts rowjson.Options
			want string
		}{
			{"only", "SELECT id, name, flag FROM vals WHERE id = 2", rowjson.Options{Table: table, Only: []string{"FLAG", "id"}},
				`[{"id":2,"flag":false}]`},
			{"omit", "SELECT id, name, flag FROM vals WHERE id = 2", rowjson.Options{Table: table, Omit: func(n string) bool { return n == "name" }},
				`[{"id":2,"flag":false}]`},
			{"visible", "SELECT name, id FROM vals WHERE id = 2", rowjson.Options{Visible: 1},
				`[{"name":""}]`},
			{"duplicate names", "SELECT id, id AS ID, 5 AS Five FROM vals WHERE id = 2", rowjson.Options{},
				`[{"id":2,"five":5}]`},
			{"no rows", "SELECT id FROM vals WHERE id < 0", rowjson.Options{}, `[]`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				in := query(t, db, tt.q)
				r, err := rowjson.New(cfg.Kind, in, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if _, err := r.WriteArray(&buf, 0); err != nil {
					t.Fatal(err)
				}
				if buf.String() != tt.want {
					t.Errorf("got %s, want %s", buf.String(), tt.want)
				}
			})
		}

		// Visible leaves later columns readable through Value.
		in := query(t, db, "SELECT name, id FROM vals WHERE id = 2")
		r, _ := rowjson.New(cfg.Kind, in, rowjson.Options{Visible: 1})
		if !r.Next() || r.Value(1) != int64(2) {
			t.Fatalf("hidden column value: %v", r.Value(1))
		}
		if diff := cmp.Diff([]string{"name", "id"}, r.Columns()); diff != "" {
			t.Error(diff)
		}
		if diff := cmp.Diff([]string{"name"}, r.Fields()); diff != "" {
			t.Error(diff)
		}

		// WriteArray with a limit stops and leaves the rest for Next.
		in = query(t, db, "SELECT id FROM vals ORDER BY id")
		r, _ = rowjson.New(cfg.Kind, in, rowjson.Options{})
		var buf bytes.Buffer
		if n, err := r.WriteArray(&buf, 2); n != 2 || err != nil || buf.String() != `[{"id":1},{"id":2}]` {
			t.Fatalf("limited: %d %v %s", n, err, buf.String())
		}
		if !r.Next() || r.Value(0) != int64(3) {
			t.Fatal("rows after the limit are lost")
		}
	})
}

// TestEngineSpecificValues covers types outside the common set.
func TestEngineSpecificValues(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db := dbtest.Open(t, cfg)
		ctx := t.Context()
		var ddl, ins, want string
		switch cfg.Kind {
		case dialects.SQLite:
			ddl = `CREATE TABLE x (i INTEGER, d DECIMAL(10,2), b BOOLEAN, dt DATETIME, j JSON, tx TEXT, n NUMERIC)`
			// Values stored with another type than declared come out as they are.
			ins = `INSERT INTO x VALUES ('notint', 12.345, 'yes', 'soon', 'not json', X'00FF', 1.5),
				(1, 0.1, 2, '2024-01-15T10:30:00+02:00', '{"a" : 1}', 'x', 7)`
			want = `[{"i":"notint","d":12.345,"b":"yes","dt":"soon","j":"not json","tx":"AP8=","n":1.5},` +
				`{"i":1,"d":0.10,"b":true,"dt":"2024-01-15 08:30:00","j":{"a":1},"tx":"x","n":7}]`
		case dialects.Postgres:
			ddl = `CREATE TABLE x (r REAL, n NUMERIC, tz TIMESTAMPTZ, tt TIMETZ, iv INTERVAL, arr INT[], u UUID, m MONEY, f DOUBLE PRECISION, big NUMERIC(30,10))`
			ins = `INSERT INTO x VALUES (2.1, 'NaN', '2024-01-15 10:30:00+02', '10:30:00+02', '1 day', '{1,2}',
				'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.5, 'Infinity', 12345678901234567890.0123456789)`
			want = `[{"r":2.1,"n":"NaN","tz":"2024-01-15 08:30:00","tt":"10:30:00+02","iv":"1 day","arr":"{1,2}",` +
				`"u":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","m":"$1.50","f":"Infinity","big":12345678901234567890.0123456789}]`
		case dialects.MySQL:
			ddl = "CREATE TABLE x (f FLOAT, bits BIT(10), flag BIT(1), e ENUM('a','b'), u BIGINT UNSIGNED, y YEAR, tm TIME(3), vb VARBINARY(4), j JSON)"
			ins = `INSERT INTO x VALUES (2.1, b'1000000001', b'1', 'b', 18446744073709551615, 2024, '-838:59:59.5', 'ab', '{"k": [true, null]}')`
			want = `[{"f":2.1,"bits":513,"flag":true,"e":"b","u":18446744073709551615,"y":2024,"tm":"-838:59:59.500","vb":"YWI=","j":{"k":[true,null]}}]`
		}
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, ins); err != nil {
			t.Fatal(err)
		}
		d, _ := engines.Get(cfg.Kind)
		s, err := d.Introspect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		in := query(t, db, "SELECT * FROM x")
		r, err := rowjson.New(cfg.Kind, in, rowjson.Options{Table: s.Table("x")})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := r.WriteArray(&buf, 0); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("invalid JSON %s", buf.String())
		}
		if diff := cmp.Diff(want, buf.String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestWriteArrayLarge streams more than one buffer's worth.
func TestWriteArrayLarge(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	db := dbtest.Open(t, cfg)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE big (id INTEGER PRIMARY KEY, s TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
		INSERT INTO big SELECT i, printf('row %d %s', i, hex(randomblob(8))) FROM n`); err != nil {
		t.Fatal(err)
	}
	in := query(t, db, "SELECT * FROM big ORDER BY id")
	r, _ := rowjson.New(dialects.SQLite, in, rowjson.Options{})
	w := &countingWriter{}
	n, err := r.WriteArray(w, 0)
	if err != nil || n != 3000 {
		t.Fatalf("%d %v", n, err)
	}
	var out []map[string]any
	if err := json.Unmarshal(w.buf.Bytes(), &out); err != nil || len(out) != 3000 {
		t.Fatalf("decode: %v (%d rows)", err, len(out))
	}
	if w.writes < 2 {
		t.Errorf("expected several writes, got %d", w.writes)
	}
	if !strings.HasPrefix(out[2999]["s"].(string), "row 3000 ") {
		t.Errorf("last row %v", out[2999])
	}
}

type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}
