package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
)

// The canonical field types: DreamFactory's simple types collapsed to the
// families a client cares about.
const (
	TypeID       = "id"
	TypeInteger  = "integer"
	TypeNumber   = "number"
	TypeString   = "string"
	TypeText     = "text"
	TypeBoolean  = "boolean"
	TypeDate     = "date"
	TypeDatetime = "datetime"
	TypeTime     = "time"
	TypeBinary   = "binary"
	TypeJSON     = "json"
	TypeArray    = "array"
	TypeObject   = "object"
	TypeGeometry = "geometry"
	TypeUnknown  = "unknown"
)

// Table is the canonical shape of a table or view, in the key order of
// DreamFactory's canonical JSON. Catalog and schema are null and native is
// empty so that the shape does not depend on the engine.
type Table struct {
	Name          string         `json:"name"`
	Catalog       *string        `json:"catalog"`
	Schema        *string        `json:"schema"`
	Label         string         `json:"label"`
	Type          string         `json:"type"`
	Description   *string        `json:"description"`
	Fields        []Field        `json:"fields"`
	PrimaryKey    []string       `json:"primary_key"`
	Indexes       []Index        `json:"indexes"`
	Relationships []Relationship `json:"relationships"`
	OpenAPI       map[string]any `json:"openapi"`
	Native        map[string]any `json:"native"`
}

// Field is the canonical shape of a column.
type Field struct {
	Name          string         `json:"name"`
	Alias         *string        `json:"alias"`
	Label         string         `json:"label"`
	Description   *string        `json:"description"`
	Type          string         `json:"type"`
	ElementType   *string        `json:"element_type"`
	DBType        string         `json:"db_type"`
	NativeType    *string        `json:"native_type"`
	Length        *int           `json:"length"`
	Precision     *int           `json:"precision"`
	Scale         *int           `json:"scale"`
	Default       any            `json:"default"`
	Required      bool           `json:"required"`
	AllowNull     bool           `json:"allow_null"`
	AutoIncrement bool           `json:"auto_increment"`
	ReadOnly      bool           `json:"read_only"`
	Generated     *Generated     `json:"generated"`
	IsPrimaryKey  bool           `json:"is_primary_key"`
	IsUnique      bool           `json:"is_unique"`
	IsIndex       bool           `json:"is_index"`
	IsForeignKey  bool           `json:"is_foreign_key"`
	Ref           *Ref           `json:"ref"`
	Enum          *Enum          `json:"enum"`
	Validation    any            `json:"validation"`
	OpenAPI       map[string]any `json:"openapi"`
	Native        map[string]any `json:"native"`
}

// Generated describes a computed column.
type Generated struct {
	Kind       string  `json:"kind"`
	Expression *string `json:"expression"`
}

// Ref is the target of a foreign key column.
type Ref struct {
	Service *string `json:"service"`
	Schema  *string `json:"schema"`
	Table   string  `json:"table"`
	Field   string  `json:"field"`
}

// Enum lists the values an enum column accepts.
type Enum struct {
	Values []string `json:"values"`
	Name   *string  `json:"name"`
}

// Index is a primary key, unique constraint or index.
type Index struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Fields    []string       `json:"fields"`
	IsPrimary bool           `json:"is_primary"`
	IsUnique  bool           `json:"is_unique"`
	Native    map[string]any `json:"native"`
}

// Relationship is a relation in DreamFactory's shape (belongs_to, has_one,
// has_many, many_many).
type Relationship struct {
	Name        string         `json:"name"`
	Alias       *string        `json:"alias"`
	Label       string         `json:"label"`
	Type        string         `json:"type"`
	Field       string         `json:"field"`
	RefService  *string        `json:"ref_service"`
	RefSchema   *string        `json:"ref_schema"`
	RefTable    string         `json:"ref_table"`
	RefField    string         `json:"ref_field"`
	Junction    *Junction      `json:"junction"`
	IsVirtual   bool           `json:"is_virtual"`
	AlwaysFetch bool           `json:"always_fetch"`
	Native      map[string]any `json:"native"`
}

// Junction is the link table of a many_many relationship.
type Junction struct {
	Table    string `json:"table"`
	Field    string `json:"field"`
	RefField string `json:"ref_field"`
}

