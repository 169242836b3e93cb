package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/internal/plan"
)

// quote quotes an identifier.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// literal quotes a string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// columnType is the fixed table of declared types. Their names give the
// intended affinity and read back as the same simple type. An
// auto-incrementing key is INTEGER (the rowid's alias); any other integer
// primary key is INT, which is not an alias, so that SQLite does not
// number it behind the caller's back.
func columnType(f dialects.FieldSpec) string {
	if f.Type.IsInteger() && f.IsPrimaryKey && !f.AutoIncrement {
		if f.Type == dialects.TypeBigInt || f.Type == dialects.TypeBigID {
			return "BIGINT"
		}
		return "INT"
	}
	switch f.Type {
	case dialects.TypeBigInt:
		return "BIGINT"
	case dialects.TypeTinyInt:
		return "TINYINT"
	case dialects.TypeSmallInt:
		return "SMALLINT"
	case dialects.TypeMediumInt:
		return "MEDIUMINT"
	case dialects.TypeBoolean:
		return "BOOLEAN"
	case dialects.TypeFloat:
		return "FLOAT"
	case dialects.TypeDouble:
		return "DOUBLE"
	case dialects.TypeDecimal, dialects.TypeMoney:
		return fmt.Sprintf("DECIMAL(%d,%d)", f.Precision, f.Scale)
	case dialects.TypeString:
		return fmt.Sprintf("VARCHAR(%d)", f.Length)
	case dialects.TypeText:
		return "TEXT"
	case dialects.TypeMediumText:
		return "MEDIUMTEXT"
	case dialects.TypeLongText:
		return "LONGTEXT"
	case dialects.TypeBinary:
		return "BLOB"
	case dialects.TypeDate:
		return "DATE"
	case dialects.TypeTime, dialects.TypeTimeTZ:
		return "TIME"
	case dialects.TypeDatetime, dialects.TypeDatetimeTZ:
		return "DATETIME"
	case dialects.TypeTimestamp, dialects.TypeTimestampTZ, dialects.TypeTimestampOnCreate, dialects.TypeTimestampOnUpdate:
		return "TIMESTAMP"
	case dialects.TypeJSON, dialects.TypeJSONB:
		return "JSON"
	case dialects.TypeUUID:
		return "UUID"
	}
	return "INTEGER" // id, bigid, integer, reference, user_id*
}

func defaultSQL(f dialects.FieldSpec) string {
	v := *f.Default
	switch {
	case f.IsCurrentTimestamp():
		return "CURRENT_TIMESTAMP"
	case f.Type == dialects.TypeBoolean:
		if v == "true" {
			return "1"
		}
		return "0"
	case f.Type.IsNumeric():
		return v
	}
	return literal(v)
}

// columnDef writes a column definition; inlinePK puts PRIMARY KEY (and
// AUTOINCREMENT) in it.
func columnDef(f dialects.FieldSpec, inlinePK bool) string {
	var b strings.Builder
	b.WriteString(quote(f.Name) + " " + columnType(f))
	if inlinePK {
		b.WriteString(" PRIMARY KEY")
		if f.AutoIncrement {
			b.WriteString(" AUTOINCREMENT")
		}
	}
	if !f.AllowNull {
		b.WriteString(" NOT NULL")
	}
	if f.Default != nil {
		b.WriteString(" DEFAULT " + defaultSQL(f))
	}
	return b.String()
}

func references(ref string, refCols []string, onDelete, onUpdate string) string {
	return fmt.Sprintf("REFERENCES %s (%s) ON DELETE %s ON UPDATE %s", quote(ref), quoteList(refCols), onDelete, onUpdate)
}

func fkItem(name string, cols []string, ref string, refCols []string, onDelete, onUpdate string) string {
	return fmt.Sprintf("CONSTRAINT %s FOREIGN KEY (%s) %s", quote(name), quoteList(cols), references(ref, refCols, onDelete, onUpdate))
}

func fieldFK(table string, f dialects.FieldSpec) string {
	return fkItem(dialects.ForeignKeyName(table, []string{f.Name}), []string{f.Name}, f.RefTable, []string{f.RefField}, f.RefOnDelete, f.RefOnUpdate)
}

func uniqueItem(table, col string) string {
	return fmt.Sprintf("CONSTRAINT %s UNIQUE (%s)", quote(dialects.IndexName(table, []string{col}, true)), quote(col))
}

