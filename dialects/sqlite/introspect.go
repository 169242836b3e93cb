package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
)

// userObjects filters sqlite_master (as m) to the tables and views of the
// main database, without SQLite's own (sqlite_*).
const userObjects = `m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'`

// Introspect reads the tables and views of the main database from
// sqlite_master and the pragma table functions (table_xinfo,
// foreign_key_list, index_list, index_info). A single-column INTEGER
// PRIMARY KEY of a rowid table is the rowid's alias and counts as auto
// increment, unless it is also a foreign key (a child's key that the
// writer supplies, as in a one-to-one extension table). Views whose definition no longer resolves are listed without
// columns.
func (Dialect) Introspect(ctx context.Context, db bun.IDB) (*dialects.Schema, error) {
	tables, err := readTables(ctx, db)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*dialects.Table, len(tables))
	for _, t := range tables {
		byName[t.Name] = t
	}
	pkIndex := map[string]bool{} // tables with an origin='pk' index (not rowid aliases)
	if err := readIndexes(ctx, db, byName, pkIndex); err != nil {
		return nil, err
	}
	if err := readColumns(ctx, db, tables, byName); err != nil {
		return nil, err
	}
	if err := readForeignKeys(ctx, db, byName); err != nil {
		return nil, err
	}
	for _, t := range tables {
		if len(t.PrimaryKey) == 1 && !pkIndex[t.Name] && !inForeignKey(t, t.PrimaryKey[0]) {
			if c := t.Column(t.PrimaryKey[0]); c != nil && strings.EqualFold(strings.TrimSpace(c.DBType), "INTEGER") {
				c.AutoIncrement = true
				c.Default = nil
			}
		}
	}
	return dialects.NewSchema(tables), nil
}

