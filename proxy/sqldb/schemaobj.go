package sqldb

import (
	"encoding/json"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
)

// The objects of the schema API, in DreamFactory's shapes and key order
// (TableSchema, ColumnSchema and RelationSchema toArray). A field's label,
// validation and picklist are those a client set (kept in the system
// store, see extras.go); the other keys DreamFactory keeps in its own
// tables (alias, db_function, …) are always null or false.

// tableObject is a table in the schema API.
type tableObject struct {
	Alias       any                         `json:"alias"`
	Name        string                      `json:"name"`
	Label       string                      `json:"label"`
	Description any                         `json:"description"`
	Native      []any                       `json:"native"`
	Plural      string                      `json:"plural"`
	IsView      bool                        `json:"is_view"`
	PrimaryKey  []string                    `json:"primary_key"`
	NameField   any                         `json:"name_field"`
	Field       []*fieldObject              `json:"field"`
	Related     []*relatedObject            `json:"related"`
	Constraints map[string]constraintObject `json:"constraints"`
}

// fieldObject is a column in the schema API.
type fieldObject struct {
	Alias             any     `json:"alias"`
	Name              string  `json:"name"`
	Label             string  `json:"label"`
	Description       any     `json:"description"`
	Native            []any   `json:"native"`
	Type              string  `json:"type"`
	DBType            string  `json:"db_type"`
	Length            *int    `json:"length"`
	Precision         *int    `json:"precision"`
	Scale             *int    `json:"scale"`
	Default           any     `json:"default"`
	Required          bool    `json:"required"`
	AllowNull         bool    `json:"allow_null"`
	FixedLength       bool    `json:"fixed_length"`
	SupportsMultibyte bool    `json:"supports_multibyte"`
	AutoIncrement     bool    `json:"auto_increment"`
	IsPrimaryKey      bool    `json:"is_primary_key"`
	IsUnique          bool    `json:"is_unique"`
	IsIndex           bool    `json:"is_index"`
	IsForeignKey      bool    `json:"is_foreign_key"`
	RefTable          *string `json:"ref_table"`
	RefField          *string `json:"ref_field"`
	RefOnUpdate       *string `json:"ref_on_update"`
	RefOnDelete       *string `json:"ref_on_delete"`
	Picklist          any     `json:"picklist"`
	Validation        any     `json:"validation"`
	DBFunction        any     `json:"db_function"`
	IsVirtual         bool    `json:"is_virtual"`
	IsAggregate       bool    `json:"is_aggregate"`
}

// relatedObject is a relation in the schema API.
type relatedObject struct {
	Alias             any     `json:"alias"`
	Name              string  `json:"name"`
	Label             string  `json:"label"`
	Description       any     `json:"description"`
	Native            []any   `json:"native"`
	Type              string  `json:"type"`
	Field             string  `json:"field"`
	IsVirtual         bool    `json:"is_virtual"`
	RefServiceID      int64   `json:"ref_service_id"`
	RefTable          string  `json:"ref_table"`
	RefField          string  `json:"ref_field"`
	RefOnUpdate       *string `json:"ref_on_update"`
	RefOnDelete       *string `json:"ref_on_delete"`
	JunctionServiceID *int64  `json:"junction_service_id"`
	JunctionTable     *string `json:"junction_table"`
	JunctionField     *string `json:"junction_field"`
	JunctionRefField  *string `json:"junction_ref_field"`
	AlwaysFetch       bool    `json:"always_fetch"`
	Flatten           bool    `json:"flatten"`
	FlattenDropPrefix bool    `json:"flatten_drop_prefix"`
}

// constraintObject is a unique constraint or foreign key of a table.
type constraintObject struct {
	ConstraintType string   `json:"constraint_type"`
	Field          []string `json:"field"`
	RefTable       *string  `json:"ref_table,omitempty"`
	RefField       []string `json:"ref_field,omitempty"`
	RefOnUpdate    *string  `json:"ref_on_update,omitempty"`
	RefOnDelete    *string  `json:"ref_on_delete,omitempty"`
}