func createIndex(table string, ix dialects.Index) string {
	u := ""
	if ix.Unique {
		u = "UNIQUE "
	}
	return fmt.Sprintf("CREATE %sINDEX %s ON %s (%s)", u, quote(ix.Name), quote(table), quoteList(ix.Columns))
}

func execAll(ctx context.Context, db bun.IDB, stmts ...string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// inTx runs fn in a transaction, or a savepoint inside the caller's.
func (d Dialect) inTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.IDB) error) error {
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
	return d.ClassifyError(err)
}

// CreateTable implements [dialects.Dialect].
func (d Dialect) CreateTable(ctx context.Context, db bun.IDB, spec dialects.TableSpec) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	if spec, err = plan.Create(s, spec); err != nil {
		return err
	}
	var defs, pk, after []string
	for _, f := range spec.Fields {
		if f.IsPrimaryKey {
			pk = append(pk, f.Name)
		}
	}
	inline := len(pk) == 1
	for _, f := range spec.Fields {
		defs = append(defs, columnDef(f, inline && f.IsPrimaryKey))
	}
	if !inline && len(pk) > 0 {
		defs = append(defs, "PRIMARY KEY ("+quoteList(pk)+")")
	}
	for _, f := range spec.Fields {
		single := f.IsPrimaryKey && inline
		if f.IsUnique && !single {
			defs = append(defs, uniqueItem(spec.Name, f.Name))
		}
		if f.IsForeignKey() {
			defs = append(defs, fieldFK(spec.Name, f))
		}
		if f.IsIndex && !f.IsUnique && !single {
			after = append(after, createIndex(spec.Name, dialects.Index{Name: dialects.IndexName(spec.Name, []string{f.Name}, false), Columns: []string{f.Name}}))
		}
	}
	create := "CREATE TABLE " + quote(spec.Name) + " (\n\t" + strings.Join(defs, ",\n\t") + "\n)"
	return d.inTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
		return execAll(ctx, tx, append([]string{create}, after...)...)
	})
}

// DropTable implements [dialects.Dialect].
func (d Dialect) DropTable(ctx context.Context, db bun.IDB, table string) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	t, err := plan.DropTable(s, table)
	if err != nil {
		return err
	}
	return d.inTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
		return execAll(ctx, tx, "DROP TABLE "+quote(t.Name))
	})
}

// AddColumn implements [dialects.Dialect]. SQLite's ALTER TABLE ADD COLUMN
// is used when it can be (a nullable or constant-default column that is
// not a key); otherwise the table is rebuilt.
func (d Dialect) AddColumn(ctx context.Context, db bun.IDB, table string, field dialects.FieldSpec) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	t, f, err := plan.AddColumn(s, table, field)
	if err != nil {
		return err
	}
	var after []string
	if f.IsUnique && !f.IsPrimaryKey {
		after = append(after, createIndex(t.Name, dialects.Index{Name: dialects.IndexName(t.Name, []string{f.Name}, true), Columns: []string{f.Name}, Unique: true}))
	}
	if f.IsIndex && !f.IsUnique && !f.IsPrimaryKey {
		after = append(after, createIndex(t.Name, dialects.Index{Name: dialects.IndexName(t.Name, []string{f.Name}, false), Columns: []string{f.Name}}))
	}
	fast := !f.IsPrimaryKey && !f.IsCurrentTimestamp() && (f.AllowNull || f.Default != nil) && !(f.IsForeignKey() && f.Default != nil)
	if fast {
		def := columnDef(f, false)
		if f.IsForeignKey() {
			def += " CONSTRAINT " + quote(dialects.ForeignKeyName(t.Name, []string{f.Name})) + " " + references(f.RefTable, []string{f.RefField}, f.RefOnDelete, f.RefOnUpdate)
		}
		return d.inTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			return execAll(ctx, tx, append([]string{"ALTER TABLE " + quote(t.Name) + " ADD COLUMN " + def}, after...)...)
		})
	}
	a := alteration{add: &f, after: after}
	if f.IsForeignKey() {
		a.constraints = append(a.constraints, fieldFK(t.Name, f))
	}
	return d.rebuild(ctx, db, s, t, a)
}

