package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseCanonical checks what every construct parses to, through the
// canonical rendering of the tree.
func TestParseCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Comparison operators, symbols and words.
		{"eq", "a = 1", "a = 1"},
		{"eq no spaces", "a=1", "a = 1"},
		{"ne", "a != 'x'", "a != 'x'"},
		{"ne sql", "a <> 'x'", "a != 'x'"},
		{"lt", "a < 1", "a < 1"},
		{"le", "a <= 1", "a <= 1"},
		{"gt", "a > 1", "a > 1"},
		{"ge", "a >= 1", "a >= 1"},
		{"symbols tight", "age>21", "age > 21"},
		{"word eq", "a eq 1", "a = 1"},
		{"word ne", "a NE 1", "a != 1"},
		{"word neq", "a neq 1", "a != 1"},
		{"word gt", "a gt 1", "a > 1"},
		{"word ge", "a ge 1", "a >= 1"},
		{"word gte", "a GTE 1", "a >= 1"},
		{"word lt", "a lt 1", "a < 1"},
		{"word le", "a le 1", "a <= 1"},
		{"word lte", "a Lte 1", "a <= 1"},
		{"like", "name like 'J%'", "name LIKE 'J%'"},
		{"not like", "name NOT LIKE 'J%'", "name NOT LIKE 'J%'"},
		{"in", "id in (1, 2, 3)", "id IN (1, 2, 3)"},
		{"in tight", "id IN(1,2,3)", "id IN (1, 2, 3)"},
		{"in one", "id in ('a')", "id IN ('a')"},
		{"not in", "id not in ('a','b')", "id NOT IN ('a', 'b')"},
		{"in with null", "a in (1, null)", "a IN (1, null)"},
		{"is null", "phone is null", "phone IS NULL"},
		{"is not null", "phone IS NOT NULL", "phone IS NOT NULL"},
		{"between", "age between 18 and 65", "age BETWEEN 18 AND 65"},
		{"between &&", "age between 18 && 65", "age BETWEEN 18 AND 65"},
		{"not between", "age not between 1 and 2", "age NOT BETWEEN 1 AND 2"},
		{"contains", "name contains 'ab'", "name CONTAINS 'ab'"},
		{"not contains", "name not contains 'ab'", "name NOT CONTAINS 'ab'"},
		{"starts with", "name starts with 'ab'", "name STARTS WITH 'ab'"},
		{"starts with spaced", "name STARTS   with\t'ab'", "name STARTS WITH 'ab'"},
		{"not starts with", "name not starts with 'ab'", "name NOT STARTS WITH 'ab'"},
		{"ends with", "name ends with 'ab'", "name ENDS WITH 'ab'"},
		{"not ends with", "name not ends with 'ab'", "name NOT ENDS WITH 'ab'"},
		{"eq null", "a = null", "a = null"},
		{"ne null", "a != NULL", "a != null"},

		// Precedence: comparison > not > and > xor > or/nor.
		{"and over or", "a = 1 or b = 2 and c = 3", "a = 1 OR (b = 2 AND c = 3)"},
		{"and over or left", "a = 1 and b = 2 or c = 3", "(a = 1 AND b = 2) OR c = 3"},
		{"not over and", "not a = 1 and b = 2", "NOT a = 1 AND b = 2"},
		{"not parens", "not (a = 1 or b = 2)", "NOT (a = 1 OR b = 2)"},
		{"not not", "not not a = 1", "NOT NOT a = 1"},
		{"parens override", "(a = 1 or b = 2) and c = 3", "(a = 1 OR b = 2) AND c = 3"},
		{"xor under and", "a = 1 and b = 2 xor c = 3", "(a = 1 AND b = 2) XOR c = 3"},
		{"xor over or", "a = 1 xor b = 2 or c = 3", "(a = 1 XOR b = 2) OR c = 3"},
		{"xor chain", "a = 1 xor b = 2 xor c = 3", "a = 1 XOR b = 2 XOR c = 3"},
		{"nor chain", "a = 1 nor b = 2 nor c = 3", "a = 1 NOR b = 2 NOR c = 3"},
		{"nor with and", "a = 1 nor b = 2 and c = 3", "a = 1 NOR (b = 2 AND c = 3)"},
		{"symbols", "a = 1 && b = 2 || c = 3", "(a = 1 AND b = 2) OR c = 3"},
		{"and chain is flat", "a = 1 and b = 2 and c = 3", "a = 1 AND b = 2 AND c = 3"},
		{"explicit nesting kept", "a = 1 and (b = 2 and c = 3)", "a = 1 AND (b = 2 AND c = 3)"},
		{"redundant parens", "((a = 1))", "a = 1"},
		{"df style", "(a = 1) and (b like 'x%')", "a = 1 AND b LIKE 'x%'"},
		{"df style or", "(a = 1) OR (b = 2) or (c = 3)", "a = 1 OR b = 2 OR c = 3"},
		{"df tight", "(a=1)AND(b=2)", "a = 1 AND b = 2"},
		{"between inside and", "a between 1 and 5 and b = 2", "a BETWEEN 1 AND 5 AND b = 2"},
		{"typical", "(status = 'open') and (priority >= 3 or owner.name like 'A%')",
			"status = 'open' AND (priority >= 3 OR owner.name LIKE 'A%')"},

		// Case-insensitive keywords.
		{"mixed case", "A = 1 AnD b LiKe 'x' Or c Is NoT nUlL", "(A = 1 AND b LIKE 'x') OR c IS NOT NULL"},
		{"true upper", "a = TRUE", "a = true"},
		{"false mixed", "a = False", "a = false"},

		// Strings and escapes.
		{"doubled quote", "name = 'it''s'", "name = 'it''s'"},
		{"backslash quote", `name = 'it\'s'`, "name = 'it''s'"},
		{"double quoted", `name = "say ""hi"""`, `name = 'say "hi"'`},
		{"double quoted backslash", `name = "a\"b"`, `name = 'a"b'`},
		{"single in double", `name = "O'Brien"`, `name = 'O''Brien'`},
		{"backslash backslash", `name = 'C:\\dir'`, `name = 'C:\\dir'`},
		{"backslash kept", `name like '50\%'`, `name LIKE '50\\%'`},
		{"backslash n kept", `name = 'a\nb'`, `name = 'a\\nb'`},
		{"empty string", "name = ''", "name = ''"},
		{"operators in string", "name = 'a = 1 or 1 = 1; --'", "name = 'a = 1 or 1 = 1; --'"},
		{"unicode string", "name = 'Ünïcödé ☃'", "name = 'Ünïcödé ☃'"},

		// Numbers.
		{"negative", "a = -5", "a = -5"},
		{"negative tight", "a=-5", "a = -5"},
		{"decimal", "a = 3.14", "a = 3.14"},
		{"negative decimal", "a = -0.5", "a = -0.5"},
		{"leading dot", "a = .5", "a = .5"},
		{"exponent", "a = 1e3", "a = 1e3"},
		{"exponent signed", "a = 1.5E-3", "a = 1.5E-3"},
		{"big", "a = 123456789012345678901234567890", "a = 123456789012345678901234567890"},

		// Bare values.
		{"bare word", "name = John", "name = 'John'"},
		{"bare date", "d > 2024-01-31", "d > '2024-01-31'"},
		{"bare datetime", "d > 2024-01-31T10:00:00Z", "d > '2024-01-31T10:00:00Z'"},
		{"bare email", "email = a@b.c", "email = 'a@b.c'"},
		{"bare pattern", "name like J%", "name LIKE 'J%'"},
		{"bare number-ish", "code = 12abc", "code = '12abc'"},
		{"bare in list", "a in (x, y)", "a IN ('x', 'y')"},
		{"bare before paren", "(a = x)", "a = 'x'"},

		// Names.
		{"dotted", "customer.name = 'x'", "customer.name = 'x'"},
		{"double quoted name", `"customer"."first name" = 1`, `customer."first name" = 1`},
		{"backtick name", "`first name` = 1", `"first name" = 1`},
		{"backtick doubled", "`a``b` = 1", "\"a`b\" = 1"},
		{"bracket name", "[first name] = 1", `"first name" = 1`},
		{"bracket doubled", "[a]]b] = 1", `"a]b" = 1`},
		{"bracket dotted", "[a].[b c] = 1", `a."b c" = 1`},
		{"quoted keyword", `"and" = 1`, `"and" = 1`},
		{"keyword after dot", "rel.and = 1", `rel."and" = 1`},
		{"operator word as name", "like = 1", "like = 1"},
		{"underscore dollar", "_a$1 = 1", "_a$1 = 1"},
		{"unicode name", "名前 = 'x' and café = 1", "名前 = 'x' AND café = 1"},
		{"name with quote", `"a""b" = 1`, `"a""b" = 1`},
		{"spaces around dot", "a . b = 1", "a.b = 1"},

		// White space.
		{"whitespace", " \ta\n=\r\n1 \f", "a = 1"},
		{"unicode space", "a\u00a0=\u20031", "a = 1"},
		{"no space parens", "(a=1)and(b='x')or(c is null)", "(a = 1 AND b = 'x') OR c IS NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := e.String(); got != tt.want {
				t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
			}
			// The canonical form parses back to the same tree.
			again, err := Parse(e.String())
			if err != nil {
				t.Fatalf("reparse %q: %v", e.String(), err)
			}
			if diff := cmp.Diff(e, again, ignoreOffsets); diff != "" {
				t.Errorf("reparse differs (-first +second):\n%s", diff)
			}
		})
	}
}

