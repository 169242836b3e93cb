package sqldb_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// routines creates the procedures and functions of the routine tests on
// e's database: the same names and behaviour on PostgreSQL and MySQL.
func routines(t *testing.T, e *env) {
	t.Helper()
	var stmts []string
	switch e.kind {
	case dialects.Postgres:
		stmts = []string{
			`CREATE PROCEDURE add_tax(IN amount numeric, INOUT total numeric, OUT tax numeric) LANGUAGE plpgsql AS $$
BEGIN tax := amount * 0.1; total := total + amount + tax; END $$`,
			`CREATE PROCEDURE echo(INOUT s varchar) LANGUAGE plpgsql AS $$ BEGIN s := s || '!'; END $$`,
			`CREATE PROCEDURE touch_tag(IN tag_id integer, IN new_label varchar) LANGUAGE sql AS $$ UPDATE tag SET label = new_label WHERE id = tag_id $$`,
			`CREATE PROCEDURE fail_proc() LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no way'; END $$`,
			`CREATE FUNCTION add_nums(a integer, b integer) RETURNS integer LANGUAGE sql AS $$ SELECT a + b $$`,
			`CREATE FUNCTION greet(who varchar) RETURNS varchar LANGUAGE sql AS $$ SELECT 'Hello, ' || who $$`,
			`CREATE FUNCTION is_adult(age integer) RETURNS boolean LANGUAGE sql AS $$ SELECT age >= 18 $$`,
			`CREATE FUNCTION older_than(min_age integer) RETURNS TABLE(id integer, name varchar) LANGUAGE sql AS $$
SELECT id, name FROM customer WHERE age > min_age ORDER BY id $$`,
			`CREATE FUNCTION plus_ten(a integer, b integer DEFAULT 10) RETURNS integer LANGUAGE sql AS $$ SELECT a + b $$`,
			`CREATE FUNCTION over(a integer) RETURNS text LANGUAGE sql AS $$ SELECT 'one' $$`,
			`CREATE FUNCTION over(a integer, b integer) RETURNS text LANGUAGE sql AS $$ SELECT 'two' $$`,
			`CREATE FUNCTION over(a varchar, b varchar) RETURNS text LANGUAGE sql AS $$ SELECT 'text' $$`,
			`CREATE FUNCTION unnamed(integer, integer) RETURNS integer LANGUAGE sql AS $$ SELECT $1 * $2 $$`,
			`CREATE FUNCTION pair(x integer, OUT doubled integer, OUT tripled integer) LANGUAGE sql AS $$ SELECT x * 2, x * 3 $$`,
		}
	case dialects.MySQL:
		stmts = []string{
			`CREATE PROCEDURE add_tax(IN amount DECIMAL(10,2), INOUT total DECIMAL(10,2), OUT tax DECIMAL(10,2))
BEGIN SET tax = amount * 0.1; SET total = total + amount + tax; END`,
			`CREATE PROCEDURE echo(INOUT s VARCHAR(100)) BEGIN SET s = CONCAT(s, '!'); END`,
			`CREATE PROCEDURE touch_tag(IN tag_id INT, IN new_label VARCHAR(32)) BEGIN UPDATE tag SET label = new_label WHERE id = tag_id; END`,
			`CREATE PROCEDURE fail_proc() BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no way'; END`,
			`CREATE PROCEDURE older_than(IN min_age INT) BEGIN SELECT id, name FROM customer WHERE age > min_age ORDER BY id; END`,
			`CREATE PROCEDURE two_sets(OUT n INT) BEGIN SELECT id FROM tag ORDER BY id LIMIT 2; SELECT label FROM tag WHERE id = 3; SET n = 2; END`,
			`CREATE FUNCTION add_nums(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a + b`,
			`CREATE FUNCTION greet(who VARCHAR(100)) RETURNS VARCHAR(120) DETERMINISTIC RETURN CONCAT('Hello, ', who)`,
			`CREATE FUNCTION is_adult(age INT) RETURNS BOOLEAN DETERMINISTIC RETURN age >= 18`,
		}
	}
	for _, s := range stmts {
		if _, err := e.db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v\n%s", e.kind, err, s)
		}
	}
}

// numbers decodes a JSON object and returns its members as text, numbers
// compared by value (PostgreSQL's numeric keeps the scale it computes,
// MySQL's DECIMAL(10,2) two digits).
func numbers(t *testing.T, body string) map[string]string {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	out := map[string]string{}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			out[k] = strconv.FormatFloat(f, 'f', -1, 64)
			continue
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out
}

