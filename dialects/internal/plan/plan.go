package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
)

type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &dialects.SpecError{Problems: p}
}

func specProblems(err error) problems {
	if se, ok := err.(*dialects.SpecError); ok {
		return se.Problems
	}
	return problems{err.Error()}
}

// table returns the stored table (not a view) called name.
func table(s *dialects.Schema, name string) (*dialects.Table, error) {
	t := s.Table(name)
	if t == nil {
		return nil, fmt.Errorf("table %q: %w", name, dialects.ErrNotFound)
	}
	if t.IsView {
		return nil, &dialects.SpecError{Problems: []string{fmt.Sprintf("%q is a view, not a table", t.Name)}}
	}
	return t, nil
}

// family groups types whose columns can reference each other.
func family(t dialects.FieldType) string {
	switch {
	case t.IsInteger():
		return "integer"
	case t.IsText():
		return "text"
	}
	return string(t)
}

// keyColumn reports whether col alone is t's primary key or unique.
func keyColumn(t *dialects.Table, col string) bool {
	if len(t.PrimaryKey) == 1 && strings.EqualFold(t.PrimaryKey[0], col) {
		return true
	}
	for _, ix := range t.Indexes {
		if ix.Unique && len(ix.Columns) == 1 && strings.EqualFold(ix.Columns[0], col) {
			return true
		}
	}
	return false
}

// keyColumns reports whether cols are exactly t's primary key or a
// unique index (in any order).
func keyColumns(t *dialects.Table, cols []string) bool {
	same := func(a []string) bool {
		if len(a) != len(cols) {
			return false
		}
		for _, c := range cols {
			if !slices.ContainsFunc(a, func(x string) bool { return strings.EqualFold(x, c) }) {
				return false
			}
		}
		return true
	}
	if same(t.PrimaryKey) {
		return true
	}
	for _, ix := range t.Indexes {
		if ix.Unique && same(ix.Columns) {
			return true
		}
	}
	return false
}

// resolveRef checks a field's reference against ref (the referenced table
// as stored) and returns the field with the stored spelling of the names.
// A reference field takes the integer size of the column it references.
func resolveRef(f dialects.FieldSpec, ref *dialects.Table, p *problems) dialects.FieldSpec {
	rc := ref.Column(f.RefField)
	if rc == nil {
		p.addf("field %q: ref_field %q does not exist in %q", f.Name, f.RefField, ref.Name)
		return f
	}
	f.RefTable, f.RefField = ref.Name, rc.Name
	if !keyColumn(ref, rc.Name) {
		p.addf("field %q: %q.%q is neither the primary key nor unique, so it cannot be referenced", f.Name, ref.Name, rc.Name)
	}
	if f.Type == dialects.TypeReference && (rc.Type == dialects.TypeBigInt || dialects.SimpleType(rc.DBType) == dialects.TypeBigInt) {
		f.Type = dialects.TypeBigInt
	}
	if family(f.Type) != family(rc.Type) && !(f.Type.IsInteger() && rc.Type.IsInteger()) {
		p.addf("field %q: a %s field cannot reference %q.%q, which is %s", f.Name, f.Type, ref.Name, rc.Name, rc.Type)
	}
	return f
}

// Create checks a new table against s: the name is free
// (case-insensitively), references resolve (a table may reference
// itself). It returns the normalized spec with stored names.
func Create(s *dialects.Schema, spec dialects.TableSpec) (dialects.TableSpec, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return spec, err
	}
	if t := s.Table(spec.Name); t != nil {
		return spec, fmt.Errorf("a table with name %q: %w", t.Name, dialects.ErrExists)
	}
	// The new table as it will be, for self references.
	self := &dialects.Table{Name: spec.Name}
	for _, f := range spec.Fields {
		self.Columns = append(self.Columns, &dialects.Column{Name: f.Name, Type: f.Type, DBType: string(f.Type)})
		if f.IsPrimaryKey {
			self.PrimaryKey = append(self.PrimaryKey, f.Name)
		}
		if f.IsUnique {
			self.Indexes = append(self.Indexes, dialects.Index{Columns: []string{f.Name}, Unique: true})
		}
	}
	var p problems
	for i, f := range spec.Fields {
		if !f.IsForeignKey() {
			continue
		}
		ref := s.Table(f.RefTable)
		if strings.EqualFold(f.RefTable, spec.Name) {
			ref = self
		}
		if ref == nil || ref.IsView {
			p.addf("field %q: ref_table %q does not exist", f.Name, f.RefTable)
			continue
		}
		spec.Fields[i] = resolveRef(f, ref, &p)
	}
	return spec, p.err()
}

