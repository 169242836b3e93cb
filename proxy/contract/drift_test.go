package contract

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func intp(n int) *int       { return &n }
func strp(s string) *string { return &s }

// base is a locked shape: an id, a string with a length and a default, a
// decimal, an enum, a foreign key, and a relationship.
func base() *Table {
	return &Table{
		Name: "orders", Label: "Orders", Type: "table",
		Fields: []Field{
			{Name: "id", Label: "Id", Type: TypeID, DBType: "id", AutoIncrement: true, IsPrimaryKey: true},
			{Name: "title", Label: "Title", Type: TypeString, DBType: "string", Length: intp(64), Default: "x", AllowNull: true},
			{Name: "total", Label: "Total", Type: TypeNumber, DBType: "decimal", Precision: intp(10), Scale: intp(2), AllowNull: true},
			{Name: "state", Label: "State", Type: TypeString, DBType: "string", Required: true, Enum: &Enum{Values: []string{"new", "paid"}}},
			{Name: "customer_id", Label: "Customer Id", Type: TypeID, DBType: "reference", AllowNull: true, IsForeignKey: true,
				Ref: &Ref{Table: "customer", Field: "id"}},
		},
		PrimaryKey: []string{"id"},
		Relationships: []Relationship{
			{Name: "customer_by_customer_id", Label: "Customer By Customer Id", Type: "belongs_to", Field: "customer_id",
				RefTable: "customer", RefField: "id"},
		},
	}
}

