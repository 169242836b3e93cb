package filter

import (
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"
)

// sqlWords is everything the compiler may write into query text. Anything
// else there would be client text turned into SQL.
var sqlWords = map[string]bool{
	"?": true, "*": true, "0": true, "1": true,
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true,
	"LIKE": true, "ESCAPE": true, "BETWEEN": true, "EXISTS": true, "SELECT": true,
	"FROM": true, "WHERE": true, "COUNT": true, "SUM": true, "AVG": true, "MIN": true,
	"MAX": true, "AS": true, "ASC": true, "DESC": true, "CASE": true, "WHEN": true,
	"THEN": true, "ELSE": true, "END": true,
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true,
}

// assertOnlySQLSyntax fails the test if the query text holds anything but
// placeholders, parentheses, commas, SQL keywords and operators.
func assertOnlySQLSyntax(t testing.TB, q string) {
	t.Helper()
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ',' }) {
		if !sqlWords[w] {
			t.Fatalf("query text contains %q, which is not SQL syntax the compiler writes: %s", w, q)
		}
	}
}

// anyResolver accepts every name, like a schema in which everything exists,
// with a kind chosen from the name so that all coercions get exercised; a
// dotted name is a related field.
type anyResolver struct{}

func (anyResolver) Field(p []string) (Field, error) {
	h := fnv.New32a()
	for _, s := range p {
		h.Write([]byte(s))
	}
	f := Field{Expr: bun.Ident(p[len(p)-1]), Kind: Kind(h.Sum32() % 6)}
	if len(p) > 1 {
		f.Related = &Related{From: bun.Ident(p[0]), On: bun.Ident(p[0])}
	}
	return f, nil
}

var fuzzSeeds = []string{
	"(status = 'open') and (priority >= 3 or owner.name like 'A%')",
	"a = 1 or b = 2 and not c = 3",
	"a in (1, 'x', null, -2.5e3, true) xor b between 1 and 2 nor c is not null",
	`name = 'it''s' and x = "a\"b" and y like '50\%' and "q"."r s" = 1`,
	"`a``b`.[c]]d] starts with x and d ends with 2024-01-31 and e not contains '%_'",
	"1=1 or 1=1",
	"a = '' or '1'='1'",
	"a = 1 union select * from users",
	"a = 1; drop table x",
	"a = 1 -- comment",
	"a = 1 /* c */",
	"a = '\\' or 1=1 --'",
	"a = \x00",
	"((((((a = 1))))))",
	"not not not a = 1",
	"a eq 1 and b ne 2 and c gt 3 and d ge 4 and e lt 5 and f le 6 and g gte 7 and h lte 8",
	"ÿ = 'ÿ'",
	"a = ?", "a = ?0", "a = ?name", "a = \\?",
}

// FuzzParse checks that the filter parser never panics, that the canonical
// form parses back to the same tree, and that compiling any parsed tree never
// puts client text into the query.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, having := range []bool{false, true} {
			parse, comp := Parse, Compile
			if having {
				parse, comp = ParseHaving, CompileHaving
			}
			e, err := parse(src)
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not a *SyntaxError: %v", err, err)
				}
				if se.Offset < 0 || se.Offset > len(src) {
					t.Fatalf("offset %d out of range for %d bytes", se.Offset, len(src))
				}
				continue
			}
			if e == nil {
				if (&scanner{src: src}).skipSpace(0) != len(src) {
					t.Fatalf("nil expression for %q", src)
				}
				continue
			}
			again, err := parse(e.String())
			if err != nil {
				t.Fatalf("canonical form %q of %q does not parse: %v", e.String(), src, err)
			}
			if diff := cmp.Diff(e, again, ignoreOffsets); diff != "" {
				t.Fatalf("canonical form %q of %q parses differently:\n%s", e.String(), src, diff)
			}
			q, _, err := comp(e, anyResolver{})
			if err != nil {
				var ce *CompileError
				if !errors.As(err, &ce) {
					t.Fatalf("error %T is not a *CompileError: %v", err, err)
				}
				continue
			}
			assertOnlySQLSyntax(t, q)
		}
	})
}

// FuzzParams checks the fields, order, group and ids parsers the same way.
func FuzzParams(f *testing.F) {
	for _, s := range []string{
		"id, name", "*", "count(*), sum(x) as t", "a desc nulls last, b", "`a`,[b],\"c\"",
		"1,2,3", "'a,b', \"c\"", "a; drop table x", "a -- x", "(select 1)", "a as b.c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		check := func(err error) bool {
			t.Helper()
			if err == nil {
				return true
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError: %v", err, err)
			}
			if se.Offset < 0 || se.Offset > len(src) {
				t.Fatalf("offset %d out of range for %d bytes", se.Offset, len(src))
			}
			return false
		}
		compiled := func(q string, err error) {
			t.Helper()
			if err != nil {
				var ce *CompileError
				if !errors.As(err, &ce) {
					t.Fatalf("error %T is not a *CompileError: %v", err, err)
				}
				return
			}
			assertOnlySQLSyntax(t, q)
		}
		if sel, err := ParseFields(src); check(err) {
			q, _, err := CompileSelect(sel, anyResolver{})
			compiled(q, err)
		}
		if items, err := ParseOrder(src); check(err) {
			q, _, err := CompileOrder(items, anyResolver{})
			compiled(q, err)
		}
		if terms, err := ParseGroup(src); check(err) {
			q, _, err := CompileGroup(terms, anyResolver{})
			compiled(q, err)
		}
		if ids, err := ParseIDs(src); check(err) {
			for _, id := range ids {
				if strings.ContainsRune(id.Text, 0) {
					t.Fatalf("id with NUL: %q", id.Text)
				}
			}
		}
	})
}
