package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/internal/plan"
)

// quote quotes an identifier.
func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// literal quotes a string literal; MySQL reads backslash escapes in them.
func literal(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// columnType is the fixed table of native types. Times keep microseconds
// as PostgreSQL does; text and binary are LONGTEXT and LONGBLOB so that
// they hold what the other engines hold.
func columnType(f dialects.FieldSpec) string {
	switch f.Type {
	case dialects.TypeBigID, dialects.TypeBigInt:
		return "BIGINT"
	case dialects.TypeTinyInt:
		return "TINYINT"
	case dialects.TypeSmallInt:
		return "SMALLINT"
	case dialects.TypeMediumInt:
		return "MEDIUMINT"
	case dialects.TypeBoolean:
		return "TINYINT(1)"
	case dialects.TypeFloat:
		return "FLOAT"
	case dialects.TypeDouble:
		return "DOUBLE"
	case dialects.TypeDecimal, dialects.TypeMoney:
		return fmt.Sprintf("DECIMAL(%d,%d)", f.Precision, f.Scale)
	case dialects.TypeString:
		return fmt.Sprintf("VARCHAR(%d)", f.Length)
	case dialects.TypeText, dialects.TypeLongText:
		return "LONGTEXT"
	case dialects.TypeMediumText:
		return "MEDIUMTEXT"
	case dialects.TypeBinary:
		if f.Length > 0 {
			return fmt.Sprintf("VARBINARY(%d)", f.Length)
		}
		return "LONGBLOB"
	case dialects.TypeDate:
		return "DATE"
	case dialects.TypeTime, dialects.TypeTimeTZ:
		return "TIME(6)"
	case dialects.TypeDatetime, dialects.TypeDatetimeTZ:
		return "DATETIME(6)"
	case dialects.TypeTimestamp, dialects.TypeTimestampTZ, dialects.TypeTimestampOnCreate, dialects.TypeTimestampOnUpdate:
		return "TIMESTAMP(6)"
	case dialects.TypeJSON, dialects.TypeJSONB:
		return "JSON"
	case dialects.TypeUUID:
		return "CHAR(36)"
	}
	return "INT" // id, integer, reference, user_id*
}

// unindexable reports whether MySQL cannot index a column of native type
// (text, blob and JSON need a prefix length).
func unindexable(native string) bool {
	base, _ := dialects.SplitNativeType(native)
	switch base {
	case "text", "tinytext", "mediumtext", "longtext", "blob", "tinyblob", "mediumblob", "longblob", "json":
		return true
	}
	return false
}

func defaultSQL(f dialects.FieldSpec) string {
	v := *f.Default
	switch {
	case f.IsCurrentTimestamp():
		if f.Type == dialects.TypeTimestampOnUpdate {
			return "CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)"
		}
		return "CURRENT_TIMESTAMP(6)"
	case f.Type == dialects.TypeBoolean:
		if v == "true" {
			return "1"
		}
		return "0"
	case f.Type.IsNumeric():
		return v
	case unindexable(columnType(f)):
		// TEXT, BLOB and JSON defaults must be expressions.
		return "(" + literal(v) + ")"
	}
	return literal(v)
}

func columnDef(f dialects.FieldSpec) string {
	var b strings.Builder
	b.WriteString(quote(f.Name) + " " + columnType(f))
	if f.AllowNull {
		b.WriteString(" NULL")
	} else {
		b.WriteString(" NOT NULL")
	}
	if f.Default != nil {
		b.WriteString(" DEFAULT " + defaultSQL(f))
	}
	if f.AutoIncrement {
		b.WriteString(" AUTO_INCREMENT")
	}
	return b.String()
}

func fkClause(name string, cols []string, ref string, refCols []string, onDelete, onUpdate string) string {
	return fmt.Sprintf("CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s (%s) ON DELETE %s ON UPDATE %s",
		quote(name), quoteList(cols), quote(ref), quoteList(refCols), onDelete, onUpdate)
}

func fieldFK(table string, f dialects.FieldSpec) string {
	return fkClause(dialects.ForeignKeyName(table, []string{f.Name}), []string{f.Name}, f.RefTable, []string{f.RefField}, f.RefOnDelete, f.RefOnUpdate)
}

func uniqueKey(table, col string) string {
	return "UNIQUE KEY " + quote(dialects.IndexName(table, []string{col}, true)) + " (" + quote(col) + ")"
}

func plainKey(table, col string) string {
	return "KEY " + quote(dialects.IndexName(table, []string{col}, false)) + " (" + quote(col) + ")"
}

// checkField adds MySQL's own limits on a field to err.
func checkField(f dialects.FieldSpec, err error) error {
	var p []string
	if err != nil {
		se, ok := err.(*dialects.SpecError)
		if !ok {
			return err
		}
		p = append(p, se.Problems...)
	}
	if unindexable(columnType(f)) && (f.IsUnique || f.IsIndex || f.IsPrimaryKey || f.IsForeignKey()) {
		p = append(p, fmt.Sprintf("field %q: MySQL cannot index a %s field; use string, or binary with a length", f.Name, f.Type))
	}
	if f.RefOnDelete == dialects.ActionSetDefault || f.RefOnUpdate == dialects.ActionSetDefault {
		p = append(p, fmt.Sprintf("field %q: MySQL does not support SET DEFAULT actions", f.Name))
	}
	if len(p) == 0 {
		return nil
	}
	return &dialects.SpecError{Problems: p}
}

// change introspects, lets build plan one statement (MySQL commits DDL
// statement by statement, and a single ALTER TABLE either completes or
// leaves the table as it was) and runs it.
func (d Dialect) change(ctx context.Context, db bun.IDB, build func(s *dialects.Schema) (string, error)) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	stmt, err := build(s)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, stmt)
	return d.ClassifyError(err)
}