// AlterColumn implements [dialects.Dialect] by rebuilding the table. Values
// are converted by the new column's affinity; when one does not convert
// to a numeric or boolean type, the change fails.
func (d Dialect) AlterColumn(ctx context.Context, db bun.IDB, table string, field dialects.FieldSpec) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	t, c, f, err := plan.AlterColumn(s, table, field)
	if err != nil {
		return err
	}
	a := alteration{alter: &f, current: c}
	if f.IsUnique && !c.IsUnique && !c.IsPrimaryKey {
		a.constraints = append(a.constraints, uniqueItem(t.Name, c.Name))
	}
	if f.IsForeignKey() && !c.IsForeignKey {
		a.constraints = append(a.constraints, fieldFK(t.Name, f))
	}
	if f.IsIndex && !c.IsIndex && !f.IsUnique && !c.IsPrimaryKey {
		a.after = append(a.after, createIndex(t.Name, dialects.Index{Name: dialects.IndexName(t.Name, []string{c.Name}, false), Columns: []string{c.Name}}))
	}
	return d.rebuild(ctx, db, s, t, a)
}

// DropColumn implements [dialects.Dialect] by rebuilding the table without
// the column, its indexes and the table constraints that use it.
func (d Dialect) DropColumn(ctx context.Context, db bun.IDB, table, column string) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	t, c, err := plan.DropColumn(s, table, column)
	if err != nil {
		return err
	}
	return d.rebuild(ctx, db, s, t, alteration{drop: c.Name})
}

// AddForeignKey implements [dialects.Dialect] by rebuilding the table with
// the new key; existing rows are checked before the change commits.
func (d Dialect) AddForeignKey(ctx context.Context, db bun.IDB, table string, fk dialects.ForeignKey) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	t, fk, err := plan.ForeignKey(s, table, fk)
	if err != nil {
		return err
	}
	return d.rebuild(ctx, db, s, t, alteration{constraints: []string{fkItem(fk.Name, fk.Columns, fk.RefTable, fk.RefColumns, fk.OnDelete, fk.OnUpdate)}})
}

// CreateIndex implements [dialects.Dialect].
func (d Dialect) CreateIndex(ctx context.Context, db bun.IDB, table string, ix dialects.Index) error {
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	t, ix, err := plan.Index(s, table, ix)
	if err != nil {
		return err
	}
	return d.inTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
		return execAll(ctx, tx, createIndex(t.Name, ix))
	})
}

// alteration is what a rebuild changes.
type alteration struct {
	drop        string              // a column to drop
	alter       *dialects.FieldSpec // a column's new definition
	current     *dialects.Column    // that column as it is
	add         *dialects.FieldSpec // a column to add
	constraints []string            // table constraints to add
	after       []string            // statements to run after the rebuild
}

// rebuildPrefix names the table a rebuild builds before it takes the
// original's name.
const rebuildPrefix = "_portcullis_rebuild_"

// rebuild changes table t the way SQLite's documentation prescribes for
// what ALTER TABLE cannot do: create the new table, copy the rows, drop the
// old one, rename the new one, recreate indexes and triggers, and check
// foreign keys, all in one transaction. Foreign key enforcement must be
// off while the old table is dropped (or its children would be cascaded
// or checked), and PRAGMA foreign_keys cannot change inside a
// transaction: on a pool or a connection the rebuild turns it off around
// its own transaction and back on after; inside the caller's transaction
// it works only when no foreign key references the table.
func (d Dialect) rebuild(ctx context.Context, db bun.IDB, s *dialects.Schema, t *dialects.Table, a alteration) error {
	var children []string
	for _, other := range s.Tables {
		for _, fk := range other.ForeignKeys {
			if s.Table(fk.RefTable) == t && !containsFold(children, other.Name) {
				children = append(children, other.Name)
			}
		}
	}
	work := func(ctx context.Context, tx bun.IDB) error {
		return d.rebuildTx(ctx, tx, t.Name, children, a)
	}
	var err error
	switch x := db.(type) {
	case *bun.DB:
		var conn bun.Conn
		if conn, err = x.Conn(ctx); err != nil {
			return d.ClassifyError(err)
		}
		defer conn.Close()
		err = d.withoutForeignKeys(ctx, conn, work)
	case bun.Conn:
		err = d.withoutForeignKeys(ctx, x, work)
	case *bun.Conn:
		err = d.withoutForeignKeys(ctx, *x, work)
	default:
		var on int
		if err := db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&on); err != nil {
			return d.ClassifyError(err)
		}
		if on == 1 && len(children) > 0 {
			return &dialects.SpecError{Problems: []string{fmt.Sprintf(
				"table %q is referenced by foreign keys of %s; SQLite can change it only outside a transaction", t.Name, strings.Join(children, ", "))}}
		}
		err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return work(ctx, tx) })
	}
	return d.ClassifyError(err)
}

