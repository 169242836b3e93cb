package pgsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
)

// relations filters pg_class (as c, joined with pg_namespace as n) to the
// tables, partitioned tables, views, materialized views and foreign tables
// of the current schema, without partitions.
const relations = `n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition`

// Introspect reads the current schema (the first existing schema of
// search_path, normally public) from pg_catalog. Names are compared as
// stored, so mixed-case quoted names work. serial columns (a nextval
// default) and identity columns are auto increment. It needs
// PostgreSQL 12 or later.
func (Dialect) Introspect(ctx context.Context, db bun.IDB) (*dialects.Schema, error) {
	tables, byName, err := readTables(ctx, db)
	if err != nil {
		return nil, err
	}
	if err := readColumns(ctx, db, byName); err != nil {
		return nil, err
	}
	if err := readConstraints(ctx, db, byName); err != nil {
		return nil, err
	}
	if err := readIndexes(ctx, db, byName); err != nil {
		return nil, err
	}
	return dialects.NewSchema(tables), nil
}

func readTables(ctx context.Context, db bun.IDB) ([]*dialects.Table, map[string]*dialects.Table, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, c.relkind::text, COALESCE(ds.description, '')
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_description AS ds ON ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = 0
WHERE `+relations+` ORDER BY c.relname`)
	if err != nil {
		return nil, nil, fmt.Errorf("pgsql: list tables: %w", err)
	}
	defer rows.Close()
	var tables []*dialects.Table
	byName := map[string]*dialects.Table{}
	for rows.Next() {
		var name, kind, comment string
		if err := rows.Scan(&name, &kind, &comment); err != nil {
			return nil, nil, fmt.Errorf("pgsql: list tables: %w", err)
		}
		t := &dialects.Table{Name: name, IsView: kind == "v" || kind == "m", Comment: comment}
		tables = append(tables, t)
		byName[name] = t
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("pgsql: list tables: %w", err)
	}
	return tables, byName, nil
}

func readColumns(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table) error {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
	CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, 0) END, a.attidentity::text, a.attgenerated::text, COALESCE(ds.description, '')
FROM pg_attribute AS a
JOIN pg_class AS c ON c.oid = a.attrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_description AS ds ON ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = a.attnum
WHERE `+relations+` AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum`)
	if err != nil {
		return fmt.Errorf("pgsql: list columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			table, name, native, identity, generated, comment string
			notNull                                           bool
			dflt                                              sql.NullString
		)
		if err := rows.Scan(&table, &name, &native, &notNull, &dflt, &identity, &generated, &comment); err != nil {
			return fmt.Errorf("pgsql: list columns: %w", err)
		}
		t := byName[table]
		if t == nil {
			continue
		}
		c := &dialects.Column{
			Name:      name,
			Type:      dialects.SimpleType(native),
			DBType:    native,
			AllowNull: !notNull,
			Generated: generated != "",
			Comment:   comment,
		}
		c.Length, c.Precision, c.Scale = dialects.TypeSize(c.Type, native)
		switch {
		case identity == "a" || identity == "d":
			c.AutoIncrement = true
		case c.Generated:
		case dflt.Valid && strings.HasPrefix(dflt.String, "nextval("):
			c.AutoIncrement = true
		case dflt.Valid:
			c.Default, c.DefaultIsExpr = dialects.ParseDefault(dflt.String, false)
		}
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgsql: list columns: %w", err)
	}
	return nil
}

// nameList is the SQL for a JSON array of the names of attnums in a key
// column (conkey, confkey), in key order.
func nameList(keys, rel string) string {
	return `array_to_json(ARRAY(SELECT a.attname FROM unnest(` + keys + `) WITH ORDINALITY AS k(num, ord)
	JOIN pg_attribute AS a ON a.attrelid = ` + rel + ` AND a.attnum = k.num ORDER BY k.ord))::text`
}

var actions = map[string]string{
	"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT",
}

func readConstraints(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table) error {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, con.conname, con.contype::text, `+nameList("con.conkey", "con.conrelid")+`,
	COALESCE(CASE WHEN fn.nspname = current_schema() THEN fc.relname ELSE fn.nspname || '.' || fc.relname END, ''),
	`+nameList("con.confkey", "con.confrelid")+`, con.confupdtype::text, con.confdeltype::text
FROM pg_constraint AS con
JOIN pg_class AS c ON c.oid = con.conrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_class AS fc ON fc.oid = con.confrelid
LEFT JOIN pg_namespace AS fn ON fn.oid = fc.relnamespace
WHERE `+relations+` AND con.contype IN ('p', 'f')
ORDER BY c.relname, con.conname`)
	if err != nil {
		return fmt.Errorf("pgsql: list constraints: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, name, typ, cols, ref, refCols, onUpdate, onDelete string
		if err := rows.Scan(&table, &name, &typ, &cols, &ref, &refCols, &onUpdate, &onDelete); err != nil {
			return fmt.Errorf("pgsql: list constraints: %w", err)
		}
		t := byName[table]
		if t == nil {
			continue
		}
		var columns, refColumns []string
		if err := json.Unmarshal([]byte(cols), &columns); err != nil {
			return fmt.Errorf("pgsql: constraint %q columns: %w", name, err)
		}
		if err := json.Unmarshal([]byte(refCols), &refColumns); err != nil {
			return fmt.Errorf("pgsql: constraint %q columns: %w", name, err)
		}
		switch typ {
		case "p":
			t.PrimaryKey = columns
		case "f":
			t.ForeignKeys = append(t.ForeignKeys, dialects.ForeignKey{
				Name: name, Columns: columns, RefTable: ref, RefColumns: refColumns,
				OnDelete: actions[onDelete], OnUpdate: actions[onUpdate],
			})
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgsql: list constraints: %w", err)
	}
	return nil
}

// readIndexes reads unique constraints and indexes, skipping the primary
// key's index, expression indexes and partial indexes.
func readIndexes(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table) error {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, i.relname, ix.indisunique,
	array_to_json(ARRAY(SELECT a.attname FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(num, ord)
		JOIN pg_attribute AS a ON a.attrelid = ix.indrelid AND a.attnum = k.num
		WHERE k.ord <= ix.indnkeyatts ORDER BY k.ord))::text
FROM pg_index AS ix
JOIN pg_class AS c ON c.oid = ix.indrelid
JOIN pg_class AS i ON i.oid = ix.indexrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE `+relations+` AND NOT ix.indisprimary AND ix.indexprs IS NULL AND ix.indpred IS NULL
ORDER BY c.relname, i.relname`)
	if err != nil {
		return fmt.Errorf("pgsql: list indexes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			table, name, cols string
			unique            bool
		)
		if err := rows.Scan(&table, &name, &unique, &cols); err != nil {
			return fmt.Errorf("pgsql: list indexes: %w", err)
		}
		t := byName[table]
		if t == nil {
			continue
		}
		var columns []string
		if err := json.Unmarshal([]byte(cols), &columns); err != nil {
			return fmt.Errorf("pgsql: index %q columns: %w", name, err)
		}
		t.Indexes = append(t.Indexes, dialects.Index{Name: name, Columns: columns, Unique: unique})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgsql: list indexes: %w", err)
	}
	return nil
}