// FromTable returns the canonical shape of t.
func FromTable(t *dialects.Table) *Table {
	out := &Table{
		Name:          t.Name,
		Label:         Label(t.Name),
		Type:          "table",
		Description:   nonEmpty(t.Comment),
		Fields:        make([]Field, 0, len(t.Columns)),
		PrimaryKey:    append([]string{}, t.PrimaryKey...),
		Indexes:       []Index{},
		Relationships: make([]Relationship, 0, len(t.Relations)),
		OpenAPI:       map[string]any{},
		Native:        map[string]any{},
	}
	if t.IsView {
		out.Type = "view"
	}
	indexed := map[string]bool{}
	if len(t.PrimaryKey) > 0 {
		out.Indexes = append(out.Indexes, Index{Name: "primary", Type: "primary",
			Fields: append([]string{}, t.PrimaryKey...), IsPrimary: true, IsUnique: true, Native: map[string]any{}})
	}
	for _, ix := range t.Indexes {
		if !ix.Unique && foreignKeyIndex(t, ix) {
			continue // MySQL's own index behind a foreign key
		}
		typ := "index"
		if ix.Unique {
			typ = "unique"
		}
		for _, c := range ix.Columns {
			indexed[strings.ToLower(c)] = true
		}
		// Engines name implicit indexes their own way (SQLite's
		// sqlite_autoindex_…); the canonical name is Portcullis's.
		out.Indexes = append(out.Indexes, Index{Name: dialects.IndexName(t.Name, ix.Columns, ix.Unique), Type: typ,
			Fields: append([]string{}, ix.Columns...), IsUnique: ix.Unique, Native: map[string]any{}})
	}
	for _, c := range t.Columns {
		f := fromColumn(c)
		f.IsIndex = indexed[strings.ToLower(c.Name)]
		out.Fields = append(out.Fields, f)
	}
	for i := range t.Relations {
		out.Relationships = append(out.Relationships, fromRelation(&t.Relations[i]))
	}
	return out
}

func fromColumn(c *dialects.Column) Field {
	f := Field{
		Name:          c.Name,
		Label:         Label(c.Name),
		Description:   nonEmpty(c.Comment),
		Type:          canonicalType(c.Type),
		DBType:        dbType(c.Type),
		AllowNull:     c.AllowNull,
		Required:      c.Required(),
		AutoIncrement: c.AutoIncrement,
		ReadOnly:      c.Generated,
		IsPrimaryKey:  c.IsPrimaryKey,
		IsUnique:      c.IsUnique,
		IsIndex:       c.IsIndex,
		IsForeignKey:  c.IsForeignKey,
		Default:       c.JSONDefault(),
		OpenAPI:       map[string]any{},
		Native:        map[string]any{},
	}
	if c.Generated {
		f.Generated = &Generated{Kind: "virtual"}
	}
	switch f.Type {
	case TypeString, TypeText, TypeBinary:
		if c.Length > 0 {
			l := c.Length
			f.Length = &l
		}
	case TypeNumber:
		if c.Precision > 0 {
			p, s := c.Precision, c.Scale
			f.Precision, f.Scale = &p, &s
		}
	case TypeArray:
		base, _ := dialects.SplitNativeType(c.DBType)
		el := string(dialects.SimpleType(strings.TrimSuffix(base, "[]")))
		el = canonicalType(dialects.FieldType(el))
		f.ElementType = &el
	}
	if c.IsForeignKey {
		f.Ref = &Ref{Table: c.RefTable, Field: c.RefField}
	}
	if vals, ok := enumValues(c.DBType); ok {
		f.Enum = &Enum{Values: vals}
	}
	return f
}

func fromRelation(r *dialects.Relation) Relationship {
	out := Relationship{
		Name:     r.Name,
		Label:    Label(r.Name),
		Type:     string(r.Type),
		Field:    strings.Join(r.Fields, ","),
		RefTable: r.RefTable,
		RefField: strings.Join(r.RefFields, ","),
		Native:   map[string]any{},
	}
	if r.Type == dialects.ManyMany {
		out.Junction = &Junction{Table: r.JunctionTable,
			Field: strings.Join(r.JunctionFields, ","), RefField: strings.Join(r.JunctionRefFields, ",")}
	}
	return out
}

// foreignKeyIndex reports whether ix is the index MySQL creates for a
// foreign key: named after the key, on its columns.
func foreignKeyIndex(t *dialects.Table, ix dialects.Index) bool {
	for _, fk := range t.ForeignKeys {
		if strings.EqualFold(fk.Name, ix.Name) && slices.EqualFunc(fk.Columns, ix.Columns, strings.EqualFold) {
			return true
		}
	}
	return false
}

