package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/internal/plan"
)

var _ dialects.TableAlterer = Dialect{}

// CheckCreateTable implements [dialects.TableAlterer].
func (Dialect) CheckCreateTable(s *dialects.Schema, spec dialects.TableSpec) error {
	spec, err := plan.Create(s, spec)
	for _, f := range spec.Fields {
		err = checkField(f, err)
	}
	return err
}

// CheckAlterTable implements [dialects.TableAlterer].
func (Dialect) CheckAlterTable(s *dialects.Schema, table string, changes dialects.TableChanges) error {
	_, err := planAlter(s, table, changes)
	return err
}

// AlterTable implements [dialects.TableAlterer]: the changes are checked
// as AddColumn, AlterColumn and DropColumn check them, then made by one
// ALTER TABLE, which InnoDB completes or undoes as a whole.
func (d Dialect) AlterTable(ctx context.Context, db bun.IDB, table string, changes dialects.TableChanges) error {
	if changes.Empty() {
		return nil
	}
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return err
	}
	a, err := planAlter(s, table, changes)
	if err != nil {
		return err
	}
	// What MySQL would do silently (fill a NOT NULL column with zeros,
	// report NULLs as truncated data) is refused as the other engines
	// refuse it.
	for _, f := range a.filled {
		var one int
		if err := db.QueryRowContext(ctx, "SELECT 1 FROM "+quote(a.table.Name)+" LIMIT 1").Scan(&one); err == nil {
			return dialects.NewConstraintError(nil, dialects.ConstraintNotNull, a.table.Name, "", f, "", false)
		}
	}
	for _, c := range a.notNull {
		var one int
		if err := db.QueryRowContext(ctx, "SELECT 1 FROM "+quote(a.table.Name)+" WHERE "+quote(c)+" IS NULL LIMIT 1").Scan(&one); err == nil {
			return dialects.NewConstraintError(nil, dialects.ConstraintNotNull, a.table.Name, "", c, "", false)
		}
	}
	_, err = db.ExecContext(ctx, "ALTER TABLE "+quote(a.table.Name)+" "+strings.Join(a.parts, ", "))
	return d.ClassifyError(err)
}

// alterPlan is a checked set of changes.
type alterPlan struct {
	table *dialects.Table
	parts []string
	// filled are new NOT NULL columns without a default (the table must
	// be empty); notNull are columns becoming NOT NULL (they must hold no
	// NULL).
	filled  []string
	notNull []string
}

// planAlter checks changes against s and returns the clauses of the
// ALTER TABLE. Errors that are not a list of problems (a missing table or
// column, a column other tables reference) are returned as they are;
// problems are collected into one *SpecError.
func planAlter(s *dialects.Schema, table string, ch dialects.TableChanges) (*alterPlan, error) {
	var problems []string
	add := func(err error) error {
		if err == nil {
			return nil
		}
		var se *dialects.SpecError
		if errors.As(err, &se) {
			problems = append(problems, se.Problems...)
			return nil
		}
		return err
	}
	seen := map[string]bool{}
	for _, names := range [][]string{ch.Drop, fieldNames(ch.Alter), fieldNames(ch.Add)} {
		for _, n := range names {
			k := strings.ToLower(n)
			if seen[k] {
				problems = append(problems, fmt.Sprintf("field %q is changed twice", n))
			}
			seen[k] = true
		}
	}
	a := &alterPlan{}
	droppedFK := map[string]bool{}
	droppedIx := map[string]bool{}
	var drops []string
	for _, name := range ch.Drop {
		t, c, err := plan.DropColumn(s, table, name)
		if err = add(err); err != nil {
			return nil, err
		}
		if t == nil || c == nil {
			continue
		}
		a.table = t
		for _, fk := range t.ForeignKeys {
			if containsFold(fk.Columns, c.Name) && !droppedFK[fk.Name] {
				droppedFK[fk.Name] = true
				a.parts = append(a.parts, "DROP FOREIGN KEY "+quote(fk.Name))
			}
		}
		for _, ix := range t.Indexes {
			if len(ix.Columns) > 1 && containsFold(ix.Columns, c.Name) && !droppedIx[ix.Name] {
				droppedIx[ix.Name] = true
				a.parts = append(a.parts, "DROP INDEX "+quote(ix.Name))
			}
		}
		drops = append(drops, "DROP COLUMN "+quote(c.Name))
	}
	a.parts = append(a.parts, drops...)
	for _, field := range ch.Alter {
		t, c, f, err := plan.AlterColumn(s, table, field)
		if t != nil && c != nil {
			err = checkField(f, err)
		}
		if err = add(err); err != nil {
			return nil, err
		}
		if t == nil || c == nil {
			continue
		}
		a.table = t
		a.parts = append(a.parts, "MODIFY COLUMN "+columnDef(f))
		if !f.AllowNull && c.AllowNull {
			a.notNull = append(a.notNull, c.Name)
		}
		if f.IsUnique && !c.IsUnique && !c.IsPrimaryKey {
			a.parts = append(a.parts, "ADD "+uniqueKey(t.Name, c.Name))
		}
		if f.IsIndex && !c.IsIndex && !f.IsUnique && !c.IsPrimaryKey {
			a.parts = append(a.parts, "ADD "+plainKey(t.Name, c.Name))
		}
		if f.IsForeignKey() && !c.IsForeignKey {
			a.parts = append(a.parts, "ADD "+fieldFK(t.Name, f))
		}
	}
	for _, field := range ch.Add {
		t, f, err := plan.AddColumn(s, table, field)
		if t != nil {
			err = checkField(f, err)
		}
		if err = add(err); err != nil {
			return nil, err
		}
		if t == nil {
			continue
		}
		a.table = t
		a.parts = append(a.parts, "ADD COLUMN "+columnDef(f))
		if !f.AllowNull && f.Default == nil && !f.AutoIncrement {
			a.filled = append(a.filled, f.Name)
		}
		if f.IsPrimaryKey {
			a.parts = append(a.parts, "ADD PRIMARY KEY ("+quote(f.Name)+")")
		}
		if f.IsUnique && !f.IsPrimaryKey {
			a.parts = append(a.parts, "ADD "+uniqueKey(t.Name, f.Name))
		}
		if f.IsIndex && !f.IsUnique && !f.IsPrimaryKey {
			a.parts = append(a.parts, "ADD "+plainKey(t.Name, f.Name))
		}
		if f.IsForeignKey() {
			a.parts = append(a.parts, "ADD "+fieldFK(t.Name, f))
		}
	}
	if a.table != nil && len(ch.Add) == 0 && len(ch.Drop) >= len(a.table.Columns) {
		problems = append(problems, fmt.Sprintf("table %q would have no fields left; drop the table instead", a.table.Name))
	}
	if len(problems) > 0 {
		return nil, &dialects.SpecError{Problems: problems}
	}
	if a.table == nil {
		// Only reached with no changes: name the table anyway.
		t := s.Table(table)
		if t == nil {
			return nil, fmt.Errorf("table %q: %w", table, dialects.ErrNotFound)
		}
		a.table = t
	}
	return a, nil
}

func fieldNames(fs []dialects.FieldSpec) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}