// CreateTable implements [dialects.Dialect], as one CREATE TABLE with
// InnoDB and utf8mb4.
func (d Dialect) CreateTable(ctx context.Context, db bun.IDB, spec dialects.TableSpec) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		spec, err := plan.Create(s, spec)
		for _, f := range spec.Fields {
			err = checkField(f, err)
		}
		if err != nil {
			return "", err
		}
		var defs, pk []string
		for _, f := range spec.Fields {
			defs = append(defs, columnDef(f))
			if f.IsPrimaryKey {
				pk = append(pk, f.Name)
			}
		}
		if len(pk) > 0 {
			defs = append(defs, "PRIMARY KEY ("+quoteList(pk)+")")
		}
		for _, f := range spec.Fields {
			single := f.IsPrimaryKey && len(pk) == 1
			if f.IsUnique && !single {
				defs = append(defs, uniqueKey(spec.Name, f.Name))
			}
			if f.IsIndex && !f.IsUnique && !single {
				defs = append(defs, plainKey(spec.Name, f.Name))
			}
			if f.IsForeignKey() {
				defs = append(defs, fieldFK(spec.Name, f))
			}
		}
		return "CREATE TABLE " + quote(spec.Name) + " (\n\t" + strings.Join(defs, ",\n\t") + "\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4", nil
	})
}

// DropTable implements [dialects.Dialect].
func (d Dialect) DropTable(ctx context.Context, db bun.IDB, table string) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		t, err := plan.DropTable(s, table)
		if err != nil {
			return "", err
		}
		return "DROP TABLE " + quote(t.Name), nil
	})
}

// AddColumn implements [dialects.Dialect]. MySQL would fill a NOT NULL
// column without a default with zeros; like the other engines it is
// refused on a table with rows instead.
func (d Dialect) AddColumn(ctx context.Context, db bun.IDB, table string, field dialects.FieldSpec) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		t, f, err := plan.AddColumn(s, table, field)
		if err = checkField(f, err); err != nil {
			return "", err
		}
		if !f.AllowNull && f.Default == nil && !f.AutoIncrement {
			var one int
			err := db.QueryRowContext(ctx, "SELECT 1 FROM "+quote(t.Name)+" LIMIT 1").Scan(&one)
			if err == nil {
				return "", dialects.NewConstraintError(nil, dialects.ConstraintNotNull, t.Name, "", f.Name, "", false)
			}
		}
		parts := []string{"ADD COLUMN " + columnDef(f)}
		if f.IsPrimaryKey {
			parts = append(parts, "ADD PRIMARY KEY ("+quote(f.Name)+")")
		}
		if f.IsUnique && !f.IsPrimaryKey {
			parts = append(parts, "ADD "+uniqueKey(t.Name, f.Name))
		}
		if f.IsIndex && !f.IsUnique && !f.IsPrimaryKey {
			parts = append(parts, "ADD "+plainKey(t.Name, f.Name))
		}
		if f.IsForeignKey() {
			parts = append(parts, "ADD "+fieldFK(t.Name, f))
		}
		return "ALTER TABLE " + quote(t.Name) + " " + strings.Join(parts, ", "), nil
	})
}