// canonicalType collapses a simple type to its canonical family.
func canonicalType(t dialects.FieldType) string {
	switch t {
	case dialects.TypeID, dialects.TypeBigID, dialects.TypeReference,
		dialects.TypeUserID, dialects.TypeUserIDOnCreate, dialects.TypeUserIDOnUpdate:
		return TypeID
	case dialects.TypeInteger, dialects.TypeTinyInt, dialects.TypeSmallInt, dialects.TypeMediumInt, dialects.TypeBigInt:
		return TypeInteger
	case dialects.TypeFloat, dialects.TypeDouble, dialects.TypeDecimal, dialects.TypeMoney:
		return TypeNumber
	case dialects.TypeString, dialects.TypeUUID:
		return TypeString
	case dialects.TypeText, dialects.TypeMediumText, dialects.TypeLongText:
		return TypeText
	case dialects.TypeBoolean:
		return TypeBoolean
	case dialects.TypeDate:
		return TypeDate
	case dialects.TypeDatetime, dialects.TypeDatetimeTZ, dialects.TypeTimestamp, dialects.TypeTimestampTZ,
		dialects.TypeTimestampOnCreate, dialects.TypeTimestampOnUpdate:
		return TypeDatetime
	case dialects.TypeTime, dialects.TypeTimeTZ:
		return TypeTime
	case dialects.TypeBinary:
		return TypeBinary
	case dialects.TypeJSON, dialects.TypeJSONB:
		return TypeJSON
	case dialects.TypeArray:
		return TypeArray
	}
	return TypeUnknown
}

// dbType is the engine-neutral simple type of a column as the schema API
// reports it: sizes of integers and texts collapsed, and datetime and
// timestamp (which the three engines name differently for the same
// column) as one, with or without time zone.
func dbType(t dialects.FieldType) string {
	switch t {
	case dialects.TypeTinyInt, dialects.TypeSmallInt, dialects.TypeMediumInt:
		return string(dialects.TypeInteger)
	case dialects.TypeMediumText, dialects.TypeLongText:
		return string(dialects.TypeText)
	case dialects.TypeTimestamp, dialects.TypeDatetime:
		return string(dialects.TypeDatetime)
	case dialects.TypeTimestampTZ, dialects.TypeDatetimeTZ:
		return string(dialects.TypeDatetimeTZ)
	case dialects.TypeJSONB:
		return string(dialects.TypeJSON)
	}
	return string(t)
}

// enumValues reads the values of a MySQL enum('a','b') type.
func enumValues(native string) ([]string, bool) {
	s := strings.TrimSpace(native)
	if len(s) < 6 || !strings.EqualFold(s[:5], "enum(") || !strings.HasSuffix(s, ")") {
		return nil, false
	}
	body := s[5 : len(s)-1]
	var vals []string
	for i := 0; i < len(body); {
		if body[i] != '\'' {
			i++
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(body); j++ {
			if body[j] == '\'' {
				if j+1 < len(body) && body[j+1] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			b.WriteByte(body[j])
		}
		vals = append(vals, b.String())
		i = j + 1
	}
	return vals, true
}

// Label turns a name into DreamFactory's label: words split on
// underscores, each capitalised.
func Label(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '_' })
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, " ")
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// JSON returns the canonical JSON text of t: compact, keys in declaration
// order, slashes and HTML characters unescaped.
func (t *Table) JSON() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		// Every value in a Table marshals; this is a programming error.
		panic(fmt.Sprintf("contract: marshal table: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Hash returns the SHA-256 of the canonical JSON, in hex.
func (t *Table) Hash() string {
	sum := sha256.Sum256(t.JSON())
	return hex.EncodeToString(sum[:])
}

// Parse reads a canonical table from its JSON (a stored snapshot). Numbers
// in defaults stay json.Number, as FromTable makes them.
func Parse(data []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var t Table
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("contract: parse snapshot: %w", err)
	}
	return &t, nil
}

// Field returns the field called name, or nil.
func (t *Table) Field(name string) *Field {
	for i := range t.Fields {
		if t.Fields[i].Name == name {
			return &t.Fields[i]
		}
	}
	return nil
}