// withoutForeignKeys runs fn in a transaction on conn with foreign key
// enforcement off, and turns it back on after. A connection whose setting
// cannot be restored is discarded, not returned to the pool.
func (d Dialect) withoutForeignKeys(ctx context.Context, conn bun.Conn, fn func(ctx context.Context, tx bun.IDB) error) error {
	var on int
	if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&on); err != nil {
		return err
	}
	if on == 1 {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return err
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON"); err != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	return conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func (d Dialect) rebuildTx(ctx context.Context, tx bun.IDB, table string, children []string, a alteration) (err error) {
	var createSQL string
	if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&createSQL); err != nil {
		return fmt.Errorf("sqlite: read definition of %q: %w", table, err)
	}
	ct, err := parseCreate(createSQL)
	if err != nil {
		return err
	}
	cols, err := tableColumns(ctx, tx, table)
	if err != nil {
		return err
	}
	var copyCols []string
	for _, c := range cols {
		if c.hidden == 0 && !strings.EqualFold(c.name, a.drop) {
			copyCols = append(copyCols, c.name)
		}
	}
	items, err := alterItems(createSQL, ct, a)
	if err != nil {
		return err
	}
	tmp := rebuildPrefix + table
	create := "CREATE TABLE " + quote(tmp) + " (\n\t" + strings.Join(items, ",\n\t") + "\n)" + ct.tail

	// Indexes and triggers go with the old table; keep their definitions.
	var recreate []string
	rows, err := tx.QueryContext(ctx, "SELECT type, sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name", table)
	if err != nil {
		return fmt.Errorf("sqlite: read indexes of %q: %w", table, err)
	}
	for rows.Next() {
		var typ, q string
		if err := rows.Scan(&typ, &q); err != nil {
			rows.Close()
			return err
		}
		if typ == "index" && a.drop != "" && indexUses(q, a.drop) {
			continue
		}
		recreate = append(recreate, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	var legacy int
	if err := tx.QueryRowContext(ctx, "PRAGMA legacy_alter_table").Scan(&legacy); err != nil {
		return err
	}
	// Renaming must not rewrite or validate other tables, views and
	// triggers that name the table: they should see the new one.
	if _, err := tx.ExecContext(ctx, "PRAGMA legacy_alter_table = ON"); err != nil {
		return err
	}
	defer func() {
		if _, rerr := tx.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA legacy_alter_table = %d", legacy)); rerr != nil && err == nil {
			err = rerr
		}
	}()

	var seq sql.NullInt64
	var hasSeq int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'").Scan(&hasSeq); err != nil {
		return err
	}
	if hasSeq == 1 {
		if err := tx.QueryRowContext(ctx, "SELECT seq FROM sqlite_sequence WHERE name = ?", table).Scan(&seq); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}

	list := quoteList(copyCols)
	if err := execAll(ctx, tx,
		create,
		"INSERT INTO "+quote(tmp)+" ("+list+") SELECT "+list+" FROM "+quote(table),
	); err != nil {
		return err
	}
	if a.alter != nil {
		if err := checkConverted(ctx, tx, tmp, a.alter); err != nil {
			return err
		}
	}
	if err := execAll(ctx, tx,
		"DROP TABLE "+quote(table),
		"ALTER TABLE "+quote(tmp)+" RENAME TO "+quote(table),
	); err != nil {
		return err
	}
	if err := execAll(ctx, tx, recreate...); err != nil {
		return err
	}
	if seq.Valid {
		// Keep AUTOINCREMENT's promise never to reuse a number.
		res, err := tx.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", seq.Int64, table)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 && hasAutoincrement(create) {
			if _, err := tx.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", table, seq.Int64); err != nil {
				return err
			}
		}
	}
	if err := execAll(ctx, tx, a.after...); err != nil {
		return err
	}
	for _, name := range append([]string{table}, children...) {
		if err := foreignKeyCheck(ctx, tx, name); err != nil {
			return err
		}
	}
	return nil
}

