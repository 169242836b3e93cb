package dialects_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
)

func TestParseDefault(t *testing.T) {
	tests := []struct {
		raw       string
		backslash bool
		want      string // "<nil>" for none
		expr      bool
	}{
		{"", false, "<nil>", false},
		{"NULL", false, "<nil>", false},
		{"NULL::character varying", false, "<nil>", false},
		{"'abc'", false, "abc", false},
		{"'it''s'", false, "it's", false},
		{`'it\'s a \\ test'`, true, `it's a \ test`, false},
		{"'abc'::character varying", false, "abc", false},
		{"'{}'::jsonb", false, "{}", false},
		{"('x')", false, "x", false},
		{"0", false, "0", false},
		{"(-1)", false, "-1", false},
		{"'-1'::integer", false, "-1", false},
		{"+2.50", false, "2.50", false},
		{"1e3", false, "1e3", false},
		{"TRUE", false, "true", false},
		{"false", false, "false", false},
		{"CURRENT_TIMESTAMP", false, "CURRENT_TIMESTAMP", true},
		{"current_timestamp()", false, "CURRENT_TIMESTAMP", true},
		{"CURRENT_TIMESTAMP(3)", false, "CURRENT_TIMESTAMP", true},
		{"now()", false, "CURRENT_TIMESTAMP", true},
		{"curdate()", false, "CURRENT_DATE", true},
		{"CURRENT_TIME", false, "CURRENT_TIME", true},
		{"nextval('s'::regclass)", false, "nextval('s'::regclass)", true},
		{"'a' || 'b'", false, "'a' || 'b'", true},
		{"(1) + (2)", false, "(1) + (2)", true},
		{"datetime('now')", false, "datetime('now')", true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			v, expr := dialects.ParseDefault(tt.raw, tt.backslash)
			got := "<nil>"
			if v != nil {
				got = *v
			}
			if got != tt.want || expr != tt.expr {
				t.Fatalf("ParseDefault(%q) = %q, %v; want %q, %v", tt.raw, got, expr, tt.want, tt.expr)
			}
		})
	}
}

func TestSimpleType(t *testing.T) {
	tests := map[string]dialects.FieldType{
		"":                               dialects.TypeString,
		"INTEGER":                        dialects.TypeInteger,
		"int(11)":                        dialects.TypeInteger,
		"int unsigned":                   dialects.TypeInteger,
		"bigint(20) unsigned":            dialects.TypeBigInt,
		"tinyint(1)":                     dialects.TypeBoolean,
		"tinyint(4)":                     dialects.TypeTinyInt,
		"bit(1)":                         dialects.TypeBoolean,
		"bit(8)":                         dialects.TypeInteger,
		"smallint":                       dialects.TypeSmallInt,
		"character varying(64)":          dialects.TypeString,
		"VARCHAR(10)":                    dialects.TypeString,
		"numeric(10,2)":                  dialects.TypeDecimal,
		"DECIMAL(10, 2)":                 dialects.TypeDecimal,
		"double precision":               dialects.TypeDouble,
		"float":                          dialects.TypeFloat,
		"float(53)":                      dialects.TypeDouble,
		"timestamp(3) without time zone": dialects.TypeTimestamp,
		"timestamp with time zone":       dialects.TypeTimestampTZ,
		"time without time zone":         dialects.TypeTime,
		"datetime":                       dialects.TypeDatetime,
		"interval":                       dialects.TypeString,
		"point":                          dialects.TypeString,
		"integer[]":                      dialects.TypeArray,
		"longtext":                       dialects.TypeText,
		"bytea":                          dialects.TypeBinary,
		"enum('a','b')":                  dialects.TypeString,
		"UNSIGNED BIG INT":               dialects.TypeInteger,
		"NATIVE CHARACTER(70)":           dialects.TypeString,
		"CLOB":                           dialects.TypeText,
		"jsonb":                          dialects.TypeJSONB,
	}
	for native, want := range tests {
		if got := dialects.SimpleType(native); got != want {
			t.Errorf("SimpleType(%q) = %q, want %q", native, got, want)
		}
	}
}

func TestParseFieldType(t *testing.T) {
	for in, want := range map[string]dialects.FieldType{"ID": "id", "pk": "id", "fk": "reference", " String ": "string", "timestamp_on_update": "timestamp_on_update"} {
		if got, err := dialects.ParseFieldType(in); err != nil || got != want {
			t.Errorf("ParseFieldType(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "varchar(10)", "int; drop table x", "geometry"} {
		if _, err := dialects.ParseFieldType(bad); err == nil {
			t.Errorf("ParseFieldType(%q) accepted", bad)
		}
	}
}

func TestObjectNames(t *testing.T) {
	if got := dialects.ForeignKeyName("orders", []string{"customer_id"}); got != "orders_customer_id_fkey" {
		t.Errorf("ForeignKeyName = %q", got)
	}
	if got := dialects.IndexName("t", []string{"a", "b"}, true); got != "t_a_b_key" {
		t.Errorf("IndexName = %q", got)
	}
	long := strings.Repeat("é", 40)
	a := dialects.IndexName(long, []string{"x"}, false)
	b := dialects.IndexName(long, []string{"y"}, false)
	if len(a) > dialects.MaxNameLen || a == b || !strings.HasSuffix(a, "_idx") {
		t.Errorf("long names: %q %q", a, b)
	}
}

func TestRelationsSelfReferenceAndClash(t *testing.T) {
	emp := &dialects.Table{
		Name:       "employee",
		PrimaryKey: []string{"id"},
		Columns: []*dialects.Column{
			{Name: "id", Type: dialects.TypeInteger, AutoIncrement: true},
			{Name: "manager_id", Type: dialects.TypeInteger, AllowNull: true},
			{Name: "dept", Type: dialects.TypeString},
		},
		ForeignKeys: []dialects.ForeignKey{
			{Name: "emp_mgr", Columns: []string{"manager_id"}, RefTable: "EMPLOYEE"}, // ref columns resolved to the key
			{Name: "emp_dept", Columns: []string{"dept"}, RefTable: "missing", RefColumns: []string{"name"}},
		},
	}
	s := dialects.NewSchema([]*dialects.Table{emp})
	got := s.Table("employee")
	if diff := cmp.Diff([]string{"id"}, got.ForeignKeys[1].RefColumns); diff != "" {
		t.Errorf("resolved ref columns (-want +got):\n%s", diff)
	}
	var names []string
	for _, r := range got.Relations {
		names = append(names, string(r.Type)+":"+r.Name)
	}
	// belongs_to and has_many of a self reference share a name; the first
	// is kept. A key to a table that is not in the schema gives none.
	if diff := cmp.Diff([]string{"belongs_to:employee_by_manager_id"}, names); diff != "" {
		t.Errorf("relations (-want +got):\n%s", diff)
	}
	if c := got.Column("MANAGER_ID"); c.Type != dialects.TypeReference || c.RefField != "id" {
		t.Errorf("manager_id: %+v", c)
	}
	if c := got.Column("id"); c.Type != dialects.TypeID {
		t.Errorf("id: %+v", c)
	}
}

func FuzzParseDefault(f *testing.F) {
	for _, s := range []string{"'a''b'", "(-1)", "'x'::text", "NULL::int", "now()", "((", "'", `'\\'`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, backslash bool) {
		v, expr := dialects.ParseDefault(raw, backslash)
		if v == nil && expr {
			t.Fatalf("nil expression for %q", raw)
		}
	})
}
