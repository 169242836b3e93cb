package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
)

// Introspect reads the tables and views of DATABASE() from
// information_schema. AUTO_INCREMENT comes from EXTRA, tinyint(1) and bit(1)
// are boolean, and MariaDB's JSON columns (longtext with a json_valid
// check) are json. Functional index parts are skipped.
func (Dialect) Introspect(ctx context.Context, db bun.IDB) (*dialects.Schema, error) {
	var version string
	if err := db.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
		return nil, fmt.Errorf("mysql: version: %w", err)
	}
	maria := strings.Contains(strings.ToLower(version), "mariadb")
	tables, byName, err := readTables(ctx, db)
	if err != nil {
		return nil, err
	}
	var jsonCols map[[2]string]bool
	if maria {
		if jsonCols, err = readJSONChecks(ctx, db); err != nil {
			return nil, err
		}
	}
	if err := readColumns(ctx, db, byName, maria, jsonCols); err != nil {
		return nil, err
	}
	if err := readIndexes(ctx, db, byName); err != nil {
		return nil, err
	}
	if err := readForeignKeys(ctx, db, byName); err != nil {
		return nil, err
	}
	return dialects.NewSchema(tables), nil
}

func readTables(ctx context.Context, db bun.IDB) ([]*dialects.Table, map[string]*dialects.Table, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, TABLE_TYPE, COALESCE(TABLE_COMMENT, '')
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')
ORDER BY TABLE_NAME`)
	if err != nil {
		return nil, nil, fmt.Errorf("mysql: list tables: %w", err)
	}
	defer rows.Close()
	var tables []*dialects.Table
	byName := map[string]*dialects.Table{}
	for rows.Next() {
		var name, typ, comment string
		if err := rows.Scan(&name, &typ, &comment); err != nil {
			return nil, nil, fmt.Errorf("mysql: list tables: %w", err)
		}
		t := &dialects.Table{Name: name, IsView: typ == "VIEW"}
		if !t.IsView {
			t.Comment = comment
		}
		tables = append(tables, t)
		byName[name] = t
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("mysql: list tables: %w", err)
	}
	return tables, byName, nil
}

var jsonValid = regexp.MustCompile("^(?i)json_valid\\(`((?:[^`]|``)+)`\\)$")

// readJSONChecks finds MariaDB's JSON columns: JSON is an alias of longtext
// there, marked by a CHECK (json_valid(`col`)) constraint.
func readJSONChecks(ctx context.Context, db bun.IDB) (map[[2]string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE()`)
	if err != nil {
		return nil, fmt.Errorf("mysql: list checks: %w", err)
	}
	defer rows.Close()
	found := map[[2]string]bool{}
	for rows.Next() {
		var table, clause string
		if err := rows.Scan(&table, &clause); err != nil {
			return nil, fmt.Errorf("mysql: list checks: %w", err)
		}
		if m := jsonValid.FindStringSubmatch(strings.TrimSpace(clause)); m != nil {
			found[[2]string{table, strings.ReplaceAll(m[1], "``", "`")}] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: list checks: %w", err)
	}
	return found, nil
}

func readColumns(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table, maria bool, jsonCols map[[2]string]bool) error {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COALESCE(COLUMN_COMMENT, '')
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE()
ORDER BY TABLE_NAME, ORDINAL_POSITION`)
	if err != nil {
		return fmt.Errorf("mysql: list columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			table, name, native, nullable, extra, comment string
			dflt                                          sql.NullString
		)
		if err := rows.Scan(&table, &name, &native, &nullable, &dflt, &extra, &comment); err != nil {
			return fmt.Errorf("mysql: list columns: %w", err)
		}
		t := byName[table]
		if t == nil {
			continue
		}
		x := strings.ToUpper(extra)
		c := &dialects.Column{
			Name:          name,
			Type:          dialects.SimpleType(native),
			DBType:        native,
			AllowNull:     nullable == "YES",
			AutoIncrement: strings.Contains(x, "AUTO_INCREMENT"),
			Generated:     strings.Contains(x, "VIRTUAL") || strings.Contains(x, "STORED") || strings.Contains(x, "PERSISTENT"),
			Comment:       comment,
		}
		if jsonCols[[2]string{table, name}] {
			c.Type = dialects.TypeJSON
		}
		c.Length, c.Precision, c.Scale = dialects.TypeSize(c.Type, native)
		if dflt.Valid && !c.AutoIncrement && !c.Generated {
			switch {
			case maria:
				// MariaDB quotes literals and writes a nullable column's
				// absent default as NULL.
				c.Default, c.DefaultIsExpr = dialects.ParseDefault(dflt.String, true)
			case strings.Contains(x, "DEFAULT_GENERATED"):
				c.Default, c.DefaultIsExpr = dialects.ParseDefault(dflt.String, true)
			default:
				// MySQL writes literals without quotes.
				v := dflt.String
				c.Default = &v
			}
		}
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql: list columns: %w", err)
	}
	return nil
}

func readIndexes(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table) error {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE()
ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`)
	if err != nil {
		return fmt.Errorf("mysql: list indexes: %w", err)
	}
	defer rows.Close()
	type key struct{ table, index string }
	var order []key
	found := map[key]*dialects.Index{}
	skip := map[key]bool{}
	for rows.Next() {
		var (
			table, index string
			nonUnique    int
			col          sql.NullString
		)
		if err := rows.Scan(&table, &index, &nonUnique, &col); err != nil {
			return fmt.Errorf("mysql: list indexes: %w", err)
		}
		k := key{table, index}
		if !col.Valid {
			skip[k] = true // functional key part
		}
		ix := found[k]
		if ix == nil {
			ix = &dialects.Index{Name: index, Unique: nonUnique == 0}
			found[k] = ix
			order = append(order, k)
		}
		ix.Columns = append(ix.Columns, col.String)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql: list indexes: %w", err)
	}
	for _, k := range order {
		t := byName[k.table]
		if t == nil || skip[k] {
			continue
		}
		if k.index == "PRIMARY" {
			t.PrimaryKey = found[k].Columns
			continue
		}
		t.Indexes = append(t.Indexes, *found[k])
	}
	return nil
}

func readForeignKeys(ctx context.Context, db bun.IDB, byName map[string]*dialects.Table) error {
	// Two queries joined here: MariaDB evaluates a join of these two views
	// row by row, thirty times slower.
	type key struct{ table, name string }
	rules := map[key][2]string{}
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE
FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()`)
	if err != nil {
		return fmt.Errorf("mysql: list foreign keys: %w", err)
	}
	for rows.Next() {
		var table, name, onUpdate, onDelete string
		if err := rows.Scan(&table, &name, &onUpdate, &onDelete); err != nil {
			rows.Close()
			return fmt.Errorf("mysql: list foreign keys: %w", err)
		}
		rules[key{table, name}] = [2]string{onUpdate, onDelete}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql: list foreign keys: %w", err)
	}
	rows, err = db.QueryContext(ctx, `SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME,
	CASE WHEN REFERENCED_TABLE_SCHEMA = DATABASE() THEN REFERENCED_TABLE_NAME
		ELSE CONCAT(REFERENCED_TABLE_SCHEMA, '.', REFERENCED_TABLE_NAME) END,
	REFERENCED_COLUMN_NAME
FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL
ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`)
	if err != nil {
		return fmt.Errorf("mysql: list foreign keys: %w", err)
	}
	defer rows.Close()
	var order []key
	found := map[key]*dialects.ForeignKey{}
	for rows.Next() {
		var table, name, col, ref, refCol string
		if err := rows.Scan(&table, &name, &col, &ref, &refCol); err != nil {
			return fmt.Errorf("mysql: list foreign keys: %w", err)
		}
		k := key{table, name}
		fk := found[k]
		if fk == nil {
			r := rules[k]
			fk = &dialects.ForeignKey{Name: name, RefTable: ref, OnUpdate: r[0], OnDelete: r[1]}
			found[k] = fk
			order = append(order, k)
		}
		fk.Columns = append(fk.Columns, col)
		fk.RefColumns = append(fk.RefColumns, refCol)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql: list foreign keys: %w", err)
	}
	for _, k := range order {
		if t := byName[k.table]; t != nil {
			t.ForeignKeys = append(t.ForeignKeys, *found[k])
		}
	}
	return nil
}