// AddColumn checks a new column of table.
func AddColumn(s *dialects.Schema, tableName string, f dialects.FieldSpec) (*dialects.Table, dialects.FieldSpec, error) {
	t, err := table(s, tableName)
	if err != nil {
		return nil, f, err
	}
	f, err = f.Normalize()
	if err != nil {
		return t, f, err
	}
	if c := t.Column(f.Name); c != nil {
		return t, f, fmt.Errorf("field %q of table %q: %w", c.Name, t.Name, dialects.ErrExists)
	}
	var p problems
	if f.IsPrimaryKey && len(t.PrimaryKey) > 0 {
		p.addf("field %q: table %q already has a primary key", f.Name, t.Name)
	}
	if f.IsForeignKey() {
		ref := s.Table(f.RefTable)
		if ref == nil || ref.IsView {
			p.addf("field %q: ref_table %q does not exist", f.Name, f.RefTable)
		} else {
			f = resolveRef(f, ref, &p)
		}
	}
	return t, f, p.err()
}

// AlterColumn checks a change of an existing column of table.
func AlterColumn(s *dialects.Schema, tableName string, f dialects.FieldSpec) (*dialects.Table, *dialects.Column, dialects.FieldSpec, error) {
	t, err := table(s, tableName)
	if err != nil {
		return nil, nil, f, err
	}
	c := t.Column(f.Name)
	if c == nil {
		return t, nil, f, fmt.Errorf("field %q of table %q: %w", f.Name, t.Name, dialects.ErrNotFound)
	}
	f.Name = c.Name
	if c.IsPrimaryKey {
		// The key stays as it is; id and bigid need it.
		f.IsPrimaryKey = true
	}
	f, err = f.Normalize()
	if err != nil {
		return t, c, f, err
	}
	var p problems
	if c.Generated {
		p.addf("field %q is computed and cannot be altered", c.Name)
	}
	if f.IsPrimaryKey && !c.IsPrimaryKey {
		p.addf("field %q: the primary key cannot be changed by altering a field", c.Name)
	}
	if f.AutoIncrement && len(t.PrimaryKey) != 1 {
		p.addf("field %q: auto increment needs a single-column primary key", c.Name)
	}
	if f.IsForeignKey() && !c.IsForeignKey {
		ref := s.Table(f.RefTable)
		if ref == nil || ref.IsView {
			p.addf("field %q: ref_table %q does not exist", f.Name, f.RefTable)
		} else {
			f = resolveRef(f, ref, &p)
		}
	}
	// Columns that reference this one, or that it references, must keep a
	// compatible type.
	if f.Type != c.Type && family(f.Type) != family(c.Type) {
		for _, other := range s.Tables {
			for _, fk := range other.ForeignKeys {
				if s.Table(fk.RefTable) == t && slices.ContainsFunc(fk.RefColumns, func(x string) bool { return strings.EqualFold(x, c.Name) }) {
					p.addf("field %q is referenced by foreign key %q of %q, so its type cannot change to %s", c.Name, fk.Name, other.Name, f.Type)
				}
			}
		}
		if c.IsForeignKey {
			p.addf("field %q is a foreign key to %q, so its type cannot change to %s", c.Name, c.RefTable, f.Type)
		}
	}
	return t, c, f, p.err()
}

// referencing lists the foreign keys of other tables that reference t
// (the columns cols when given).
func referencing(s *dialects.Schema, t *dialects.Table, cols ...string) []string {
	var out []string
	for _, other := range s.Tables {
		if other == t {
			continue
		}
		for _, fk := range other.ForeignKeys {
			if s.Table(fk.RefTable) != t {
				continue
			}
			if len(cols) > 0 && !slices.ContainsFunc(fk.RefColumns, func(x string) bool {
				return slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(x, c) })
			}) {
				continue
			}
			out = append(out, fmt.Sprintf("foreign key %q of table %q", fk.Name, other.Name))
		}
	}
	return out
}

// DropColumn checks dropping a column of table.
func DropColumn(s *dialects.Schema, tableName, column string) (*dialects.Table, *dialects.Column, error) {
	t, err := table(s, tableName)
	if err != nil {
		return nil, nil, err
	}
	c := t.Column(column)
	if c == nil {
		return t, nil, fmt.Errorf("field %q of table %q: %w", column, t.Name, dialects.ErrNotFound)
	}
	var p problems
	if c.IsPrimaryKey {
		p.addf("field %q is part of the primary key of %q and cannot be dropped", c.Name, t.Name)
	}
	if len(t.Columns) == 1 {
		p.addf("field %q is the last field of %q; drop the table instead", c.Name, t.Name)
	}
	if refs := referencing(s, t, c.Name); len(refs) > 0 {
		return t, c, &dialects.ConstraintError{
			Kind: dialects.ConstraintForeignKey, Table: t.Name, Column: c.Name,
			Message: fmt.Sprintf("field %q of %q is referenced by %s", c.Name, t.Name, strings.Join(refs, ", ")),
		}
	}
	return t, c, p.err()
}

