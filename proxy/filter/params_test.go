package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func path(p ...string) []string { return p }

func TestParseFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Selection
	}{
		{"blank", "  ", Selection{All: true}},
		{"star", "*", Selection{All: true}},
		{"star spaced", " * ", Selection{All: true}},
		{"list", "id, name,email", Selection{Items: []SelectItem{
			{Term: Term{Path: path("id"), Offset: 0}},
			{Term: Term{Path: path("name"), Offset: 4}},
			{Term: Term{Path: path("email"), Offset: 9}},
		}}},
		{"quoted", "`first name`, \"a\"\"b\", [c]", Selection{Items: []SelectItem{
			{Term: Term{Path: path("first name"), Offset: 0}},
			{Term: Term{Path: path("a\"b"), Offset: 14}},
			{Term: Term{Path: path("c"), Offset: 22}},
		}}},
		{"aggregates and aliases", "status, COUNT(*), sum(total) AS Total, max(`x y`) as \"m\"", Selection{Items: []SelectItem{
			{Term: Term{Path: path("status")}},
			{Term: Term{Agg: AggCount, Offset: 8}},
			{Term: Term{Agg: AggSum, Path: path("total"), Offset: 18}, Alias: "Total"},
			{Term: Term{Agg: AggMax, Path: path("x y"), Offset: 39}, Alias: "m"},
		}}},
		{"alias on field", "name as n", Selection{Items: []SelectItem{{Term: Term{Path: path("name")}, Alias: "n"}}}},
		{"dotted", "a.b", Selection{Items: []SelectItem{{Term: Term{Path: path("a", "b")}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFields(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseFields(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSelectItemOutputName(t *testing.T) {
	sel, err := ParseFields("a, b.c, count(*), SUM(x), min(y) as lo")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range sel.Items {
		got = append(got, it.OutputName())
	}
	if diff := cmp.Diff([]string{"a", "c", "count(*)", "sum(x)", "lo"}, got); diff != "" {
		t.Error(diff)
	}
}

func TestParseOrder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []OrderItem
	}{
		{"blank", "", nil},
		{"one", "name", []OrderItem{{Term: Term{Path: path("name")}}}},
		{"directions", "a DESC, b asc,c", []OrderItem{
			{Term: Term{Path: path("a")}, Desc: true},
			{Term: Term{Path: path("b"), Offset: 8}},
			{Term: Term{Path: path("c"), Offset: 14}},
		}},
		{"nulls", "a desc nulls last, b NULLS FIRST", []OrderItem{
			{Term: Term{Path: path("a")}, Desc: true, Nulls: NullsLast},
			{Term: Term{Path: path("b"), Offset: 19}, Nulls: NullsFirst},
		}},
		{"aggregate", "count(*) desc", []OrderItem{{Term: Term{Agg: AggCount}, Desc: true}}},
		{"quoted", "`order` desc", []OrderItem{{Term: Term{Path: path("order")}, Desc: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOrder(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseOrder(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseGroup(t *testing.T) {
	got, err := ParseGroup("status, `owner id`")
	if err != nil {
		t.Fatal(err)
	}
	want := []Term{{Path: path("status")}, {Path: path("owner id"), Offset: 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if got, err := ParseGroup(" "); got != nil || err != nil {
		t.Errorf("blank group = %v, %v", got, err)
	}
}

func TestParseIDs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Value
	}{
		{"blank", " ", nil},
		{"numbers", "1,2,3", []Value{
			{Kind: ValueNumber, Text: "1"}, {Kind: ValueNumber, Text: "2", Offset: 2}, {Kind: ValueNumber, Text: "3", Offset: 4},
		}},
		{"spaces", " 1 , 22 ", []Value{{Kind: ValueNumber, Text: "1", Offset: 1}, {Kind: ValueNumber, Text: "22", Offset: 5}}},
		{"quoted", `'a,b', "c""d", 'it\'s'`, []Value{
			{Kind: ValueString, Text: "a,b"}, {Kind: ValueString, Text: `c"d`, Offset: 7}, {Kind: ValueString, Text: "it's", Offset: 15},
		}},
		{"uuid and email", "3f2504e0-4f89-11d3-9a0c-0305e82c3301,a@b.c", []Value{
			{Kind: ValueString, Text: "3f2504e0-4f89-11d3-9a0c-0305e82c3301"}, {Kind: ValueString, Text: "a@b.c", Offset: 37},
		}},
		{"inner space kept", "a b", []Value{{Kind: ValueString, Text: "a b"}}},
		{"negative and decimal", "-1,2.5", []Value{{Kind: ValueNumber, Text: "-1"}, {Kind: ValueNumber, Text: "2.5", Offset: 3}}},
		{"empty quoted", "''", []Value{{Kind: ValueString, Text: ""}}},
		{"unicode", "ключ", []Value{{Kind: ValueString, Text: "ключ"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIDs(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseIDs(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParamErrors(t *testing.T) {
	many := strings.TrimSuffix(strings.Repeat("a,", 1001), ",")
	tests := []struct {
		name  string
		parse func(string) error
		in    string
		want  string
	}{
		{"fields star mixed", fieldsErr, "a, *", "fields: '*' cannot be combined with other fields at position 3"},
		{"fields star first", fieldsErr, "*, a", "fields: '*' cannot be combined with other fields at position 0"},
		{"fields empty item", fieldsErr, "a,,b", "fields: unexpected ',' at position 2; expected a field name"},
		{"fields trailing comma", fieldsErr, "a,", "fields: unexpected end of input at position 2; expected a field name"},
		{"fields two words", fieldsErr, "a b", "fields: unexpected 'b' at position 2; expected ',' or the end of fields"},
		{"fields missing alias", fieldsErr, "a as", "fields: unexpected end of input at position 4; expected a name after 'as'"},
		{"fields dotted alias", fieldsErr, "a as b.c", "fields: unexpected '.' at position 6; expected ',' or the end of fields"},
		{"fields function", fieldsErr, "lower(a)", "fields: unexpected '(' at position 5; expected ',' or the end of fields (only count, sum, avg, min and max can be called)"},
		{"fields subquery", fieldsErr, "(select 1)", "fields: unexpected '(' at position 0; expected a field name"},
		{"fields stacked", fieldsErr, "a; drop table x", "fields: unexpected ';' (statements cannot be chained) at position 1"},
		{"fields too many", fieldsErr, many, "fields: fields has more than 1000 items at position 2000"},
		{"fields too long", fieldsErr, strings.Repeat("a", 9000), "fields: fields is longer than 8192 bytes at position 8192"},
		{"order bad direction", orderErr, "a up", "order: unexpected 'up' at position 2; expected ',' or the end of order"},
		{"order double direction", orderErr, "a desc desc", "order: unexpected 'desc' at position 7; expected ',' or the end of order"},
		{"order nulls alone", orderErr, "a nulls", "order: unexpected end of input at position 7; expected 'first' or 'last' after 'nulls'"},
		{"order semicolon", orderErr, "a;drop table x", "order: unexpected ';' (statements cannot be chained) at position 1"},
		{"order number", orderErr, "1", "order: unexpected number '1' at position 0; expected a field name"},
		{"order comment", orderErr, "a -- x", "order: unexpected character '-' at position 2"},
		{"group aggregate", groupErr, "count(*)", "group: unexpected '(' at position 5; expected ',' or the end of group (only count, sum, avg, min and max can be called)"},
		{"group empty", groupErr, "a,", "group: unexpected end of input at position 2; expected a field name"},
		{"ids empty item", idsErr, "1,,2", "ids: empty id at position 2; expected an id"},
		{"ids trailing comma", idsErr, "1,", "ids: empty id at position 2; expected an id"},
		{"ids leading comma", idsErr, ",1", "ids: empty id at position 0; expected an id"},
		{"ids quote inside", idsErr, "a'b", "ids: unexpected character '\\'' at position 1"},
		{"ids after quoted", idsErr, "'a' b", "ids: unexpected 'b' at position 4; expected ',' between ids (quote ids that contain spaces or quotes)"},
		{"ids unterminated", idsErr, "'a", "ids: unterminated string at position 0; expected a closing '"},
		{"ids NUL", idsErr, "1\x00", "ids: NUL byte at position 1"},
		{"ids bad utf8", idsErr, "\xfe", "ids: invalid UTF-8 at position 0"},
		{"ids too many", idsErr, strings.TrimSuffix(strings.Repeat("1,", 1001), ","), "ids: ids has more than 1000 items at position 2000"},
		{"ids too long", idsErr, strings.Repeat("1", 9000), "ids: ids is longer than 8192 bytes at position 8192"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(tt.in)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

func fieldsErr(s string) error { _, err := ParseFields(s); return err }
func orderErr(s string) error  { _, err := ParseOrder(s); return err }
func groupErr(s string) error  { _, err := ParseGroup(s); return err }
func idsErr(s string) error    { _, err := ParseIDs(s); return err }