// clone deep-copies a shape through its JSON, as a stored snapshot is.
func clone(t *testing.T, tb *Table) *Table {
	t.Helper()
	out, err := Parse(tb.JSON())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type item struct {
	Severity Severity
	Kind     string
	Path     string
}

func TestDiffSeverityRules(t *testing.T) {
	tests := []struct {
		name   string
		change func(cur *Table)
		want   []item
	}{
		{"no change", func(*Table) {}, nil},
		{"table type", func(c *Table) { c.Type = "view" }, []item{{Breaking, KindTableTypeChanged, "orders"}}},
		{"table label", func(c *Table) { c.Label = "All orders" }, []item{{Cosmetic, KindTableLabelChanged, "orders"}}},
		{"table description", func(c *Table) { c.Description = strp("what was sold") },
			[]item{{Cosmetic, KindTableDescriptionChanged, "orders"}}},
		{"field added", func(c *Table) { c.Fields = append(c.Fields, Field{Name: "note", Type: TypeText, AllowNull: true}) },
			[]item{{Additive, KindFieldAdded, "orders.note"}}},
		{"field removed", func(c *Table) { c.Fields = c.Fields[:4] },
			[]item{{Breaking, KindFieldRemoved, "orders.customer_id"}}},
		{"field renamed is removed and added", func(c *Table) { c.Fields[1].Name = "headline" },
			[]item{{Additive, KindFieldAdded, "orders.headline"}, {Breaking, KindFieldRemoved, "orders.title"}}},
		{"field type", func(c *Table) { c.Fields[2].Type = TypeString },
			[]item{{Breaking, KindFieldTypeChanged, "orders.total"}}},
		{"element type", func(c *Table) { c.Fields[1].ElementType = strp("integer") },
			[]item{{Breaking, KindFieldElementTypeChanged, "orders.title"}}},
		{"nullable relaxed", func(c *Table) { c.Fields[3].AllowNull = true },
			[]item{{Additive, KindFieldNullableRelaxed, "orders.state"}}},
		{"nullable tightened", func(c *Table) { c.Fields[1].AllowNull = false },
			[]item{{Breaking, KindFieldNullableTightened, "orders.title"}}},
		{"length increased", func(c *Table) { c.Fields[1].Length = intp(128) },
			[]item{{Additive, KindFieldLengthIncreased, "orders.title"}}},
		{"length reduced", func(c *Table) { c.Fields[1].Length = intp(32) },
			[]item{{PotentiallyBreaking, KindFieldLengthReduced, "orders.title"}}},
		{"length of a non-string type is not compared", func(c *Table) { c.Fields[2].Length = intp(9) }, nil},
		{"length to unbounded counts as reduced (null is 0)", func(c *Table) { c.Fields[1].Length = nil },
			[]item{{PotentiallyBreaking, KindFieldLengthReduced, "orders.title"}}},
		{"precision increased", func(c *Table) { c.Fields[2].Precision = intp(12) },
			[]item{{Additive, KindFieldPrecisionIncreased, "orders.total"}}},
		{"precision reduced", func(c *Table) { c.Fields[2].Precision = intp(8) },
			[]item{{PotentiallyBreaking, KindFieldPrecisionReduced, "orders.total"}}},
		{"scale increased", func(c *Table) { c.Fields[2].Scale = intp(4) },
			[]item{{Additive, KindFieldScaleIncreased, "orders.total"}}},
		{"scale reduced", func(c *Table) { c.Fields[2].Scale = intp(0) },
			[]item{{PotentiallyBreaking, KindFieldScaleReduced, "orders.total"}}},
		{"precision from null", func(c *Table) { c.Fields[1].Precision = intp(3) },
			[]item{{Additive, KindFieldPrecisionIncreased, "orders.title"}}},
		{"default changed", func(c *Table) { c.Fields[1].Default = "y" },
			[]item{{Additive, KindFieldDefaultChanged, "orders.title"}}},
		{"default added", func(c *Table) { c.Fields[2].Default = json.Number("0.00") },
			[]item{{Additive, KindFieldDefaultChanged, "orders.total"}}},
		{"default removed", func(c *Table) { c.Fields[1].Default = nil },
			[]item{{PotentiallyBreaking, KindFieldDefaultRemoved, "orders.title"}}},
		{"required added", func(c *Table) { c.Fields[1].Required = true },
			[]item{{Breaking, KindFieldRequiredAdded, "orders.title"}}},
		{"required removed", func(c *Table) { c.Fields[3].Required = false },
			[]item{{Additive, KindFieldRequiredRemoved, "orders.state"}}},
		{"auto increment added", func(c *Table) { c.Fields[2].AutoIncrement = true },
			[]item{{Additive, KindFieldAutoIncrementAdded, "orders.total"}}},
		{"auto increment removed", func(c *Table) { c.Fields[0].AutoIncrement = false },
			[]item{{Breaking, KindFieldAutoIncrementRemove, "orders.id"}}},
		{"read only added", func(c *Table) { c.Fields[2].ReadOnly = true },
			[]item{{Breaking, KindFieldReadOnlyAdded, "orders.total"}}},
		{"read only removed", func(c *Table) {
			c.Fields[2].ReadOnly = true
		}, nil}, // replaced below: the locked side is read-only
		{"generated changed", func(c *Table) { c.Fields[2].Generated = &Generated{Kind: "virtual"} },
			[]item{{Breaking, KindFieldGeneratedChanged, "orders.total"}}},
		{"unique added", func(c *Table) { c.Fields[1].IsUnique = true },
			[]item{{PotentiallyBreaking, KindFieldUniqueAdded, "orders.title"}}},
		{"unique removed", nil, []item{{Additive, KindFieldUniqueRemoved, "orders.title"}}},
		{"foreign key removed", func(c *Table) { c.Fields[4].IsForeignKey, c.Fields[4].Ref = false, nil },
			[]item{{Breaking, KindFieldForeignKeyChanged, "orders.customer_id"}, {Breaking, KindFieldRefChanged, "orders.customer_id"}}},
		{"ref changed", func(c *Table) { c.Fields[4].Ref.Table = "client" },
			[]item{{Breaking, KindFieldRefChanged, "orders.customer_id"}}},
		{"enum value added", func(c *Table) { c.Fields[3].Enum.Values = []string{"new", "paid", "sent"} },
			[]item{{PotentiallyBreaking, KindFieldEnumValueAdded, "orders.state"}}},
		{"enum value removed", func(c *Table) { c.Fields[3].Enum.Values = []string{"new"} },
			[]item{{Breaking, KindFieldEnumValueRemoved, "orders.state"}}},
		{"enum values added and removed", func(c *Table) { c.Fields[3].Enum.Values = []string{"new", "void"} },
			[]item{{PotentiallyBreaking, KindFieldEnumValueAdded, "orders.state"}, {Breaking, KindFieldEnumValueRemoved, "orders.state"}}},
		{"enum constraint added from none", func(c *Table) { c.Fields[1].Enum = &Enum{Values: []string{"a"}} },
			[]item{{Additive, KindFieldEnumValueAdded, "orders.title"}}},
		{"enum constraint removed entirely", func(c *Table) { c.Fields[3].Enum = nil },
			[]item{{Additive, KindFieldEnumValueRemoved, "orders.state"}}},
		{"validation changed", func(c *Table) { c.Fields[1].Validation = map[string]any{"not_empty": true} },
			[]item{{PotentiallyBreaking, KindFieldValidationChanged, "orders.title"}}},
		{"field label", func(c *Table) { c.Fields[1].Label = "Heading" },
			[]item{{Cosmetic, KindFieldLabelChanged, "orders.title"}}},
		{"field description", func(c *Table) { c.Fields[1].Description = strp("the title") },
			[]item{{Cosmetic, KindFieldDescriptionChanged, "orders.title"}}},
		{"primary key", func(c *Table) { c.PrimaryKey = []string{"id", "state"} },
			[]item{{Breaking, KindPrimaryKeyChanged, "orders.primary_key"}}},
		{"relationship added", func(c *Table) {
			c.Relationships = append(c.Relationships, Relationship{Name: "line_by_order_id", Type: "has_many", RefTable: "line", RefField: "order_id"})
		}, []item{{Additive, KindRelationshipAdded, "orders.line_by_order_id"}}},
		{"relationship removed", func(c *Table) { c.Relationships = nil },
			[]item{{Breaking, KindRelationshipRemoved, "orders.customer_by_customer_id"}}},
		{"relationship type", func(c *Table) { c.Relationships[0].Type = "has_one" },
			[]item{{Breaking, KindRelationshipTypeChanged, "orders.customer_by_customer_id"}}},
		{"relationship target table", func(c *Table) { c.Relationships[0].RefTable = "client" },
			[]item{{Breaking, KindRelationshipTargetChanged, "orders.customer_by_customer_id"}}},
		{"relationship target field", func(c *Table) { c.Relationships[0].RefField = "code" },
			[]item{{Breaking, KindRelationshipTargetChanged, "orders.customer_by_customer_id"}}},
		{"relationship junction", func(c *Table) { c.Relationships[0].Junction = &Junction{Table: "j", Field: "a", RefField: "b"} },
			[]item{{Breaking, KindRelationshipTargetChanged, "orders.customer_by_customer_id"}}},
		{"relationship label", func(c *Table) { c.Relationships[0].Label = "Buyer" },
			[]item{{Cosmetic, KindRelationshipLabelChanged, "orders.customer_by_customer_id"}}},
		{"engine details are not drift", func(c *Table) {
			c.Fields[2].DBType = "double"
			c.Fields[1].IsIndex = true
			c.Indexes = []Index{{Name: "x", Type: "index", Fields: []string{"title"}}}
		}, nil},
		{"field order is not drift", func(c *Table) { c.Fields[0], c.Fields[1] = c.Fields[1], c.Fields[0] }, nil},
		{"several changes in rule order", func(c *Table) {
			c.Fields[1].Label = "Heading"
			c.Fields[1].Type = TypeText
			c.Fields[1].AllowNull = false
		}, []item{{Breaking, KindFieldTypeChanged, "orders.title"}, {Breaking, KindFieldNullableTightened, "orders.title"},
			{Cosmetic, KindFieldLabelChanged, "orders.title"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := clone(t, base()), clone(t, base())
			switch tc.name {
			case "read only removed":
				old.Fields[2].ReadOnly = true
				cur.Fields[2].ReadOnly = false
				tc.want = []item{{Additive, KindFieldReadOnlyRemoved, "orders.total"}}
			case "unique removed":
				old.Fields[1].IsUnique = true
			default:
				tc.change(cur)
			}
			rep := Diff(old, cur)
			var got []item
			for _, c := range rep.Changes {
				got = append(got, item{c.Severity, c.Kind, c.Path})
				if c.Table != "orders" {
					t.Errorf("change %s names table %q", c.Kind, c.Table)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if rep.HasDrift != (len(tc.want) > 0) || rep.Summary.TotalChanges != len(tc.want) {
				t.Errorf("has_drift %v, total %d for %d changes", rep.HasDrift, rep.Summary.TotalChanges, len(tc.want))
			}
			breaking := false
			for _, w := range tc.want {
				breaking = breaking || w.Severity == Breaking
			}
			if rep.HasBreaking != breaking {
				t.Errorf("has_breaking %v, want %v", rep.HasBreaking, breaking)
			}
		})
	}
}

func TestDiffDetails(t *testing.T) {
	old := base()
	cur := clone(t, base())
	cur.Fields[1].Length = intp(32)
	cur.Fields[3].Enum.Values = []string{"new", "paid", "sent"}
	rep := Diff(old, cur)
	if len(rep.Changes) != 2 {
		t.Fatalf("changes: %+v", rep.Changes)
	}
	data, _ := json.Marshal(rep.Changes)
	want := `[{"severity":"potentially_breaking","kind":"field.length_reduced","path":"orders.title","table":"orders","detail":{"from":64,"to":32}},` +
		`{"severity":"potentially_breaking","kind":"field.enum_value_added","path":"orders.state","table":"orders","detail":{"added":["sent"],"from":["new","paid"],"to":["new","paid","sent"]}}]`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
}

func TestDiffTableRemoved(t *testing.T) {
	rep := Diff(base(), nil)
	if len(rep.Changes) != 1 || rep.Changes[0].Kind != KindTableRemoved || rep.Changes[0].Severity != Breaking ||
		rep.Changes[0].Detail["old_table"] == nil || !rep.HasBreaking {
		t.Errorf("got %+v", rep)
	}
}

func TestEmptyReport(t *testing.T) {
	data, _ := json.Marshal(NewReport(nil))
	want := `{"has_drift":false,"has_breaking":false,"summary":{"breaking_count":0,"potentially_breaking_count":0,"additive_count":0,"cosmetic_count":0,"total_changes":0},"changes":[]}`
	if string(data) != want {
		t.Errorf("got %s", data)
	}
}

// TestDiffEmptyLists: nil and empty lists on either side are the same
// (go-cmp must not see two options on one value).
func TestDiffEmptyLists(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, cur *Table
		changes  int
	}{
		{"nil and empty", &Table{Name: "t"}, &Table{Name: "t", Fields: []Field{}, Relationships: []Relationship{}, PrimaryKey: []string{}}, 0},
		{"empty and empty", &Table{Name: "t", Fields: []Field{}, Relationships: []Relationship{}}, &Table{Name: "t", Fields: []Field{}, Relationships: []Relationship{}}, 0},
		{"empty and one", &Table{Name: "t", Relationships: []Relationship{}}, &Table{Name: "t", Relationships: []Relationship{{Name: "r"}}}, 1},
		{"nil and one field", &Table{Name: "t"}, &Table{Name: "t", Fields: []Field{{Name: "f"}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff(tc.old, tc.cur); got.Summary.TotalChanges != tc.changes {
				t.Errorf("changes: %+v", got.Changes)
			}
			if got := Diff(tc.cur, tc.old); got.Summary.TotalChanges != tc.changes {
				t.Errorf("reversed: %+v", got.Changes)
			}
		})
	}
}