// AlterColumn implements [dialects.Dialect] with MODIFY COLUMN; strict
// mode makes values that do not convert fail the statement.
func (d Dialect) AlterColumn(ctx context.Context, db bun.IDB, table string, field dialects.FieldSpec) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		t, c, f, err := plan.AlterColumn(s, table, field)
		if err = checkField(f, err); err != nil {
			return "", err
		}
		if !f.AllowNull && c.AllowNull {
			// MySQL reports NULLs in a column becoming NOT NULL as
			// truncated data; report them as the other engines do.
			var one int
			err := db.QueryRowContext(ctx, "SELECT 1 FROM "+quote(t.Name)+" WHERE "+quote(c.Name)+" IS NULL LIMIT 1").Scan(&one)
			if err == nil {
				return "", dialects.NewConstraintError(nil, dialects.ConstraintNotNull, t.Name, "", c.Name, "", false)
			}
		}
		parts := []string{"MODIFY COLUMN " + columnDef(f)}
		if f.IsUnique && !c.IsUnique && !c.IsPrimaryKey {
			parts = append(parts, "ADD "+uniqueKey(t.Name, c.Name))
		}
		if f.IsIndex && !c.IsIndex && !f.IsUnique && !c.IsPrimaryKey {
			parts = append(parts, "ADD "+plainKey(t.Name, c.Name))
		}
		if f.IsForeignKey() && !c.IsForeignKey {
			parts = append(parts, "ADD "+fieldFK(t.Name, f))
		}
		return "ALTER TABLE " + quote(t.Name) + " " + strings.Join(parts, ", "), nil
	})
}

// DropColumn implements [dialects.Dialect]. The table's foreign keys and
// multi-column indexes that use the column are dropped with it (MySQL
// would otherwise refuse, or shrink the index), as PostgreSQL does.
func (d Dialect) DropColumn(ctx context.Context, db bun.IDB, table, column string) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		t, c, err := plan.DropColumn(s, table, column)
		if err != nil {
			return "", err
		}
		var parts []string
		dropped := map[string]bool{}
		for _, fk := range t.ForeignKeys {
			if containsFold(fk.Columns, c.Name) {
				parts = append(parts, "DROP FOREIGN KEY "+quote(fk.Name))
			}
		}
		for _, ix := range t.Indexes {
			if len(ix.Columns) > 1 && containsFold(ix.Columns, c.Name) && !dropped[ix.Name] {
				dropped[ix.Name] = true
				parts = append(parts, "DROP INDEX "+quote(ix.Name))
			}
		}
		parts = append(parts, "DROP COLUMN "+quote(c.Name))
		return "ALTER TABLE " + quote(t.Name) + " " + strings.Join(parts, ", "), nil
	})
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// AddForeignKey implements [dialects.Dialect].
func (d Dialect) AddForeignKey(ctx context.Context, db bun.IDB, table string, fk dialects.ForeignKey) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		t, fk, err := plan.ForeignKey(s, table, fk)
		if err != nil {
			return "", err
		}
		var p []string
		for _, name := range fk.Columns {
			if c := t.Column(name); c != nil && unindexable(c.DBType) {
				p = append(p, fmt.Sprintf("field %q: MySQL cannot index a %s field", c.Name, c.DBType))
			}
		}
		if fk.OnDelete == dialects.ActionSetDefault || fk.OnUpdate == dialects.ActionSetDefault {
			p = append(p, "MySQL does not support SET DEFAULT actions")
		}
		if len(p) > 0 {
			return "", &dialects.SpecError{Problems: p}
		}
		return "ALTER TABLE " + quote(t.Name) + " ADD " + fkClause(fk.Name, fk.Columns, fk.RefTable, fk.RefColumns, fk.OnDelete, fk.OnUpdate), nil
	})
}

// CreateIndex implements [dialects.Dialect].
func (d Dialect) CreateIndex(ctx context.Context, db bun.IDB, table string, ix dialects.Index) error {
	return d.change(ctx, db, func(s *dialects.Schema) (string, error) {
		t, ix, err := plan.Index(s, table, ix)
		if err != nil {
			return "", err
		}
		var p []string
		for _, name := range ix.Columns {
			if c := t.Column(name); c != nil && unindexable(c.DBType) {
				p = append(p, fmt.Sprintf("field %q: MySQL cannot index a %s field", c.Name, c.DBType))
			}
		}
		if len(p) > 0 {
			return "", &dialects.SpecError{Problems: p}
		}
		u := ""
		if ix.Unique {
			u = "UNIQUE "
		}
		return fmt.Sprintf("CREATE %sINDEX %s ON %s (%s)", u, quote(ix.Name), quote(t.Name), quoteList(ix.Columns)), nil
	})
}
