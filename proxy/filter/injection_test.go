package filter

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"
)

// outcome is what a hostile parameter must come to.
type outcome int

const (
	syntaxErr  outcome = iota + 1 // rejected by the parser
	compileErr                    // rejected by the compiler (unknown field, wrong kind)
	bound                         // accepted, the hostile text is only a bound value or a quoted identifier
)

func (o outcome) String() string {
	return [...]string{"?", "syntax error", "compile error", "bound"}[o]
}

// The injection corpus, after DreamFactory's SqlInjectionTest: tautologies,
// UNION, stacked queries, comments, quote and backslash tricks, NUL bytes,
// look-alike Unicode, sub-queries and time-based probes.
var filterCorpus = []struct {
	in   string
	want outcome
	ids  []int64 // rows a bound filter returns
}{
	{in: "1=1 or 1=1", want: syntaxErr},
	{in: "id = 1 or 1=1", want: syntaxErr},
	{in: "name = '' or '1'='1'", want: syntaxErr},
	{in: "name = 'x' or 'a'='a", want: syntaxErr},
	{in: "name = x' or '1'='1", want: syntaxErr},
	{in: "name = 'x'' or ''1''=''1'", want: bound, ids: []int64{}},
	{in: `name = "x"" or ""1""=""1"`, want: bound, ids: []int64{}},
	{in: "id = 1 or true", want: syntaxErr},
	{in: "id = 1 union select * from sqlite_master", want: syntaxErr},
	{in: "name = 'a' union select name from owners --", want: syntaxErr},
	{in: "name = 'a' UNION ALL SELECT password FROM users", want: syntaxErr},
	{in: "name = 'a union select 1'", want: bound, ids: []int64{}},
	{in: "id = 1; drop table items", want: syntaxErr},
	{in: "id = 1); drop table items; --", want: syntaxErr},
	{in: "name = 'a'; drop table items; --'", want: syntaxErr},
	{in: "name = 'a;drop table items'", want: bound, ids: []int64{}},
	{in: `name = '\'; drop table items; --'`, want: bound, ids: []int64{}},
	{in: "id = 1 --", want: syntaxErr},
	{in: "id = 1 # comment", want: syntaxErr},
	{in: "id = 1 /* comment */", want: syntaxErr},
	{in: "name/**/= 'x'", want: syntaxErr},
	{in: "name = 'x'/**/or/**/1=1", want: syntaxErr},
	{in: "name = '--'", want: bound, ids: []int64{}},
	{in: "name = '/* x */'", want: bound, ids: []int64{}},
	{in: `name = '\\' or 1=1 --'`, want: syntaxErr},
	{in: `name = 'a\' or 1=1 --`, want: syntaxErr},
	{in: `name = '\''`, want: bound, ids: []int64{}},
	{in: `name = '\\''`, want: syntaxErr},
	{in: `name = 'O\'Brien'`, want: bound, ids: []int64{5}},
	{in: `name like '%\'%'`, want: bound, ids: []int64{5}},
	{in: `name = 'back\slash' or name = 'x\'`, want: syntaxErr},
	{in: `name = 'back\\slash'`, want: bound, ids: []int64{6}},
	{in: "name = '\x00' or 1=1", want: syntaxErr},
	{in: "name = 'a\x00'", want: syntaxErr},
	{in: "name\x00 = 1", want: syntaxErr},
	{in: "name = 'x' \u02bcor 1=1", want: syntaxErr},     // modifier letter apostrophe
	{in: "name = 'x' ＯＲ 1=1", want: syntaxErr},           // full-width OR
	{in: "name = \u2018x\u2019 or 1=1", want: syntaxErr}, // curly quotes are not quotes
	{in: "name = '\u2019 or 1=1 --'", want: bound, ids: []int64{}},
	{in: "name = 'x' or name = '\xc0\xa7'", want: syntaxErr}, // overlong UTF-8 quote
	{in: "id = (select 1)", want: syntaxErr},
	{in: "id in (select id from items)", want: syntaxErr},
	{in: "id = sleep(5)", want: syntaxErr},
	{in: "name = benchmark(1000000,md5(1))", want: syntaxErr},
	{in: "id = pg_sleep(5)", want: syntaxErr},
	{in: "exists(select 1) = 1", want: syntaxErr},
	{in: "name like '%' or 1=1", want: syntaxErr},
	{in: "id = 0x1", want: compileErr},
	{in: "id = --1", want: compileErr},
	{in: "id = 1 - -1", want: syntaxErr},
	{in: "id=-1", want: bound, ids: []int64{}},
	{in: "id = '1 or 1=1'", want: compileErr},
	{in: "id = 1e1000", want: compileErr},
	{in: "active = 'true; drop table items'", want: compileErr},
	{in: "created = '2024-01-01; drop table items'", want: compileErr},
	{in: `"name"" = 1 or ""1" = 1`, want: compileErr},
	{in: "`name` = 'x' or `1` = 1", want: compileErr},
	{in: "`name``; drop table items; --` = 1", want: compileErr},
	{in: "[name]]; drop table items; --] = 1", want: compileErr},
	{in: "sqlite_master.name = 'items'", want: compileErr},
	{in: "owner.name = 'x' or owner.password = 'y'", want: compileErr},
	{in: "name = ?", want: bound, ids: []int64{}},
	{in: "name = '?' or name = ?0 or name = ?name", want: bound, ids: []int64{}},
	{in: `name = \?`, want: bound, ids: []int64{}},
	{in: "name = $1", want: bound, ids: []int64{}},
	{in: "name = :name", want: bound, ids: []int64{}},
	{in: "name = {user.email}", want: bound, ids: []int64{}},
	{in: "name = 'a' " + strings.Repeat("and (", 70) + "id = 1" + strings.Repeat(")", 70), want: syntaxErr},
	{in: "name = '" + strings.Repeat("x", 9000) + "'", want: syntaxErr},
	{in: "id in (" + strings.TrimSuffix(strings.Repeat("1,", 1001), ",") + ")", want: syntaxErr},
}