// describeTable builds the table object of t; serviceID fills the
// relations' ref_service_id.
func describeTable(t *dialects.Table, serviceID int64) *tableObject {
	o := &tableObject{
		Name:        t.Name,
		Label:       label(t.Name),
		Description: nullIfEmpty(t.Comment),
		Native:      []any{},
		Plural:      label(t.Name),
		IsView:      t.IsView,
		PrimaryKey:  append([]string{}, t.PrimaryKey...),
		Field:       make([]*fieldObject, 0, len(t.Columns)),
		Related:     make([]*relatedObject, 0, len(t.Relations)),
		Constraints: map[string]constraintObject{},
	}
	for _, c := range t.Columns {
		o.Field = append(o.Field, describeField(c))
	}
	for i := range t.Relations {
		o.Related = append(o.Related, describeRelation(&t.Relations[i], serviceID))
	}
	for _, ix := range t.Indexes {
		if ix.Unique {
			o.Constraints[strings.ToLower(ix.Name)] = constraintObject{ConstraintType: "UNIQUE", Field: ix.Columns}
		}
	}
	for _, fk := range t.ForeignKeys {
		o.Constraints[strings.ToLower(fk.Name)] = constraintObject{
			ConstraintType: "FOREIGN KEY", Field: fk.Columns,
			RefTable: ptr(fk.RefTable), RefField: fk.RefColumns,
			RefOnUpdate: ptr(fk.OnUpdate), RefOnDelete: ptr(fk.OnDelete),
		}
	}
	return o
}

// apiType is the simple type the schema API reports for a column type,
// as DreamFactory's extractSimpleType collapses them: the small integer
// sizes are integer, the long text sizes text, so that a field reads back
// with the type it was created with on every engine.
func apiType(t dialects.FieldType) string {
	switch t {
	case dialects.TypeTinyInt, dialects.TypeSmallInt, dialects.TypeMediumInt:
		return string(dialects.TypeInteger)
	case dialects.TypeMediumText, dialects.TypeLongText:
		return string(dialects.TypeText)
	}
	return string(t)
}

// describeField builds the field object of c.
func describeField(c *dialects.Column) *fieldObject {
	o := &fieldObject{
		Name:          c.Name,
		Label:         label(c.Name),
		Description:   nullIfEmpty(c.Comment),
		Native:        []any{},
		Type:          apiType(c.Type),
		DBType:        c.DBType,
		Default:       c.JSONDefault(),
		Required:      c.Required(),
		AllowNull:     c.AllowNull,
		AutoIncrement: c.AutoIncrement,
		IsPrimaryKey:  c.IsPrimaryKey,
		IsUnique:      c.IsUnique,
		IsIndex:       c.IsIndex,
		IsForeignKey:  c.IsForeignKey,
		IsVirtual:     false,
	}
	base, _ := dialects.SplitNativeType(c.DBType)
	switch base {
	case "char", "character", "nchar", "bpchar", "binary":
		o.FixedLength = true
	}
	switch base {
	case "nchar", "nvarchar", "national char", "national varchar":
		o.SupportsMultibyte = true
	}
	switch {
	case c.Type == dialects.TypeString || c.Type == dialects.TypeBinary:
		if c.Length > 0 {
			o.Length = ptr(c.Length)
		}
	case (c.Type == dialects.TypeDecimal || c.Type == dialects.TypeMoney) && c.Precision > 0:
		o.Precision, o.Scale = ptr(c.Precision), ptr(c.Scale)
		o.Length = ptr(c.Precision)
	}
	if c.IsForeignKey {
		o.RefTable, o.RefField = ptr(c.RefTable), ptr(c.RefField)
		o.RefOnUpdate, o.RefOnDelete = ptr(c.RefOnUpdate), ptr(c.RefOnDelete)
	}
	return o
}

// describeRelation builds the related object of r.
func describeRelation(r *dialects.Relation, serviceID int64) *relatedObject {
	o := &relatedObject{
		Name:         r.Name,
		Label:        label(r.Name),
		Native:       []any{},
		Type:         string(r.Type),
		Field:        strings.Join(r.Fields, ","),
		RefServiceID: serviceID,
		RefTable:     r.RefTable,
		RefField:     strings.Join(r.RefFields, ","),
	}
	if r.Type == dialects.ManyMany {
		o.JunctionServiceID = ptr(serviceID)
		o.JunctionTable = ptr(r.JunctionTable)
		o.JunctionField = ptr(strings.Join(r.JunctionFields, ","))
		o.JunctionRefField = ptr(strings.Join(r.JunctionRefFields, ","))
	} else {
		o.RefOnUpdate, o.RefOnDelete = ptr(r.RefOnUpdate), ptr(r.RefOnDelete)
	}
	return o
}

func ptr[T any](v T) *T { return &v }

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// pick returns v (a struct of this file) reduced to the keys in fields, a
// comma-separated list; "" or "*" keep everything.
func pick(v any, fields string) any {
	fields = strings.TrimSpace(fields)
	if fields == "" || fields == "*" {
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(data, &all) != nil {
		return v
	}
	out := map[string]json.RawMessage{}
	for _, f := range strings.Split(fields, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "*" {
			return v
		}
		if raw, ok := all[f]; ok {
			out[f] = raw
		}
	}
	return out
}