// DropTable checks dropping table.
func DropTable(s *dialects.Schema, tableName string) (*dialects.Table, error) {
	t, err := table(s, tableName)
	if err != nil {
		return nil, err
	}
	if refs := referencing(s, t); len(refs) > 0 {
		return t, &dialects.ConstraintError{
			Kind: dialects.ConstraintForeignKey, Table: t.Name,
			Message: fmt.Sprintf("table %q is referenced by %s", t.Name, strings.Join(refs, ", ")),
		}
	}
	return t, nil
}

// ForeignKey checks a new foreign key of table and returns it complete:
// stored names, a name when it had none, canonical actions.
func ForeignKey(s *dialects.Schema, tableName string, fk dialects.ForeignKey) (*dialects.Table, dialects.ForeignKey, error) {
	t, err := table(s, tableName)
	if err != nil {
		return nil, fk, err
	}
	var p problems
	if len(fk.Columns) == 0 || len(fk.Columns) != len(fk.RefColumns) {
		p.addf("a foreign key needs as many referenced fields as fields")
		return t, fk, p.err()
	}
	ref := s.Table(fk.RefTable)
	if ref == nil || ref.IsView {
		p.addf("ref_table %q does not exist", fk.RefTable)
		return t, fk, p.err()
	}
	fk.RefTable = ref.Name
	cols := make([]string, len(fk.Columns))
	refCols := make([]string, len(fk.RefColumns))
	for i := range fk.Columns {
		c, rc := t.Column(fk.Columns[i]), ref.Column(fk.RefColumns[i])
		switch {
		case c == nil:
			p.addf("field %q does not exist in %q", fk.Columns[i], t.Name)
		case rc == nil:
			p.addf("ref_field %q does not exist in %q", fk.RefColumns[i], ref.Name)
		default:
			cols[i], refCols[i] = c.Name, rc.Name
			if family(c.Type) != family(rc.Type) {
				p.addf("field %q (%s) cannot reference %q.%q (%s)", c.Name, c.Type, ref.Name, rc.Name, rc.Type)
			}
		}
	}
	if len(p) > 0 {
		return t, fk, p.err()
	}
	fk.Columns, fk.RefColumns = cols, refCols
	if !keyColumns(ref, refCols) {
		p.addf("the referenced fields of %q are neither its primary key nor unique", ref.Name)
	}
	for _, a := range []*string{&fk.OnDelete, &fk.OnUpdate} {
		v, err := dialects.NormalizeAction(*a)
		if err != nil {
			p = append(p, specProblems(err)...)
		}
		*a = v
	}
	if fk.Name == "" {
		fk.Name = dialects.ForeignKeyName(t.Name, fk.Columns)
	} else if err := dialects.CheckName(fk.Name, false); err != nil {
		p.addf("foreign key: %v", err)
	}
	for _, other := range s.Tables {
		for _, e := range other.ForeignKeys {
			if strings.EqualFold(e.Name, fk.Name) {
				return t, fk, fmt.Errorf("foreign key %q: %w", e.Name, dialects.ErrExists)
			}
		}
	}
	return t, fk, p.err()
}

// Index checks a new index of table and returns it complete: stored
// column names and a name when it had none.
func Index(s *dialects.Schema, tableName string, ix dialects.Index) (*dialects.Table, dialects.Index, error) {
	t, err := table(s, tableName)
	if err != nil {
		return nil, ix, err
	}
	var p problems
	if len(ix.Columns) == 0 {
		p.addf("an index needs at least one field")
	}
	cols := make([]string, 0, len(ix.Columns))
	for _, name := range ix.Columns {
		if c := t.Column(name); c == nil {
			p.addf("field %q does not exist in %q", name, t.Name)
		} else {
			cols = append(cols, c.Name)
		}
	}
	if len(p) > 0 {
		return t, ix, p.err()
	}
	ix.Columns = cols
	if ix.Name == "" {
		ix.Name = dialects.IndexName(t.Name, cols, ix.Unique)
	} else if err := dialects.CheckName(ix.Name, false); err != nil {
		p.addf("index: %v", err)
	}
	if ExistsIndex(s, ix.Name) {
		return t, ix, fmt.Errorf("index %q: %w", ix.Name, dialects.ErrExists)
	}
	return t, ix, p.err()
}

// ExistsIndex reports whether any table has an index called name
// (case-insensitively; PostgreSQL and SQLite index names are per schema).
func ExistsIndex(s *dialects.Schema, name string) bool {
	for _, t := range s.Tables {
		for _, ix := range t.Indexes {
			if strings.EqualFold(ix.Name, name) {
				return true
			}
		}
	}
	return false
}
