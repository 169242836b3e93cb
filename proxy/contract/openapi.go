package contract

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// SchemaName is the name of t's component schema in an OpenAPI document:
// the table name with every character outside [A-Za-z0-9._-] replaced by
// '_', as OpenAPI 3.0 requires of component keys.
func SchemaName(table string) string {
	var b strings.Builder
	for _, r := range table {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// OpenAPISchema returns the JSON Schema (OpenAPI 3.0 dialect) of a record
// of t: one property per field typed by its canonical type, maxLength for
// sized strings, formats for dates and times, nullable, readOnly for
// generated and auto-increment fields, enum and default; required lists
// the fields a new record must give (omitted when none).
func (t *Table) OpenAPISchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema()
	s.Title = t.Label
	if t.Description != nil {
		s.Description = *t.Description
	}
	s.Properties = openapi3.Schemas{}
	for i := range t.Fields {
		f := &t.Fields[i]
		s.Properties[f.Name] = openapi3.NewSchemaRef("", f.openAPISchema())
		if f.Required && !f.AutoIncrement && !f.ReadOnly {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

func (f *Field) openAPISchema() *openapi3.Schema {
	var s *openapi3.Schema
	switch f.Type {
	case TypeID, TypeInteger:
		s = openapi3.NewInt64Schema()
	case TypeNumber:
		s = openapi3.NewFloat64Schema()
	case TypeBoolean:
		s = openapi3.NewBoolSchema()
	case TypeDate:
		s = openapi3.NewStringSchema().WithFormat("date")
	case TypeDatetime:
		s = openapi3.NewStringSchema().WithFormat("date-time")
	case TypeTime:
		s = openapi3.NewStringSchema().WithFormat("time")
	case TypeBinary:
		s = openapi3.NewStringSchema().WithFormat("byte")
	case TypeArray:
		items := openapi3.NewStringSchema()
		if f.ElementType != nil {
			items = (&Field{Type: *f.ElementType}).openAPISchema()
		}
		s = openapi3.NewArraySchema().WithItems(items)
	case TypeJSON, TypeObject, TypeGeometry, TypeUnknown:
		s = &openapi3.Schema{}
	default: // string, text
		s = openapi3.NewStringSchema()
		if f.Length != nil && *f.Length > 0 {
			s.WithMaxLength(int64(*f.Length))
		}
	}
	s.Title = f.Label
	if f.Description != nil {
		s.Description = *f.Description
	}
	s.Nullable = f.AllowNull
	s.ReadOnly = f.ReadOnly || f.AutoIncrement
	if f.Enum != nil {
		for _, v := range f.Enum.Values {
			s.Enum = append(s.Enum, v)
		}
	}
	if d := openAPIDefault(f); d != nil {
		s.Default = d
	}
	return s
}

// openAPIDefault is the field's default as a JSON value of its type; SQL
// expressions (CURRENT_TIMESTAMP) and values that do not fit the type are
// left out, since a validator would reject them.
func openAPIDefault(f *Field) any {
	switch v := f.Default.(type) {
	case bool:
		if f.Type == TypeBoolean {
			return v
		}
	case json.Number:
		switch f.Type {
		case TypeID, TypeInteger:
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return n
			}
		case TypeNumber:
			if n, err := strconv.ParseFloat(string(v), 64); err == nil {
				return n
			}
		}
	case string:
		if f.Type == TypeString || f.Type == TypeText {
			return v
		}
	}
	return nil
}