// alterItems applies an alteration to the list of a CREATE TABLE.
func alterItems(createSQL string, ct *createTable, a alteration) ([]string, error) {
	var items []string
	dropTablePK := false
	var altered string
	if a.alter != nil {
		i := ct.column(a.alter.Name)
		if i < 0 {
			return nil, fmt.Errorf("sqlite: column %q not found in the table definition", a.alter.Name)
		}
		var err error
		altered, dropTablePK, err = alterColumnItem(createSQL, ct.items[i], *a.alter)
		if err != nil {
			return nil, err
		}
	}
	last := ct.lastColumn()
	for i, it := range ct.items {
		switch {
		case it.column != "" && a.drop != "" && strings.EqualFold(it.column, a.drop):
			continue
		case it.column == "" && a.drop != "" && it.mentions(a.drop):
			continue
		case it.column == "" && dropTablePK && it.isPrimaryKey():
			continue
		case it.column != "" && a.alter != nil && strings.EqualFold(it.column, a.alter.Name):
			items = append(items, altered)
		default:
			items = append(items, it.text)
		}
		if i == last && a.add != nil {
			items = append(items, columnDef(*a.add, a.add.IsPrimaryKey))
		}
	}
	return append(items, a.constraints...), nil
}

// alterColumnItem writes the new definition of a column: name as written,
// the new type, nullability and default, and the column's other
// constraints (UNIQUE, CHECK, COLLATE, REFERENCES) as written. It reports
// whether a table-level PRIMARY KEY must go because AUTOINCREMENT needs
// the key inline.
func alterColumnItem(createSQL string, it item, f dialects.FieldSpec) (string, bool, error) {
	_, clauses, err := columnClauses(createSQL, it)
	if err != nil {
		return "", false, err
	}
	inlinePK := false
	var kept []string
	for _, c := range clauses {
		switch c.kind {
		case "PRIMARY":
			inlinePK = true
		case "NOT NULL", "NULL", "DEFAULT":
		case "GENERATED":
			return "", false, errors.New("sqlite: a computed column cannot be altered")
		default:
			kept = append(kept, c.text)
		}
	}
	dropTablePK := false
	if f.AutoIncrement && !inlinePK {
		inlinePK, dropTablePK = true, true
	}
	def := it.toks[0].text + strings.TrimPrefix(columnDef(f, inlinePK), quote(f.Name))
	if len(kept) > 0 {
		def += " " + strings.Join(kept, " ")
	}
	return def, dropTablePK, nil
}

// indexUses reports whether an index definition names column in its
// column list.
func indexUses(indexSQL, column string) bool {
	toks, err := tokenize(indexSQL)
	if err != nil {
		return true
	}
	for i, t := range toks {
		if t.kind == tWord && t.upper() == "ON" {
			for _, u := range toks[i+2:] {
				if (u.kind == tWord || u.kind == tIdent) && strings.EqualFold(u.name(), column) {
					return true
				}
			}
			return false
		}
	}
	return false
}

func hasAutoincrement(createSQL string) bool {
	toks, _ := tokenize(createSQL)
	for _, t := range toks {
		if t.kind == tWord && t.upper() == "AUTOINCREMENT" {
			return true
		}
	}
	return false
}

// checkConverted fails when a value of the altered column kept a storage
// class its new numeric or boolean type cannot hold (SQLite keeps text
// that does not look like a number as text).
func checkConverted(ctx context.Context, tx bun.IDB, table string, f *dialects.FieldSpec) error {
	var allowed string
	switch {
	case f.Type.IsInteger() || f.Type == dialects.TypeBoolean:
		allowed = "'integer', 'null'"
	case f.Type.IsNumeric():
		allowed = "'integer', 'real', 'null'"
	default:
		return nil
	}
	var bad int
	q := "SELECT count(*) FROM " + quote(table) + " WHERE typeof(" + quote(f.Name) + ") NOT IN (" + allowed + ")"
	if err := tx.QueryRowContext(ctx, q).Scan(&bad); err != nil {
		return err
	}
	if bad > 0 {
		return dialects.NewValueError(nil, dialects.ValueBadFormat, f.Name)
	}
	return nil
}

// foreignKeyCheck fails when rows of table do not match its foreign keys.
func foreignKeyCheck(ctx context.Context, tx bun.IDB, table string) error {
	var child, parent string
	var rowid sql.NullInt64
	var fkid int
	err := tx.QueryRowContext(ctx, `SELECT "table", rowid, parent, fkid FROM pragma_foreign_key_check(?)`, table).Scan(&child, &rowid, &parent, &fkid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return &dialects.ConstraintError{
		Kind: dialects.ConstraintForeignKey, Table: child,
		Message: fmt.Sprintf("records of %q do not match their foreign key to %q", child, parent),
	}
}