// checkOutcome classifies an error and compares it with the expectation.
func checkOutcome(t *testing.T, err error, stage outcome, want outcome) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var se *SyntaxError
	var ce *CompileError
	got := outcome(0)
	switch {
	case errors.As(err, &se):
		got = syntaxErr
	case errors.As(err, &ce):
		got = compileErr
	default:
		t.Fatalf("%v error of unexpected type %T: %v", stage, err, err)
	}
	if got != want {
		t.Fatalf("got %v (%v), want %v", got, err, want)
	}
	return false
}

// mustBeBound fails unless the case was expected to compile, and checks the
// query text.
func mustBeBound(t *testing.T, q string, want outcome) {
	t.Helper()
	if want != bound {
		t.Fatalf("compiled to %s, want %v", q, want)
	}
	assertOnlySQLSyntax(t, q)
}

// assertIntact checks that the test tables still exist with all their rows.
func assertIntact(t *testing.T, ctx context.Context, e engine) {
	t.Helper()
	for table, rows := range map[string]int{e.s.items: len(itemRows), e.s.owners: len(ownerRows), e.s.tags: len(tagRows)} {
		n, err := e.db.NewSelect().TableExpr("?", bun.Ident(table)).Count(ctx)
		if err != nil || n != int64(rows) {
			t.Fatalf("%s: table %s: %d rows, %v", e.name, table, n, err)
		}
	}
}

func TestInjectionFilter(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := t.Context()
		for _, tt := range filterCorpus {
			name := tt.in
			if len(name) > 60 {
				name = name[:60]
			}
			t.Run(name, func(t *testing.T) {
				ex, err := Parse(tt.in)
				if !checkOutcome(t, err, syntaxErr, tt.want) {
					return
				}
				q, args, err := Compile(ex, e.s)
				if !checkOutcome(t, err, compileErr, tt.want) {
					return
				}
				mustBeBound(t, q, tt.want)
				ids, err := e.selectIDs(ctx, q, args)
				if err != nil {
					t.Fatalf("%s: query failed: %v", e.name, err)
				}
				if diff := cmp.Diff(tt.ids, ids); diff != "" {
					t.Errorf("%s: ids (-want +got):\n%s", e.name, diff)
				}
			})
		}
		assertIntact(t, ctx, e)
	})
}

