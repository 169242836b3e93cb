package dialects

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Schema is the introspected shape of one database (or, on PostgreSQL, of
// the current schema): its tables and views sorted by name, with relations
// derived from the foreign keys. A Schema built by [NewSchema] is never
// changed afterwards, so it is safe for concurrent use; introspect again to
// see later changes.
type Schema struct {
	// Tables holds every table and view, sorted by name (case-insensitively,
	// then byte-wise).
	Tables []*Table

	exact  map[string]*Table
	folded map[string]*Table
}

// Table is one table or view.
type Table struct {
	// Name is the table's name as the database spells it.
	Name string
	// IsView is true for views (and materialized views); they have no keys.
	IsView bool
	// Comment is the table's comment, where the engine keeps one.
	Comment string
	// Columns in ordinal order.
	Columns []*Column
	// PrimaryKey names the primary key's columns in key order; empty when
	// the table has none. Composite keys have several.
	PrimaryKey []string
	// ForeignKeys in name order.
	ForeignKeys []ForeignKey
	// Indexes are the unique constraints and plain indexes, without the
	// primary key's own index and without expression indexes.
	Indexes []Index
	// Relations are derived from foreign keys in DreamFactory's shape.
	Relations []Relation

	exact  map[string]*Column
	folded map[string]*Column
}

// Column is one column of a table.
type Column struct {
	// Name is the column's name as the database spells it.
	Name string
	// Type is the simple type: id for an auto-incrementing single-column
	// integer primary key, reference for a single-column integer foreign
	// key, otherwise what [SimpleType] makes of DBType (with the engine's
	// own knowledge: MySQL tinyint(1) and MariaDB's json_valid check).
	Type FieldType
	// DBType is the native type as the engine writes it, e.g.
	// "varchar(64)", "numeric(10,2)", "tinyint(1)", "DECIMAL(10,2)".
	DBType string
	// AllowNull is false for NOT NULL columns.
	AllowNull bool
	// Length is the declared length of string and binary columns, 0 when
	// unbounded or not applicable.
	Length int
	// Precision and Scale are the declared size of decimal and money
	// columns; Precision is 0 when not applicable (then Scale is too).
	Precision int
	Scale     int
	// Default is the column default: a literal's value without quotes
	// ("abc", "12.50", "true" for booleans), or an expression's text when
	// DefaultIsExpr (CURRENT_TIMESTAMP, CURRENT_DATE and CURRENT_TIME are
	// spelled so on every engine). Nil when there is no default, when it is
	// NULL, and for auto-increment columns.
	Default *string
	// DefaultIsExpr says Default is an SQL expression, not a literal.
	DefaultIsExpr bool
	// AutoIncrement is true for SQLite rowid aliases (INTEGER PRIMARY KEY),
	// PostgreSQL serial and identity columns and MySQL AUTO_INCREMENT.
	AutoIncrement bool
	// Generated is true for computed columns, which cannot be written.
	Generated bool
	// IsPrimaryKey is true for every column of the primary key.
	IsPrimaryKey bool
	// IsUnique is true when a unique constraint or index covers exactly this
	// column.
	IsUnique bool
	// IsIndex is true when the column is part of some index other than the
	// primary key's.
	IsIndex bool
	// IsForeignKey is true when the column is part of a foreign key; the Ref
	// fields then describe the first such key.
	IsForeignKey bool
	RefTable     string
	RefField     string
	RefOnDelete  string
	RefOnUpdate  string
	// Comment is the column's comment, where the engine keeps one.
	Comment string
}

// JSONDefault is the column's default as the API and schema contracts
// show it: literals typed by the column (numbers as json.Number when they
// are valid JSON numbers, booleans as true/false), expressions and other
// literals as their text, nil for none.
func (c *Column) JSONDefault() any {
	if c.Default == nil {
		return nil
	}
	v := *c.Default
	if c.DefaultIsExpr {
		return v
	}
	switch {
	case c.Type == TypeBoolean:
		switch strings.ToLower(v) {
		case "true":
			return true
		case "false":
			return false
		}
	case c.Type.IsNumeric():
		s := strings.TrimPrefix(v, "+")
		if _, err := strconv.ParseFloat(s, 64); err == nil && json.Valid([]byte(s)) {
			return json.Number(s)
		}
	}
	return v
}

// Required reports whether a new record must give the column a value: it
// is NOT NULL, has no default, is not generated and does not increment
// itself (DreamFactory's "required").

func (c *Column) Required() bool {
	return !c.AllowNull && c.Default == nil && !c.AutoIncrement && !c.Generated
}

// ForeignKey is a foreign key constraint.
type ForeignKey struct {
	// Name is the constraint name. SQLite does not report names; there it is
	// {table}_{columns}_fkey, which is also PostgreSQL's default and what
	// Portcullis's DDL names new keys.
	Name string
	// Columns are the referencing columns, in key order.
	Columns []string
	// RefTable is the referenced table.
	RefTable string
	// RefColumns are the referenced columns, matching Columns.
	RefColumns []string
	// OnDelete and OnUpdate are the referential actions, spelled
	// "NO ACTION", "RESTRICT", "CASCADE", "SET NULL" or "SET DEFAULT".
	OnDelete string
	OnUpdate string
}

// Index is a unique constraint or an index.
type Index struct {
	// Name is the index or constraint name.
	Name string
	// Columns are the indexed columns in index order.
	Columns []string
	// Unique is true for unique indexes and unique constraints.
	Unique bool
}

// RelationType is the kind of a relation, as DreamFactory names it.
type RelationType string

// The relation types.
const (
	BelongsTo RelationType = "belongs_to"
	HasOne    RelationType = "has_one"
	HasMany   RelationType = "has_many"
	ManyMany  RelationType = "many_many"
)

// Relation links a table to another through a foreign key, in
// DreamFactory's shape (its _related objects).
type Relation struct {
	// Name follows DreamFactory: belongs_to is {ref_table}_by_{fields};
	// has_one and has_many are {child_table}_by_{child_fields}; many_many is
	// {ref_table}_by_{junction_table}. Several fields are joined with "_".
	Name string
	// Type is belongs_to, has_one, has_many or many_many.
	Type RelationType
	// Fields are this table's columns that the relation matches on.
	Fields []string
	// RefTable is the related table.
	RefTable string
	// RefFields are RefTable's columns matched with Fields (for many_many,
	// the columns the junction's second key references).
	RefFields []string
	// RefOnDelete and RefOnUpdate are the foreign key's actions
	// (belongs_to, has_one, has_many).
	RefOnDelete string
	RefOnUpdate string
	// JunctionTable, JunctionFields and JunctionRefFields describe a
	// many_many relation's junction: JunctionFields reference Fields,
	// JunctionRefFields reference RefFields.
	JunctionTable     string
	JunctionFields    []string
	JunctionRefFields []string
}

// Table returns the table or view called name: the exact name first, then
// a case-insensitive match (the first in sort order when several differ
// only in case). It returns nil when there is none.
func (s *Schema) Table(name string) *Table {
	if s == nil {
		return nil
	}
	if s.exact == nil { // not built by NewSchema
		for _, t := range s.Tables {
			if t.Name == name {
				return t
			}
		}
		for _, t := range s.Tables {
			if strings.EqualFold(t.Name, name) {
				return t
			}
		}
		return nil
	}
	if t, ok := s.exact[name]; ok {
		return t
	}
	return s.folded[strings.ToLower(name)]
}

// Names returns the table and view names in order.
func (s *Schema) Names() []string {
	names := make([]string, len(s.Tables))
	for i, t := range s.Tables {
		names[i] = t.Name
	}
	return names
}

// Column returns the column called name, exact match first, then
// case-insensitively; nil when there is none.
func (t *Table) Column(name string) *Column {
	if t.exact == nil {
		for _, c := range t.Columns {
			if c.Name == name {
				return c
			}
		}
		for _, c := range t.Columns {
			if strings.EqualFold(c.Name, name) {
				return c
			}
		}
		return nil
	}
	if c, ok := t.exact[name]; ok {
		return c
	}
	return t.folded[strings.ToLower(name)]
}

// ColumnNames returns the column names in ordinal order.
func (t *Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// Relation returns the relation called name (case-insensitive), or nil.
func (t *Table) Relation(name string) *Relation {
	for i := range t.Relations {
		if strings.EqualFold(t.Relations[i].Name, name) {
			return &t.Relations[i]
		}
	}
	return nil
}

// NewSchema completes tables as read by an engine and returns them as a
// Schema. Engines fill each table's name, columns (name, type, native type,
// nullability, size, default, auto increment), primary key, foreign keys and
// indexes; NewSchema sorts tables, foreign keys and indexes, resolves
// foreign keys that omit their referenced columns to the referenced
// table's primary key, sets the key flags and Ref fields on columns,
// refines Type to id and reference, normalises boolean defaults to
// "true"/"false", and derives the relations.
func NewSchema(tables []*Table) *Schema {
	s := &Schema{
		Tables: tables,
		exact:  make(map[string]*Table, len(tables)),
		folded: make(map[string]*Table, len(tables)),
	}
	slices.SortFunc(s.Tables, func(a, b *Table) int { return compareNames(a.Name, b.Name) })
	for _, t := range s.Tables {
		s.exact[t.Name] = t
		if _, ok := s.folded[strings.ToLower(t.Name)]; !ok {
			s.folded[strings.ToLower(t.Name)] = t
		}
	}
	for _, t := range s.Tables {
		t.exact = make(map[string]*Column, len(t.Columns))
		t.folded = make(map[string]*Column, len(t.Columns))
		for _, c := range t.Columns {
			t.exact[c.Name] = c
			if _, ok := t.folded[strings.ToLower(c.Name)]; !ok {
				t.folded[strings.ToLower(c.Name)] = c
			}
		}
		slices.SortFunc(t.ForeignKeys, func(a, b ForeignKey) int { return compareNames(a.Name, b.Name) })
		slices.SortFunc(t.Indexes, func(a, b Index) int { return compareNames(a.Name, b.Name) })
		for i := range t.ForeignKeys {
			fk := &t.ForeignKeys[i]
			if len(fk.RefColumns) == 0 {
				if rt := s.Table(fk.RefTable); rt != nil {
					fk.RefColumns = slices.Clone(rt.PrimaryKey)
				}
			}
		}
	}
	for _, t := range s.Tables {
		t.markColumns()
	}
	for _, t := range s.Tables {
		t.Relations = s.relations(t)
	}
	return s
}

// compareNames orders names case-insensitively, then byte-wise.
func compareNames(a, b string) int {
	if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func (t *Table) markColumns() {
	for _, name := range t.PrimaryKey {
		if c := t.Column(name); c != nil {
			c.IsPrimaryKey = true
		}
	}
	for _, ix := range t.Indexes {
		for _, name := range ix.Columns {
			if c := t.Column(name); c != nil {
				c.IsIndex = true
			}
		}
		if ix.Unique && len(ix.Columns) == 1 {
			if c := t.Column(ix.Columns[0]); c != nil && !(len(t.PrimaryKey) == 1 && c.IsPrimaryKey) {
				c.IsUnique = true
			}
		}
	}
	for _, fk := range t.ForeignKeys {
		for i, name := range fk.Columns {
			c := t.Column(name)
			if c == nil || c.IsForeignKey {
				continue
			}
			c.IsForeignKey = true
			c.RefTable = fk.RefTable
			if i < len(fk.RefColumns) {
				c.RefField = fk.RefColumns[i]
			}
			c.RefOnDelete = fk.OnDelete
			c.RefOnUpdate = fk.OnUpdate
		}
	}
	for _, c := range t.Columns {
		switch {
		case c.IsPrimaryKey && len(t.PrimaryKey) == 1 && c.AutoIncrement && c.Type.IsInteger():
			c.Type = TypeID
		case c.IsForeignKey && c.Type.IsInteger() && t.singleColumnFK(c.Name):
			c.Type = TypeReference
		}
		if (c.Type == TypeDecimal || c.Type == TypeMoney) && c.Precision > 0 && c.Default != nil && !c.DefaultIsExpr {
			v := padScale(*c.Default, c.Scale)
			c.Default = &v
		}
		if c.Type == TypeBoolean && c.Default != nil && !c.DefaultIsExpr {
			switch strings.ToLower(*c.Default) {
			case "1", "true", "t", "b'1'", "y", "yes", "on":
				v := "true"
				c.Default = &v
			case "0", "false", "f", "b'0'", "n", "no", "off":
				v := "false"
				c.Default = &v
			}
		}
	}
}

func (t *Table) singleColumnFK(col string) bool {
	for _, fk := range t.ForeignKeys {
		if len(fk.Columns) == 1 && strings.EqualFold(fk.Columns[0], col) {
			return true
		}
	}
	return false
}

// isUniqueSet reports whether cols (in any order) are exactly the primary
// key or the columns of a unique index.
func (t *Table) isUniqueSet(cols []string) bool {
	same := func(a []string) bool {
		if len(a) != len(cols) {
			return false
		}
		for _, x := range a {
			if !slices.ContainsFunc(cols, func(y string) bool { return strings.EqualFold(x, y) }) {
				return false
			}
		}
		return true
	}
	if len(t.PrimaryKey) > 0 && same(t.PrimaryKey) {
		return true
	}
	for _, ix := range t.Indexes {
		if ix.Unique && same(ix.Columns) {
			return true
		}
	}
	return false
}

// relations derives t's relations: belongs_to for each of its foreign keys,
// has_one/has_many for each foreign key elsewhere that references it, and
// many_many through every table holding such a key and another one. Names
// are unique per table (case-insensitively); on a clash the earlier
// relation is kept, in the order belongs_to, has_*, many_many.
func (s *Schema) relations(t *Table) []Relation {
	var out []Relation
	seen := map[string]bool{}
	add := func(r Relation) {
		key := strings.ToLower(r.Name)
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, r)
	}
	for _, fk := range t.ForeignKeys {
		rt := s.Table(fk.RefTable)
		if rt == nil || len(fk.RefColumns) != len(fk.Columns) {
			continue
		}
		add(Relation{
			Name:        rt.Name + "_by_" + strings.Join(fk.Columns, "_"),
			Type:        BelongsTo,
			Fields:      slices.Clone(fk.Columns),
			RefTable:    rt.Name,
			RefFields:   slices.Clone(fk.RefColumns),
			RefOnDelete: fk.OnDelete,
			RefOnUpdate: fk.OnUpdate,
		})
	}
	for _, child := range s.Tables {
		for _, fk := range child.ForeignKeys {
			if s.Table(fk.RefTable) != t || len(fk.RefColumns) != len(fk.Columns) {
				continue
			}
			typ := HasMany
			if child.isUniqueSet(fk.Columns) {
				typ = HasOne
			}
			add(Relation{
				Name:        child.Name + "_by_" + strings.Join(fk.Columns, "_"),
				Type:        typ,
				Fields:      slices.Clone(fk.RefColumns),
				RefTable:    child.Name,
				RefFields:   slices.Clone(fk.Columns),
				RefOnDelete: fk.OnDelete,
				RefOnUpdate: fk.OnUpdate,
			})
		}
	}
	for _, junction := range s.Tables {
		for i, fk := range junction.ForeignKeys {
			if s.Table(fk.RefTable) != t || len(fk.RefColumns) != len(fk.Columns) {
				continue
			}
			for j, other := range junction.ForeignKeys {
				if j == i || len(other.RefColumns) != len(other.Columns) {
					continue
				}
				rt := s.Table(other.RefTable)
				if rt == nil {
					continue
				}
				add(Relation{
					Name:              rt.Name + "_by_" + junction.Name,
					Type:              ManyMany,
					Fields:            slices.Clone(fk.RefColumns),
					RefTable:          rt.Name,
					RefFields:         slices.Clone(other.RefColumns),
					JunctionTable:     junction.Name,
					JunctionFields:    slices.Clone(fk.Columns),
					JunctionRefFields: slices.Clone(other.Columns),
				})
			}
		}
	}
	return out
}

// padScale writes a decimal literal with exactly scale fraction digits when
// that does not change its value ("0" and "0.0" give "0.00" for scale 2);
// other text is returned unchanged.
func padScale(v string, scale int) string {
	if !numericLiteral.MatchString(v) || strings.ContainsAny(v, "eE") {
		return v
	}
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" || whole == "-" || whole == "+" {
		whole += "0"
	}
	for len(frac) > scale && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if len(frac) > scale {
		return v
	}
	frac += strings.Repeat("0", scale-len(frac))
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