func readTables(ctx context.Context, db bun.IDB) ([]*dialects.Table, error) {
	rows, err := db.QueryContext(ctx, `SELECT m.name, m.type FROM sqlite_master AS m WHERE `+userObjects+` ORDER BY m.name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tables: %w", err)
	}
	defer rows.Close()
	var tables []*dialects.Table
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, fmt.Errorf("sqlite: list tables: %w", err)
		}
		tables = append(tables, &dialects.Table{Name: name, IsView: typ == "view"})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list tables: %w", err)
	}
	return tables, nil
}

type pragmaColumn struct {
	cid     int
	name    string
	decl    string
	notNull bool
	dflt    sql.NullString
	pk      int
	hidden  int
}

func scanColumn(rows *sql.Rows, prefix ...any) (pragmaColumn, error) {
	var c pragmaColumn
	err := rows.Scan(append(prefix, &c.cid, &c.name, &c.decl, &c.notNull, &c.dflt, &c.pk, &c.hidden)...)
	return c, err
}

const columnCols = `p.cid, p.name, p.type, p."notnull", p.dflt_value, p.pk, p.hidden`

// readColumns reads every column in one query; when a broken view makes
// that fail it falls back to one query per table and skips the views that
// cannot be read.
func readColumns(ctx context.Context, db bun.IDB, tables []*dialects.Table, byName map[string]*dialects.Table) error {
	pks := map[string][]pragmaColumn{}
	add := func(table string, c pragmaColumn) {
		t := byName[table]
		if t == nil || c.hidden == 1 { // hidden columns of virtual tables
			return
		}
		t.Columns = append(t.Columns, buildColumn(c))
		if c.pk > 0 {
			pks[table] = append(pks[table], c)
		}
	}
	err := func() error {
		rows, err := db.QueryContext(ctx, `SELECT m.name, `+columnCols+
			` FROM sqlite_master AS m JOIN pragma_table_xinfo(m.name) AS p WHERE `+userObjects+` ORDER BY m.name, p.cid`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var table string
			c, err := scanColumn(rows, &table)
			if err != nil {
				return err
			}
			add(table, c)
		}
		return rows.Err()
	}()
	if err != nil {
		for _, t := range tables {
			t.Columns = nil
		}
		clear(pks)
		for _, t := range tables {
			cols, err := tableColumns(ctx, db, t.Name)
			if err != nil {
				if t.IsView {
					continue
				}
				return fmt.Errorf("sqlite: columns of %q: %w", t.Name, err)
			}
			for _, c := range cols {
				add(t.Name, c)
			}
		}
	}
	for table, cols := range pks {
		t := byName[table]
		t.PrimaryKey = make([]string, len(cols))
		for _, c := range cols {
			if c.pk <= len(cols) {
				t.PrimaryKey[c.pk-1] = c.name
			}
		}
	}
	return nil
}

// tableColumns returns the raw pragma columns of one table.
func tableColumns(ctx context.Context, db bun.IDB, table string) ([]pragmaColumn, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+columnCols+` FROM pragma_table_xinfo(?) AS p ORDER BY p.cid`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []pragmaColumn
	for rows.Next() {
		c, err := scanColumn(rows)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

func buildColumn(p pragmaColumn) *dialects.Column {
	c := &dialects.Column{
		Name:   p.name,
		Type:   dialects.SimpleType(p.decl),
		DBType: p.decl,
		// SQLite lets a rowid table's non-INTEGER primary key hold NULL (a
		// historical bug it keeps); like the other engines, a key column is
		// reported as not null.
		AllowNull: !p.notNull && p.pk == 0,
		Generated: p.hidden == 2 || p.hidden == 3,
	}
	c.Length, c.Precision, c.Scale = dialects.TypeSize(c.Type, p.decl)
	if p.dflt.Valid {
		c.Default, c.DefaultIsExpr = dialects.ParseDefault(p.dflt.String, false)
	}
	return c
}

func readIndexes(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table, pkIndex map[string]bool) error {
	rows, err := db.QueryContext(ctx, `SELECT m.name, il.name, il."unique", il.origin, il.partial, ii.cid, ii.name
FROM sqlite_master AS m JOIN pragma_index_list(m.name) AS il JOIN pragma_index_info(il.name) AS ii
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY m.name, il.name, ii.seqno`)
	if err != nil {
		return fmt.Errorf("sqlite: list indexes: %w", err)
	}
	defer rows.Close()
	type key struct{ table, index string }
	skip := map[key]bool{}
	var order []key
	found := map[key]*dialects.Index{}
	for rows.Next() {
		var (
			table, index, origin string
			unique, partial      bool
			cid                  int
			col                  sql.NullString
		)
		if err := rows.Scan(&table, &index, &unique, &origin, &partial, &cid, &col); err != nil {
			return fmt.Errorf("sqlite: list indexes: %w", err)
		}
		k := key{table, index}
		if origin == "pk" {
			pkIndex[table] = true
			skip[k] = true
		}
		if partial || cid < 0 || !col.Valid {
			skip[k] = true // partial and expression indexes are not reported
		}
		ix := found[k]
		if ix == nil {
			ix = &dialects.Index{Name: index, Unique: unique}
			found[k] = ix
			order = append(order, k)
		}
		ix.Columns = append(ix.Columns, col.String)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: list indexes: %w", err)
	}
	for _, k := range order {
		if t := byName[k.table]; t != nil && !skip[k] {
			t.Indexes = append(t.Indexes, *found[k])
		}
	}
	return nil
}

func readForeignKeys(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table) error {
	rows, err := db.QueryContext(ctx, `SELECT m.name, f.id, f."table", f."from", f."to", f.on_update, f.on_delete
FROM sqlite_master AS m JOIN pragma_foreign_key_list(m.name) AS f
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY m.name, f.id, f.seq`)
	if err != nil {
		return fmt.Errorf("sqlite: list foreign keys: %w", err)
	}
	defer rows.Close()
	type key struct {
		table string
		id    int
	}
	var order []key
	found := map[key]*dialects.ForeignKey{}
	for rows.Next() {
		var (
			table, ref, from, onUpdate, onDelete string
			id                                   int
			to                                   sql.NullString
		)
		if err := rows.Scan(&table, &id, &ref, &from, &to, &onUpdate, &onDelete); err != nil {
			return fmt.Errorf("sqlite: list foreign keys: %w", err)
		}
		k := key{table, id}
		fk := found[k]
		if fk == nil {
			fk = &dialects.ForeignKey{RefTable: ref, OnUpdate: onUpdate, OnDelete: onDelete}
			found[k] = fk
			order = append(order, k)
		}
		fk.Columns = append(fk.Columns, from)
		if to.Valid {
			fk.RefColumns = append(fk.RefColumns, to.String)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: list foreign keys: %w", err)
	}
	for _, k := range order {
		t := byName[k.table]
		if t == nil {
			continue
		}
		fk := found[k]
		if len(fk.RefColumns) != len(fk.Columns) {
			fk.RefColumns = nil // the parent's primary key, resolved by NewSchema
		}
		fk.Name = dialects.ForeignKeyName(t.Name, fk.Columns)
		t.ForeignKeys = append(t.ForeignKeys, *fk)
	}
	return nil
}

func inForeignKey(t *dialects.Table, col string) bool {
	for _, fk := range t.ForeignKeys {
		for _, c := range fk.Columns {
			if strings.EqualFold(c, col) {
				return true
			}
		}
	}
	return false
}