// TestInjectionParams runs hostile fields, order, group, having and ids
// parameters through parse, compile and (when they compile) the database.
func TestInjectionParams(t *testing.T) {
	type tcase struct {
		in   string
		want outcome
	}
	fields := []tcase{
		{"*, (select name from owners)", syntaxErr},
		{"name from items; --", syntaxErr},
		{"count(*) from owners", syntaxErr},
		{"name, password", compileErr},
		{"name; drop table items", syntaxErr},
		{"name -- x", syntaxErr},
		{"name /* x */", syntaxErr},
		{"`name``, (select 1) as x`", compileErr},
		{"name as \"x\"\" from owners; --\"", bound},
		{"name as `x` , id as [y; drop table items]", bound},
		{"sleep(5)", syntaxErr},
		{"load_file('/etc/passwd')", syntaxErr},
		{"name\x00", syntaxErr},
	}
	order := []tcase{
		{"name; drop table items", syntaxErr},
		{"name desc; --", syntaxErr},
		{"(select 1)", syntaxErr},
		{"name desc, (case when 1=1 then id end)", syntaxErr},
		{"1", syntaxErr},
		{"name asc limit 1", syntaxErr},
		{"name collate nocase", syntaxErr},
		{"\"name\"\" desc; --\"", compileErr},
		{"sleep(5)", syntaxErr},
		{"id desc nulls first; drop table items", syntaxErr},
		{"rand()", syntaxErr},
		{"id, name desc", bound},
	}
	group := []tcase{
		{"status; drop table items", syntaxErr},
		{"status having 1=1", syntaxErr},
		{"1", syntaxErr},
		{"status, (select 1)", syntaxErr},
		{"status union select 1", syntaxErr},
		{"`status` , [id]", bound},
	}
	having := []tcase{
		{"count(*) > 0 or 1=1", syntaxErr},
		{"count(*) > 0; drop table items", syntaxErr},
		{"sum(id) > (select 0)", syntaxErr},
		{"count(*) > 0 union select 1", syntaxErr},
		{"count(*) > '0 or 1=1'", compileErr},
		{"count(password) > 0", compileErr},
		{"count(*) > '1'", bound},
	}
	ids := []tcase{
		{"1 or 1=1", compileErr},
		{"1; drop table items", compileErr},
		{"1) or (1=1", compileErr},
		{"'1'' or ''1''=''1'", compileErr},
		{"1 union select 1", compileErr},
		{"0x1", compileErr},
		{"1--", compileErr},
		{`"1\" or 1=1"`, compileErr},
		{"1'", syntaxErr},
		{"1,\x00", syntaxErr},
		{"1, 2, '3'", bound},
	}

	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := t.Context()
		table := bun.SafeQuery("? AS ?", bun.Ident(e.s.items), bun.Ident("t"))
		run := func(t *testing.T, q *bun.SelectQuery) {
			t.Helper()
			rows, err := q.Rows(ctx)
			if err != nil {
				t.Fatalf("%s: query failed: %v", e.name, err)
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%s: reading rows: %v", e.name, err)
			}
			rows.Close()
		}
		t.Run("fields", func(t *testing.T) {
			for _, tt := range fields {
				t.Run(tt.in, func(t *testing.T) {
					sel, err := ParseFields(tt.in)
					if !checkOutcome(t, err, syntaxErr, tt.want) {
						return
					}
					q, args, err := CompileSelect(sel, e.s)
					if !checkOutcome(t, err, compileErr, tt.want) {
						return
					}
					mustBeBound(t, q, tt.want)
					run(t, e.db.NewSelect().ColumnExpr(q, args...).TableExpr("?", table))
				})
			}
		})
		t.Run("order", func(t *testing.T) {
			for _, tt := range order {
				t.Run(tt.in, func(t *testing.T) {
					items, err := ParseOrder(tt.in)
					if !checkOutcome(t, err, syntaxErr, tt.want) {
						return
					}
					q, args, err := CompileOrder(items, e.s)
					if !checkOutcome(t, err, compileErr, tt.want) {
						return
					}
					mustBeBound(t, q, tt.want)
					run(t, e.db.NewSelect().ColumnExpr("?.?", bun.Ident("t"), bun.Ident("id")).TableExpr("?", table).OrderExpr(q, args...))
				})
			}
		})
		t.Run("group", func(t *testing.T) {
			for _, tt := range group {
				t.Run(tt.in, func(t *testing.T) {
					terms, err := ParseGroup(tt.in)
					if !checkOutcome(t, err, syntaxErr, tt.want) {
						return
					}
					q, args, err := CompileGroup(terms, e.s)
					if !checkOutcome(t, err, compileErr, tt.want) {
						return
					}
					mustBeBound(t, q, tt.want)
					run(t, e.db.NewSelect().ColumnExpr(q, args...).TableExpr("?", table).GroupExpr(q, args...))
				})
			}
		})
		t.Run("having", func(t *testing.T) {
			for _, tt := range having {
				t.Run(tt.in, func(t *testing.T) {
					h, err := ParseHaving(tt.in)
					if !checkOutcome(t, err, syntaxErr, tt.want) {
						return
					}
					q, args, err := CompileHaving(h, e.s)
					if !checkOutcome(t, err, compileErr, tt.want) {
						return
					}
					mustBeBound(t, q, tt.want)
					run(t, e.db.NewSelect().ColumnExpr("?.?", bun.Ident("t"), bun.Ident("status")).TableExpr("?", table).
						GroupExpr("?.?", bun.Ident("t"), bun.Ident("status")).Having(q, args...))
				})
			}
		})
		t.Run("ids", func(t *testing.T) {
			for _, tt := range ids {
				t.Run(tt.in, func(t *testing.T) {
					vals, err := ParseIDs(tt.in)
					if !checkOutcome(t, err, syntaxErr, tt.want) {
						return
					}
					q, args, err := Compile(&Predicate{Left: Term{Path: []string{"id"}}, Op: In, Values: vals}, e.s)
					if !checkOutcome(t, err, compileErr, tt.want) {
						return
					}
					mustBeBound(t, q, tt.want)
					got, err := e.selectIDs(ctx, q, args)
					if err != nil {
						t.Fatalf("%s: query failed: %v", e.name, err)
					}
					if diff := cmp.Diff([]int64{1, 2, 3}, got); diff != "" {
						t.Errorf("ids (-want +got):\n%s", diff)
					}
				})
			}
		})
		assertIntact(t, ctx, e)
	})
}