var ignoreOffsets = cmp.FilterPath(func(p cmp.Path) bool {
	if sf, ok := p.Last().(cmp.StructField); ok {
		return sf.Name() == "Offset"
	}
	return false
}, cmp.Ignore())

// TestParseTree checks node types, values and offsets in full.
func TestParseTree(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Expr
	}{
		{
			name: "precedence and offsets",
			//   0         1         2         3         4
			//   0123456789012345678901234567890123456789012345
			in: "a = 1 or not b in ('x', -2.5) and c.d is null",
			want: &Logical{Op: Or, Terms: []Expr{
				&Predicate{Left: Term{Path: []string{"a"}}, Op: Eq, Values: []Value{{Kind: ValueNumber, Text: "1", Offset: 4}}},
				&Logical{Op: And, Terms: []Expr{
					&Not{Offset: 9, X: &Predicate{Left: Term{Path: []string{"b"}, Offset: 13}, Op: In, Values: []Value{
						{Kind: ValueString, Text: "x", Offset: 19},
						{Kind: ValueNumber, Text: "-2.5", Offset: 24},
					}}},
					&Predicate{Left: Term{Path: []string{"c", "d"}, Offset: 34}, Op: IsNull},
				}},
			}},
		},
		{
			name: "values",
			in:   "a in (TRUE, false, NULL, 'x', \"y\", z)",
			want: &Predicate{Left: Term{Path: []string{"a"}}, Op: In, Values: []Value{
				{Kind: ValueBool, Text: "true", Offset: 6},
				{Kind: ValueBool, Text: "false", Offset: 12},
				{Kind: ValueNull, Text: "null", Offset: 19},
				{Kind: ValueString, Text: "x", Offset: 25},
				{Kind: ValueString, Text: "y", Offset: 30},
				{Kind: ValueString, Text: "z", Offset: 35},
			}},
		},
		{
			name: "quoted true is a string",
			in:   "a = 'true'",
			want: &Predicate{Left: Term{Path: []string{"a"}}, Op: Eq, Values: []Value{{Kind: ValueString, Text: "true", Offset: 4}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseBlank(t *testing.T) {
	for _, in := range []string{"", " ", "\t\n", "\u00a0"} {
		e, err := Parse(in)
		if e != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil, nil", in, e, err)
		}
	}
}

func TestParseHaving(t *testing.T) {
	tests := []struct{ in, want string }{
		{"count(*) > 5", "count(*) > 5"},
		{"COUNT(*) >= 2 and sum(total) < 100.5", "count(*) >= 2 AND sum(total) < 100.5"},
		{"avg(t.price) between 1 and 2 or max(x) is null", "avg(t.price) BETWEEN 1 AND 2 OR max(x) IS NULL"},
		{"min (x) = 1", "min(x) = 1"},
		{"status = 'open'", "status = 'open'"},
		{"count = 3", `"count" = 3`}, // a field named count
		{"count(`odd name`) = 3", `count("odd name") = 3`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseHaving(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != tt.want {
				t.Errorf("ParseHaving(%q) = %s, want %s", tt.in, got, tt.want)
			}
			again, err := ParseHaving(e.String())
			if err != nil {
				t.Fatalf("reparse: %v", err)
			}
			if diff := cmp.Diff(e, again, ignoreOffsets); diff != "" {
				t.Errorf("reparse differs:\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
		offset         int
	}{
		{"missing value", "a =", "filter: unexpected end of input at position 3; expected a value", 3},
		{"paren value", "(a = )", "filter: unexpected ')' at position 5; expected a value", 5},
		{"stray close", "a = 1)", "filter: unexpected ')' without a matching '(' at position 5", 5},
		{"unclosed", "(a = 1", "filter: unexpected end of input at position 6; expected ')' to close the '(' at position 0", 6},
		{"double equals", "a == 1", "filter: unexpected '=' at position 3; expected a value", 3},
		{"empty list", "a in ()", "filter: empty value list at position 6; expected at least one value", 6},
		{"list no parens", "a in 1", "filter: unexpected number '1' at position 5; expected '(': value lists must be wrapped in parentheses", 5},
		{"list unclosed", "a in (1, 2", "filter: unexpected end of input at position 10; expected ',' or ')'", 10},
		{"list trailing comma", "a in (1,)", "filter: unexpected ')' at position 8; expected a value", 8},
		{"unterminated string", "a = 'abc", "filter: unterminated string at position 4; expected a closing '", 4},
		{"unterminated dq", `a = "abc`, `filter: unterminated string at position 4; expected a closing "`, 4},
		{"unterminated name", "`abc = 1", "filter: unterminated quoted name at position 0; expected a closing `", 0},
		{"missing and", "a = 1 b = 2", "filter: unexpected 'b' at position 6; expected 'and', 'or' or the end of the filter", 6},
		{"keyword as name", "and = 1", "filter: unexpected keyword 'and' at position 0; expected a field name (quote a field named 'and')", 0},
		{"keyword as value", "a = and", "filter: unexpected keyword 'and' at position 4; expected a value", 4},
		{"or as value", "a = 1 and b = OR", "filter: unexpected keyword 'OR' at position 14; expected a value", 14},
		{"unknown operator", "a foo 1", "filter: unexpected 'foo' at position 2; expected " + expectOperator, 2},
		{"no operator", "a", "filter: unexpected end of input at position 1; expected " + expectOperator, 1},
		{"is value", "a is 1", "filter: unexpected number '1' at position 5; expected 'null' after 'is'", 5},
		{"is not value", "a is not 'x'", "filter: unexpected string 'x' at position 9; expected 'null' after 'is'", 9},
		{"not is", "a not is null", "filter: unexpected 'is' at position 6; expected like, in, between, contains, starts with or ends with after 'not'", 6},
		{"not eq", "a not = 1", "filter: unexpected '=' at position 6; expected like, in, between, contains, starts with or ends with after 'not'", 6},
		{"starts without with", "a starts 'x'", "filter: unexpected string 'x' at position 9; expected 'with' after 'starts'", 9},
		{"between without and", "a between 1 or 2", "filter: unexpected 'or' at position 12; expected 'and' between the two values of between", 12},
		{"null lt", "a < null", "filter: null cannot be used with < at position 4; expected a non-null value (use 'is null' or 'is not null' to test for null)", 4},
		{"null like", "a like NULL", "filter: null cannot be used with like at position 7; expected a non-null value (use 'is null' or 'is not null' to test for null)", 7},
		{"null between", "a between null and 1", "filter: null cannot be used with between at position 10; expected a non-null value (use 'is null' or 'is not null' to test for null)", 10},
		{"stacked", "a = 1; drop table x", "filter: unexpected ';' (statements cannot be chained) at position 5", 5},
		{"subquery", "a = (select 1)", "filter: unexpected '(' at position 4; expected a value (sub-expressions and sub-queries are not allowed)", 4},
		{"function", "lower(a) = 'x'", "filter: function calls are not supported at position 0", 0},
		{"aggregate in filter", "count(*) > 1", "filter: aggregate functions are not allowed in filter at position 0", 0},
		{"or nor mix", "a = 1 or b = 2 nor c = 3", "filter: 'or' and 'nor' mixed without parentheses at position 15", 15},
		{"lone amp", "a = 1 & b = 2", "filter: unexpected character '&' at position 6", 6},
		{"lone bang", "a ! 1", "filter: unexpected character '!' at position 2", 2},
		{"hash", "# = 1", "filter: unexpected character '#' at position 0", 0},
		{"empty name", `"" = 1`, "filter: empty field name at position 0", 0},
		{"empty bracket", `[] = 1`, "filter: empty field name at position 0", 0},
		{"dangling dot", "a. = 1", "filter: unexpected '=' at position 3; expected a field name after '.'", 3},
		{"number as name", "1 = 1", "filter: unexpected number '1' at position 0; expected a field name", 0},
		{"string as name", "'a' = 1", "filter: unexpected string 'a' at position 0; expected a field name", 0},
		{"malformed number name", "a = 1 and 12x = 1", "filter: malformed number at position 10", 10},
		{"NUL outside", "a\x00= 1", "filter: NUL byte at position 1", 1},
		{"NUL in string", "a = 'x\x00'", "filter: NUL byte in quoted text at position 6", 6},
		{"NUL in bare", "a = x\x00", "filter: NUL byte at position 5", 5},
		{"control", "a = x\x01", "filter: control character '\\x01' at position 5", 5},
		{"bad utf8", "a = '\xff'", "filter: invalid UTF-8 in quoted text at position 5", 5},
		{"bad utf8 name", "\xff = 1", "filter: invalid UTF-8 at position 0", 0},
		{"just not", "not", "filter: unexpected end of input at position 3; expected a field name", 3},
		{"just paren", "(", "filter: unexpected end of input at position 1; expected a field name", 1},
		{"comment", "a = 1 -- x", "filter: unexpected character '-' at position 6", 6},
		{"block comment", "a = 1 /* x */", "filter: unexpected character '/' at position 6", 6},
		{"long message value", "a = 1 " + strings.Repeat("x", 100), "filter: unexpected '" + strings.Repeat("x", 40) + "…' at position 6; expected 'and', 'or' or the end of the filter", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", tt.in, e)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *SyntaxError", err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if se.Offset != tt.offset {
				t.Errorf("offset = %d, want %d", se.Offset, tt.offset)
			}
			if se.Param != "filter" {
				t.Errorf("param = %q", se.Param)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("(", n) + "a = 1" + strings.Repeat(")", n) }
	nots := func(n int) string { return strings.Repeat("not ", n) + "a = 1" }
	list := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = "1"
		}
		return "a in (" + strings.Join(items, ",") + ")"
	}
	tests := []struct {
		name    string
		lim     Limits
		in      string
		wantErr string
	}{
		{"depth at limit", Limits{}, nest(64), ""},
		{"depth over limit", Limits{}, nest(65), "filter: filter is nested deeper than 64 levels at position 64"},
		{"nots at limit", Limits{}, nots(64), ""},
		{"nots over limit", Limits{}, nots(65), "filter: filter is nested deeper than 64 levels at position 256"},
		{"mixed depth", Limits{MaxDepth: 4}, "not (not (a = 1))", ""},
		{"mixed depth over", Limits{MaxDepth: 4}, "not (not (not a = 1))", "filter: filter is nested deeper than 4 levels at position 10"},
		{"siblings do not add up", Limits{MaxDepth: 2}, "((a = 1)) and ((b = 1)) or ((c = 1))", ""},
		{"length at limit", Limits{}, "a = '" + strings.Repeat("x", DefaultMaxLength-6) + "'", ""},
		{"length over limit", Limits{}, "a = '" + strings.Repeat("x", DefaultMaxLength-5) + "'", "filter: filter is longer than 8192 bytes at position 8192"},
		{"custom length", Limits{MaxLength: 5}, "a = 12", "filter: filter is longer than 5 bytes at position 5"},
		{"list at limit", Limits{}, list(1000), ""},
		{"list over limit", Limits{}, list(1001), "filter: value list has more than 1000 items at position 2006"},
		{"custom list", Limits{MaxListItems: 2}, "a in (1, 2, 3)", "filter: value list has more than 2 items at position 12"},
		{"huge nesting is cut by length", Limits{}, nest(100000), "filter: filter is longer than 8192 bytes at position 8192"},
		{"huge nesting with big length", Limits{MaxLength: 1 << 22}, nest(1000000), "filter: filter is nested deeper than 64 levels at position 64"},
		{"deep nesting allowed runs without overflow", Limits{MaxLength: 1 << 22, MaxDepth: 1 << 20}, nest(200000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.lim.Parse(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %s", tt.wantErr)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error\n got %s\nwant %s", err, tt.wantErr)
			}
		})
	}
}

func TestParseHavingErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sum(*) > 1", "having: '*' is only allowed in count(*) at position 4; expected a field name"},
		{"count(a > 1", "having: unexpected '>' at position 8; expected ')' to close count("},
		{"count() > 1", "having: unexpected ')' at position 6; expected a field name"},
		{"lower(a) = 1", "having: function calls are not supported at position 0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseHaving(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseHaving(%q) error\n got %v\nwant %s", tt.in, err, tt.want)
			}
		})
	}
}

func TestWalkRefsAllOf(t *testing.T) {
	e, err := Parse("a = 1 and (b.c like 'x' or not d is null)")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range Refs(e) {
		names = append(names, r.Name())
	}
	if diff := cmp.Diff([]string{"a", "b.c", "d"}, names); diff != "" {
		t.Errorf("Refs mismatch:\n%s", diff)
	}

	role, err := Parse("owner_id = 7")
	if err != nil {
		t.Fatal(err)
	}
	if got := AllOf(nil, e, nil, role).String(); got != "(a = 1 AND (b.c LIKE 'x' OR NOT d IS NULL)) AND owner_id = 7" {
		t.Errorf("AllOf = %s", got)
	}
	if AllOf(nil, nil) != nil {
		t.Error("AllOf of nothing is not nil")
	}
	if AllOf(role) != role {
		t.Error("AllOf of one is not that one")
	}

	count := 0
	Walk(e, func(Expr) bool { count++; return false })
	if count != 1 {
		t.Errorf("Walk did not stop at the root: %d", count)
	}
	Walk(nil, func(Expr) bool { t.Error("called for nil"); return true })
}
