package filter

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/schema"
)

var (
	sqliteGen = schema.NewQueryGen(sqlitedialect.New())
	pgGen     = schema.NewQueryGen(pgdialect.New())
	mysqlGen  = schema.NewQueryGen(mysqldialect.New())
)

// compileSQL parses and compiles src against the test schema and formats the
// result as SQLite SQL.
func compileSQL(t *testing.T, src string) string {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	q, args, err := Compile(e, testSchema)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	assertOnlySQLSyntax(t, q)
	return sqliteGen.FormatQuery(q, args...)
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"eq string", "name = 'x'", `"t"."name" = 'x'`},
		{"quote in value", "name = 'O''Brien'", `"t"."name" = 'O''Brien'`},
		{"ne", "name <> 'x'", `"t"."name" <> 'x'`},
		{"lt le gt ge", "id < 1 and id <= 2 and id > 3 and id >= 4",
			`("t"."id" < 1 AND "t"."id" <= 2 AND "t"."id" > 3 AND "t"."id" >= 4)`},
		{"eq null", "name = null", `"t"."name" IS NULL`},
		{"ne null", "name != null", `"t"."name" IS NOT NULL`},
		{"is null", "name is null", `"t"."name" IS NULL`},
		{"is not null", "name is not null", `"t"."name" IS NOT NULL`},
		{"like", "name like 'J%'", `"t"."name" LIKE 'J%' ESCAPE '\'`},
		{"not like", "name not like 'J_'", `"t"."name" NOT LIKE 'J_' ESCAPE '\'`},
		{"like keeps escapes", `name like '50\%'`, `"t"."name" LIKE '50\%' ESCAPE '\'`},
		{"like lone backslash", `name like 'a\b\\'`, `"t"."name" LIKE 'a\\b\\' ESCAPE '\'`},
		{"like number on text", "name like 12", `"t"."name" LIKE '12' ESCAPE '\'`},
		{"contains", "name contains '50%_\\\\'", `"t"."name" LIKE '%50\%\_\\%' ESCAPE '\'`},
		{"not contains", "name not contains 'a'", `"t"."name" NOT LIKE '%a%' ESCAPE '\'`},
		{"starts with", "name starts with 'a_'", `"t"."name" LIKE 'a\_%' ESCAPE '\'`},
		{"not starts with", "name not starts with 'a'", `"t"."name" NOT LIKE 'a%' ESCAPE '\'`},
		{"ends with", "name ends with '%'", `"t"."name" LIKE '%\%' ESCAPE '\'`},
		{"not ends with", "name not ends with 'a'", `"t"."name" NOT LIKE '%a' ESCAPE '\'`},
		{"in", "id in (1, 2, '3')", `"t"."id" IN (1, 2, 3)`},
		{"not in", "name not in ('a', 'b')", `"t"."name" NOT IN ('a', 'b')`},
		{"in with null", "id in (1, null)", `("t"."id" IN (1) OR "t"."id" IS NULL)`},
		{"not in with null", "id not in (1, null)", `("t"."id" NOT IN (1) AND "t"."id" IS NOT NULL)`},
		{"in only null", "id in (null)", `"t"."id" IS NULL`},
		{"not in only null", "id not in (null, NULL)", `"t"."id" IS NOT NULL`},
		{"between", "id between 1 and 5", `("t"."id" BETWEEN 1 AND 5)`},
		{"not between", "created not between '2024-01-01' and '2024-12-31'",
			`("t"."created" NOT BETWEEN '2024-01-01' AND '2024-12-31')`},
		{"and or", "id = 1 or name = 'a' and id = 2", `("t"."id" = 1 OR ("t"."name" = 'a' AND "t"."id" = 2))`},
		{"not", "not (id = 1 or id = 2)", `NOT (("t"."id" = 1 OR "t"."id" = 2))`},
		{"not predicate", "not id = 1", `NOT ("t"."id" = 1)`},
		{"xor", "id = 1 xor name = 'a'", `(("t"."id" = 1) <> ("t"."name" = 'a'))`},
		{"xor chain", "id = 1 xor id = 2 xor id = 3", `((("t"."id" = 1) <> ("t"."id" = 2)) <> ("t"."id" = 3))`},
		{"nor", "id = 1 nor id = 2", `NOT ("t"."id" = 1 OR "t"."id" = 2)`},
		{"belongs-to", "owner.name = 'Bob'",
			`EXISTS (SELECT 1 FROM "owners" AS "o" WHERE "o"."id" = "t"."owner_id" AND "o"."name" = 'Bob')`},
		{"has-many not", "not tag.label in ('red', 'blue')",
			`NOT (EXISTS (SELECT 1 FROM "tags" AS "g" WHERE "g"."item_id" = "t"."id" AND "g"."label" IN ('red', 'blue')))`},
		{"related case-insensitive", "OWNER.Name is null",
			`EXISTS (SELECT 1 FROM "owners" AS "o" WHERE "o"."id" = "t"."owner_id" AND "o"."name" IS NULL)`},
		{"typical", "(status = 'open') and (priority >= 3 or owner.name like 'A%')",
			`("t"."status" = 'open' AND ("t"."priority" >= 3 OR EXISTS (SELECT 1 FROM "owners" AS "o" WHERE "o"."id" = "t"."owner_id" AND "o"."name" LIKE 'A%' ESCAPE '\')))`},

		// Coercion by kind.
		{"int from string", "priority = '42'", `"t"."priority" = 42`},
		{"int from padded string", "priority = ' 42 '", `"t"."priority" = 42`},
		{"int from bool", "priority = true", `"t"."priority" = 1`},
		{"int from false", "priority = false", `"t"."priority" = 0`},
		{"int with fraction", "priority < 2.5", `"t"."priority" < 2.5`},
		{"int beyond int64", "id = 123456789012345678901234567890", `"t"."id" = 123456789012345678901234567890`},
		{"int negative", "id > -5", `"t"."id" > -5`},
		{"float exact decimal", "score = 0.1", `"t"."score" = 0.1`},
		{"float leading dot", "score = -.5", `"t"."score" = -0.5`},
		{"float exponent", "score < 1.5e3", `"t"."score" < 1500`},
		{"float from string", "score = '2.25'", `"t"."score" = 2.25`},
		{"bool true", "active = true", `"t"."active" = TRUE`},
		{"bool from number", "active = 0", `"t"."active" = FALSE`},
		{"bool from string", "active = 'Yes'", `"t"."active" = TRUE`},
		{"bool from bare", "active = off", `"t"."active" = FALSE`},
		{"time date", "created >= 2024-01-31", `"t"."created" >= '2024-01-31'`},
		{"time datetime", "created < '2024-01-31 13:45:00'", `"t"."created" < '2024-01-31 13:45:00'`},
		{"time rfc3339", "created < '2024-01-31T13:45:00.123Z'", `"t"."created" < '2024-01-31T13:45:00.123Z'`},
		{"time only", "created > '13:45'", `"t"."created" > '13:45'`},
		{"string from number keeps spelling", "name = 007", `"t"."name" = '007'`},
		{"string from bool", "name = true", `"t"."name" = 'true'`},
		{"other string", "data = 'x'", `"t"."data" = 'x'`},
		{"other number", "data = 5", `"t"."data" = 5`},
		{"other bool", "data = false", `"t"."data" = FALSE`},
		{"hostile value stays a value", "name = '1'' OR ''1''=''1'", `"t"."name" = '1'' OR ''1''=''1'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compileSQL(t, tt.in); got != tt.want {
				t.Errorf("Compile(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestCompileArgs(t *testing.T) {
	e, err := Parse("name contains 'x%' and id in (1, 2.5) and score = 1e2 and active = 'no' and owner.id = 3")
	if err != nil {
		t.Fatal(err)
	}
	q, args, err := Compile(e, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	wantQ := "(? LIKE ? ESCAPE ? AND ? IN (?, ?) AND ? = ? AND ? = ? AND EXISTS (SELECT 1 FROM ? WHERE ? AND ? = ?))"
	if q != wantQ {
		t.Errorf("query\n got %s\nwant %s", q, wantQ)
	}
	want := []any{
		col("t", "name"), `%x\%%`, `\`,
		col("t", "id"), int64(1), Decimal("2.5"),
		col("t", "score"), float64(100),
		col("t", "active"), false,
	}
	if diff := cmp.Diff(want, args[:len(want)]); diff != "" {
		t.Errorf("args mismatch (-want +got):\n%s", diff)
	}
	if len(args) != len(want)+4 || args[len(args)-1] != int64(3) {
		t.Errorf("related args: %v", args[len(want):])
	}
}

func TestCompileNil(t *testing.T) {
	q, args, err := Compile(nil, testSchema)
	if q != "" || args != nil || err != nil {
		t.Errorf("Compile(nil) = %q, %v, %v", q, args, err)
	}
}

// TestCompileDialects shows the LIKE escape clause as each dialect writes it:
// MySQL's string literals need the backslash doubled.
func TestCompileDialects(t *testing.T) {
	e, err := Parse(`name contains 'a\b' and name like 'x\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	q, args, err := Compile(e, itemsSchemaUnqualified{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		gen  schema.QueryGen
		want string
	}{
		{"sqlite", sqliteGen, `("name" LIKE '%a\\b%' ESCAPE '\' AND "name" LIKE 'x\_%' ESCAPE '\')`},
		{"pg", pgGen, `("name" LIKE '%a\\b%' ESCAPE '\' AND "name" LIKE 'x\_%' ESCAPE '\')`},
		{"mysql", mysqlGen, "(`name` LIKE '%a\\\\\\\\b%' ESCAPE '\\\\' AND `name` LIKE 'x\\\\_%' ESCAPE '\\\\')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.gen.FormatQuery(q, args...); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// itemsSchemaUnqualified resolves any single name to a bare identifier.
type itemsSchemaUnqualified struct{}

func (itemsSchemaUnqualified) Field(p []string) (Field, error) {
	if len(p) != 1 {
		return Field{}, ErrUnknownField
	}
	return Field{Expr: bun.Ident(p[0]), Kind: KindString}, nil
}

func TestCompileHaving(t *testing.T) {
	tests := []struct{ in, want string }{
		{"count(*) > 1", `COUNT(*) > 1`},
		{"count(name) >= '2' and sum(score) < 10.5", `(COUNT("t"."name") >= 2 AND SUM("t"."score") < 10.5)`},
		{"avg(priority) between 1 and 2", `(AVG("t"."priority") BETWEEN 1 AND 2)`},
		{"min(created) > 2024-01-01 or max(name) like 'a%'", `(MIN("t"."created") > '2024-01-01' OR MAX("t"."name") LIKE 'a%' ESCAPE '\')`},
		{"status = 'open'", `"t"."status" = 'open'`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseHaving(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			q, args, err := CompileHaving(e, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			assertOnlySQLSyntax(t, q)
			if got := sqliteGen.FormatQuery(q, args...); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		having  bool
		want    string
		offset  int
		unknown bool
	}{
		{name: "unknown field", in: "nope = 1", want: "field 'nope': no such field at position 0", unknown: true},
		{name: "unknown later", in: "id = 1 and x.y = 2", want: "field 'x.y': no such field at position 11", offset: 11, unknown: true},
		{name: "unknown related column", in: "owner.secret = 1", want: "field 'owner.secret': no such field at position 0", unknown: true},
		{name: "hostile name", in: `"name""; DROP TABLE items; --" = 1`, want: `field 'name"; DROP TABLE items; --': no such field at position 0`, unknown: true},
		{name: "not a number", in: "priority = 'abc'", want: "field 'priority': 'abc' is not a number at position 11", offset: 11},
		{name: "not a number in list", in: "id in (1, 'x')", want: "field 'id': 'x' is not a number at position 10", offset: 10},
		{name: "not a number between", in: "score between 1 and zz", want: "field 'score': 'zz' is not a number at position 20", offset: 20},
		{name: "injection in number", in: "id = '1 or 1=1'", want: "field 'id': '1 or 1=1' is not a number at position 5", offset: 5},
		{name: "quotes in message", in: `id = 'O''Brien\\'`, want: `field 'id': 'O\'Brien\\' is not a number at position 5`, offset: 5},
		{name: "exponent overflow", in: "score = 1e999", want: "field 'score': number '1e999' is out of range at position 8", offset: 8},
		{name: "not a boolean", in: "active = 'maybe'", want: "field 'active': 'maybe' is not a boolean (use true or false) at position 9", offset: 9},
		{name: "not a boolean number", in: "active = 2", want: "field 'active': '2' is not a boolean (use true or false) at position 9", offset: 9},
		{name: "not a date", in: "created > 'yesterday'", want: "field 'created': 'yesterday' is not a date/time such as '2024-01-31' or '2024-01-31 13:45:00' at position 10", offset: 10},
		{name: "number as date", in: "created > 2024", want: "field 'created': '2024' is not a date/time such as '2024-01-31' or '2024-01-31 13:45:00' at position 10", offset: 10},
		{name: "bad date", in: "created = '2024-02-30'", want: "field 'created': '2024-02-30' is not a date/time such as '2024-01-31' or '2024-01-31 13:45:00' at position 10", offset: 10},
		{name: "like on integer", in: "priority like '1%'", want: "field 'priority': like needs a text field, and this one is integer at position 0"},
		{name: "contains on date", in: "created contains '2024'", want: "field 'created': contains needs a text field, and this one is date/time at position 0"},
		{name: "aggregate in having over related", in: "count(owner.name) > 1", having: true, want: "field 'count(owner.name)': related fields cannot be used in having at position 0"},
		{name: "related in having", in: "owner.name = 'x'", having: true, want: "field 'owner.name': related fields cannot be used in having at position 0"},
		{name: "unknown in aggregate", in: "sum(nope) > 1", having: true, want: "field 'sum(nope)': no such field at position 0", unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parse, comp := Parse, Compile
			if tt.having {
				parse, comp = ParseHaving, CompileHaving
			}
			e, err := parse(tt.in)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			q, _, err := comp(e, testSchema)
			if err == nil {
				t.Fatalf("no error; query %s", q)
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *CompileError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			if ce.Offset != tt.offset {
				t.Errorf("offset = %d, want %d", ce.Offset, tt.offset)
			}
			if got := errors.Is(err, ErrUnknownField); got != tt.unknown {
				t.Errorf("errors.Is(err, ErrUnknownField) = %v", got)
			}
		})
	}
}

// TestCompileHandBuilt covers trees that the parser never produces but a
// caller could build by hand.
func TestCompileHandBuilt(t *testing.T) {
	name := Term{Path: []string{"name"}}
	tests := []struct {
		name string
		e    Expr
		want string
	}{
		{"aggregate in filter", &Predicate{Left: Term{Agg: AggCount}, Op: Gt, Values: []Value{{Kind: ValueNumber, Text: "1"}}},
			"field 'count(*)': aggregate functions are not allowed in a filter at position 0"},
		{"missing value", &Predicate{Left: name, Op: Eq}, "field 'name': wrong number of values for = at position 0"},
		{"empty list", &Predicate{Left: name, Op: In}, "field 'name': wrong number of values for IN at position 0"},
		{"null lt", &Predicate{Left: name, Op: Lt, Values: []Value{{Kind: ValueNull}}}, "field 'name': null can only be compared with = and != at position 0"},
		{"null like", &Predicate{Left: name, Op: Like, Values: []Value{{Kind: ValueNull}}}, "field 'name': null cannot be used with like at position 0"},
		{"empty path", &Predicate{Left: Term{}, Op: IsNull}, "empty field name at position 0"},
		{"empty logical", &Logical{Op: And}, "empty AND expression at position 0"},
		{"bad operator", &Predicate{Left: name, Op: Operator(200), Values: []Value{{Kind: ValueNumber, Text: "1"}}}, "field 'name': unsupported operator at position 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Compile(tt.e, testSchema)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestStringOfHandBuiltTrees(t *testing.T) {
	for _, tt := range []struct {
		e    Expr
		want string
	}{
		{&Logical{Op: And, Terms: []Expr{nil, &Not{}}}, "<nil> AND NOT <nil>"},
		{&Logical{Op: Or}, ""},
		{&Not{X: &Logical{Op: Xor, Terms: []Expr{&Predicate{Left: Term{Path: []string{"a b"}}, Op: IsNull}}}}, `NOT ("a b" IS NULL)`},
	} {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		_ = tt.e.Pos()
	}
}

func TestCompileResolverErrors(t *testing.T) {
	e, err := Parse("a = 1")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	tests := []struct {
		name string
		r    Resolver
		want string
	}{
		{"other error", ResolverFunc(func([]string) (Field, error) { return Field{}, boom }), "field 'a': boom at position 0"},
		{"no expr", ResolverFunc(func([]string) (Field, error) { return Field{Kind: KindString}, nil }), "field 'a': the resolver returned no SQL for this field at position 0"},
		{"half related", ResolverFunc(func([]string) (Field, error) {
			return Field{Expr: bun.Ident("a"), Related: &Related{From: bun.Ident("x")}}, nil
		}), "field 'a': the resolver returned no SQL for this field at position 0"},
		{"nil resolver", nil, "field 'a': no resolver at position 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Compile(e, tt.r)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
	_, _, err = Compile(e, ResolverFunc(func([]string) (Field, error) { return Field{}, boom }))
	if !errors.Is(err, boom) {
		t.Error("resolver error not wrapped")
	}
}

func TestCompileSelect(t *testing.T) {
	tests := []struct{ in, want string }{
		{"*", `*`},
		{"", `*`},
		{"id, Name", `"t"."id", "t"."name"`},
		{"status, count(*), sum(score) as total, max(created)",
			`"t"."status", COUNT(*) AS "count(*)", SUM("t"."score") AS "total", MAX("t"."created") AS "max(created)"`},
		{"name as \"odd \"\" alias\"", `"t"."name" AS "odd "" alias"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sel, err := ParseFields(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			q, args, err := CompileSelect(sel, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			assertOnlySQLSyntax(t, q)
			if got := sqliteGen.FormatQuery(q, args...); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	for in, want := range map[string]string{
		"owner.name": "field 'owner.name': related fields cannot be used in fields at position 0",
		"nope":       "field 'nope': no such field at position 0",
	} {
		sel, err := ParseFields(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := CompileSelect(sel, testSchema); err == nil || err.Error() != want {
			t.Errorf("CompileSelect(%q) error %v, want %s", in, err, want)
		}
	}
	if _, _, err := CompileSelect(Selection{}, testSchema); err == nil {
		t.Error("empty selection compiled")
	}
}

func TestCompileOrder(t *testing.T) {
	tests := []struct{ in, want string }{
		{"id", `"t"."id" ASC`},
		{"name desc, id", `"t"."name" DESC, "t"."id" ASC`},
		{"priority desc nulls last", `CASE WHEN "t"."priority" IS NULL THEN 1 ELSE 0 END, "t"."priority" DESC`},
		{"priority nulls first", `CASE WHEN "t"."priority" IS NULL THEN 0 ELSE 1 END, "t"."priority" ASC`},
		{"count(*) desc", `COUNT(*) DESC`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			items, err := ParseOrder(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			q, args, err := CompileOrder(items, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			assertOnlySQLSyntax(t, q)
			if got := sqliteGen.FormatQuery(q, args...); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	items, err := ParseOrder("tag.label")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := CompileOrder(items, testSchema); err == nil || err.Error() != "field 'tag.label': related fields cannot be used in order at position 0" {
		t.Errorf("related order: %v", err)
	}
}

func TestCompileGroup(t *testing.T) {
	terms, err := ParseGroup("status, Owner_ID")
	if err != nil {
		t.Fatal(err)
	}
	q, args, err := CompileGroup(terms, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sqliteGen.FormatQuery(q, args...), `"t"."status", "t"."owner_id"`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if _, _, err := CompileGroup([]Term{{Agg: AggCount}}, testSchema); err == nil {
		t.Error("aggregate in group compiled")
	}
	if _, _, err := CompileGroup([]Term{{Path: []string{"owner", "name"}}}, testSchema); err == nil {
		t.Error("related field in group compiled")
	}
}

func TestValueAs(t *testing.T) {
	num := func(s string) Value { return Value{Kind: ValueNumber, Text: s} }
	str := func(s string) Value { return Value{Kind: ValueString, Text: s} }
	tests := []struct {
		name string
		v    Value
		k    Kind
		want any
		err  string
	}{
		{"null", Value{Kind: ValueNull, Text: "null"}, KindInteger, nil, ""},
		{"int", num("42"), KindInteger, int64(42), ""},
		{"int leading zeros", num("007"), KindInteger, int64(7), ""},
		{"int min", num("-9223372036854775808"), KindInteger, int64(math.MinInt64), ""},
		{"int overflow", num("9223372036854775808"), KindInteger, Decimal("9223372036854775808"), ""},
		{"decimal", num("1."), KindFloat, Decimal("1.0"), ""},
		{"exponent", num("-2E2"), KindFloat, float64(-200), ""},
		{"string number", str("3.5"), KindFloat, Decimal("3.5"), ""},
		{"string not number", str("3,5"), KindFloat, nil, "'3,5' is not a number"},
		{"string plus", str("+3"), KindInteger, nil, "'+3' is not a number"},
		{"string to string", num("1e3"), KindString, "1e3", ""},
		{"bool t", str("T"), KindBoolean, true, ""},
		{"bool n", str("n"), KindBoolean, false, ""},
		{"time", str("2024-01-31 13:45:00+02:00"), KindTime, "2024-01-31 13:45:00+02:00", ""},
		{"time fraction", str("2024-01-31 13:45:00.123456"), KindTime, "2024-01-31 13:45:00.123456", ""},
		{"other string", str("x"), KindOther, "x", ""},
		{"other number", num("1.5"), KindOther, Decimal("1.5"), ""},
		{"long message", str(strings.Repeat("x", 100)), KindInteger, nil, "'" + strings.Repeat("x", 40) + "…' is not a number"},
		{"control chars escaped", str("a\nb"), KindInteger, nil, `'a\x0ab' is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.v.As(tt.k)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("As mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecimalRefusesNonNumbers(t *testing.T) {
	for _, d := range []Decimal{"", "-", "1; DROP TABLE x", "1.", ".5", "1e5", "1..2", "--1", "0x10"} {
		if _, err := d.AppendQuery(sqliteGen, nil); err == nil {
			t.Errorf("Decimal(%q) appended", d)
		}
	}
	got := sqliteGen.FormatQuery("? = ?", bun.Ident("a"), Decimal("-12.50"))
	if got != `"a" = -12.50` {
		t.Errorf("got %s", got)
	}
	if v, err := Decimal("1.5").Value(); err != nil || v != "1.5" {
		t.Errorf("Value() = %v, %v", v, err)
	}
}