// TestRoutines calls procedures with IN, OUT and INOUT parameters and
// functions on PostgreSQL and MySQL, with the parameters in the body and in
// the query string, and lists them.
func TestRoutines(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		if cfg.Kind == dialects.SQLite {
			for _, p := range []string{"_proc", "_func/add_nums", "_proc/x"} {
				status, body := e.do(t, "GET", p, nil)
				if status != 501 || !strings.Contains(body, "not supported by SQLite") {
					t.Errorf("GET %s on SQLite: %d %s", p, status, body)
				}
			}
			checkStep(t, step{name: "root", status: 200, want: `{"resource":[{"name":"_schema"},{"name":"_table"}]}`}, 200, e.mustDo(t, 200, "GET", "", nil))
			return
		}
		routines(t, e)
		checkStep(t, step{name: "root", status: 200, want: `{"resource":[{"name":"_schema"},{"name":"_table"},{"name":"_proc"},{"name":"_func"}]}`},
			200, e.mustDo(t, 200, "GET", "", nil))

		// IN, INOUT and OUT: by name in the body, and in the query string.
		want := map[string]string{"total": "115", "tax": "10"}
		for _, c := range []struct {
			name, method, path string
			body               any
		}{
			{"body list", "POST", "_proc/add_tax", obj("params", list(obj("name", "amount", "value", 100), obj("name", "TOTAL", "value", "5")))},
			{"body object", "POST", "_proc/add_tax", obj("params", obj("amount", obj("value", 100), "total", 5))},
			{"positional", "POST", "_proc/add_tax", obj("params", list(100, 5))},
			{"query string", "GET", "_proc/add_tax?amount=100&total=5", nil},
			{"query string on POST", "POST", "_proc/add_tax?amount=100&total=5", nil},
		} {
			got := numbers(t, e.mustDo(t, 200, c.method, c.path, c.body))
			if got["total"] != want["total"] || got["tax"] != want["tax"] || len(got) != 2 {
				t.Errorf("%s: %v, want %v", c.name, got, want)
			}
		}
		// INOUT values are bound: quotes and backslashes come back as sent.
		checkStep(t, step{name: "inout quoting", status: 200, want: `{"s":"it's a \\ test'); DROP TABLE tag; --!"}`}, 200,
			e.mustDo(t, 200, "POST", "_proc/echo", obj("params", list(obj("name", "s", "value", `it's a \ test'); DROP TABLE tag; --`)))))
		checkStep(t, step{name: "inout null", status: 200, want: `{"s":null}`}, 200, e.mustDo(t, 200, "POST", "_proc/echo", nil))

		// A procedure that writes, with no result.
		checkStep(t, step{name: "no result", status: 200, want: `{"resource":[]}`}, 200,
			e.mustDo(t, 200, "POST", "_proc/touch_tag", obj("params", obj("tag_id", 2, "new_label", "O'Brien"))))
		checkStep(t, step{name: "written", status: 200, want: `{"id":2,"label":"O'Brien"}`}, 200, e.mustDo(t, 200, "GET", "_table/tag/2", nil))

		// Functions: scalar results are bare values.
		checkStep(t, step{name: "function", status: 200, want: `5`}, 200, e.mustDo(t, 200, "GET", "_func/add_nums?a=2&b=3", nil))
		checkStep(t, step{name: "function post", status: 200, want: `30`}, 200, e.mustDo(t, 200, "POST", "_func/add_nums", obj("params", list(obj("name", "a", "value", 10), obj("name", "b", "value", 20)))))
		checkStep(t, step{name: "function wrapper", status: 200, want: `{"sum":3}`}, 200, e.mustDo(t, 200, "POST", "_func/add_nums", obj("params", list(1, 2), "wrapper", "sum")))
		checkStep(t, step{name: "function text", status: 200, want: `"Hello, O'Brien; --"`}, 200, e.mustDo(t, 200, "GET", "_func/greet?who="+url.QueryEscape("O'Brien; --"), nil))
		checkStep(t, step{name: "function boolean", status: 200, want: `true`}, 200, e.mustDo(t, 200, "GET", "_func/is_adult?age=30", nil))
		checkStep(t, step{name: "function null argument", status: 200, want: `null`}, 200, e.mustDo(t, 200, "GET", "_func/add_nums?a=2", nil))
		checkStep(t, step{name: "returns", status: 200, want: `"5"`}, 200, e.mustDo(t, 200, "GET", "_func/add_nums?a=2&b=3&returns=string", nil))

		// Rows.
		rowsPath := "_func/older_than?min_age=26"
		if e.kind == dialects.MySQL {
			rowsPath = "_proc/older_than?min_age=26"
		}
		checkStep(t, step{name: "rows", status: 200, want: `{"resource":[{"id":1,"name":"Alice"},{"id":4,"name":"Dave"}]}`}, 200, e.mustDo(t, 200, "GET", rowsPath, nil))
		checkStep(t, step{name: "rows wrapper", status: 200, want: `{"data":[{"id":4,"name":"Dave"}]}`}, 200,
			e.mustDo(t, 200, "GET", strings.Replace(rowsPath, "26", "40", 1)+"&wrapper=data", nil))
		if e.kind == dialects.MySQL {
			checkStep(t, step{name: "two result sets and OUT", status: 200, want: `{"n":2,"resource":[[{"id":1},{"id":2}],[{"label":"blue"}]]}`}, 200,
				e.mustDo(t, 200, "GET", "_proc/two_sets", nil))
		} else {
			checkStep(t, step{name: "parameter default", status: 200, want: `12`}, 200, e.mustDo(t, 200, "GET", "_func/plus_ten?a=2", nil))
			checkStep(t, step{name: "overload by names", status: 200, want: `"one"`}, 200, e.mustDo(t, 200, "GET", "_func/over?a=1", nil))
			checkStep(t, step{name: "overload by count", status: 200, want: `"one"`}, 200, e.mustDo(t, 200, "POST", "_func/over", obj("params", list(1))))
			status, body := e.do(t, "GET", "_func/over?a=1&b=2", nil)
			checkStep(t, step{name: "overload ambiguous", status: 400, contains: []string{"has 3 versions"}}, status, body)
			checkStep(t, step{name: "unnamed parameters", status: 200, want: `42`}, 200, e.mustDo(t, 200, "POST", "_func/unnamed", obj("params", list(6, 7))))
			checkStep(t, step{name: "OUT parameters of a function", status: 200, want: `{"resource":[{"doubled":10,"tripled":15}]}`}, 200, e.mustDo(t, 200, "GET", "_func/pair?x=5", nil))
		}

		// Listing.
		procs := `{"resource":[{"name":"add_tax"},{"name":"echo"},{"name":"fail_proc"},{"name":"touch_tag"}]}`
		funcs := `{"resource":[{"name":"add_nums"},{"name":"greet"},{"name":"is_adult"},{"name":"older_than"},{"name":"over"},{"name":"pair"},{"name":"plus_ten"},{"name":"unnamed"}]}`
		if e.kind == dialects.MySQL {
			procs = `{"resource":[{"name":"add_tax"},{"name":"echo"},{"name":"fail_proc"},{"name":"older_than"},{"name":"touch_tag"},{"name":"two_sets"}]}`
			funcs = `{"resource":[{"name":"add_nums"},{"name":"greet"},{"name":"is_adult"}]}`
		}
		checkStep(t, step{name: "list procedures", status: 200, want: procs}, 200, e.mustDo(t, 200, "GET", "_proc", nil))
		checkStep(t, step{name: "list functions", status: 200, want: funcs}, 200, e.mustDo(t, 200, "GET", "_func", nil))
		checkStep(t, step{name: "describe", status: 200, contains: []string{`"name":"add_tax"`, `"param_type":"IN"`, `"param_type":"INOUT"`,
			`"name":"tax","position":3,"param_type":"OUT","type":"decimal"`, `"return_type":null`}}, 200, e.mustDo(t, 200, "GET", "_proc?ids=add_tax", nil))
		checkStep(t, step{name: "describe function", status: 200, contains: []string{`"name":"add_nums"`, `"return_type":"integer"`, `"access":["GET","POST"]`}},
			200, e.mustDo(t, 200, "GET", "_func?fields=*", nil))

		// Errors.
		for _, c := range []struct {
			method, path string
			body         any
			status       int
			contains     string
		}{
			{"GET", "_proc/nosuch", nil, 404, "Procedure 'nosuch' does not exist in the database."},
			{"POST", "_func/nosuch", nil, 404, "Function 'nosuch' does not exist in the database."},
			{"GET", "_proc/add_nums", nil, 404, "Procedure 'add_nums' does not exist"},
			{"POST", "_proc/fail_proc", nil, 400, "no way"},
			{"POST", "_func/add_nums", obj("params", obj("c", 1)), 400, "has no parameter 'c'"},
			{"POST", "_func/add_nums", obj("params", list(1, 2, 3)), 400, "takes 2 input parameters"},
			{"GET", "_func/add_nums?a=" + url.QueryEscape("1); DROP TABLE tag; --"), nil, 400, "Invalid value for parameter 'a'"},
			{"POST", "_func/add_nums", obj("params", "x"), 400, "params must be"},
			{"DELETE", "_proc/add_tax", nil, 400, "not currently supported"},
			{"GET", "_proc/add_tax/x", nil, 404, "not found"},
		} {
			status, body := e.do(t, c.method, c.path, c.body)
			if status != c.status || !strings.Contains(body, c.contains) {
				t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.path, status, body, c.status, c.contains)
			}
		}
		e.mustDo(t, 200, "GET", "_table/tag/1", nil)

		// A routine created behind the API is found by the next call.
		create := `CREATE FUNCTION late(x integer) RETURNS integer LANGUAGE sql AS $$ SELECT x * 2 $$`
		if e.kind == dialects.MySQL {
			create = `CREATE FUNCTION late(x INT) RETURNS INT DETERMINISTIC RETURN x * 2`
		}
		if _, err := e.db.ExecContext(t.Context(), create); err != nil {
			t.Fatal(err)
		}
		defer sqldb.SetSchemaRetryAge(0)()
		checkStep(t, step{name: "late function", status: 200, want: `42`}, 200, e.mustDo(t, 200, "GET", "_func/late?x=21", nil))
	})
}
