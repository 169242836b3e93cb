package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// FieldExtra keeps what DreamFactory keeps about a database field beyond
// the database's own schema (its db_field_extras): the label, the
// validation rules and the picklist a client sent in a _schema field
// object, returned with the field from then on. Validation and Picklist
// hold JSON ("" when none was sent).
type FieldExtra struct {
	bun.BaseModel `bun:"table:db_field_extras"`

	ID         int64  `bun:"id,pk,autoincrement"`
	ServiceID  int64  `bun:"service_id,notnull"`
	TableName  string `bun:"table_name,notnull,type:varchar(255)"`
	FieldName  string `bun:"field_name,notnull,type:varchar(255)"`
	Label      string `bun:"label,notnull,type:varchar(255),default:''"`
	Validation string `bun:"validation,type:text"`
	Picklist   string `bun:"picklist,type:text"`
}

// Empty reports whether e keeps nothing.
func (e *FieldExtra) Empty() bool { return e.Label == "" && e.Validation == "" && e.Picklist == "" }

// FieldExtras returns the extras of a service's fields, by table and
// field name as stored.
func (s *Store) FieldExtras(ctx context.Context, serviceID int64) (map[string]map[string]*FieldExtra, error) {
	var rows []*FieldExtra
	if err := s.DB.NewSelect().Model(&rows).Where("service_id = ?", serviceID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("store: read field extras: %w", err)
	}
	out := map[string]map[string]*FieldExtra{}
	for _, r := range rows {
		if out[r.TableName] == nil {
			out[r.TableName] = map[string]*FieldExtra{}
		}
		out[r.TableName][r.FieldName] = r
	}
	return out, nil
}

// SaveFieldExtras replaces the extras of the fields named in extras (an
// empty one deletes the field's row), in one transaction.
func (s *Store) SaveFieldExtras(ctx context.Context, extras []*FieldExtra) error {
	if len(extras) == 0 {
		return nil
	}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, e := range extras {
			if _, err := tx.NewDelete().Model((*FieldExtra)(nil)).
				Where("service_id = ? AND table_name = ? AND field_name = ?", e.ServiceID, e.TableName, e.FieldName).Exec(ctx); err != nil {
				return err
			}
			if e.Empty() {
				continue
			}
			row := *e
			row.ID = 0
			if _, err := tx.NewInsert().Model(&row).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: save field extras: %w", err)
	}
	return nil
}

// DeleteFieldExtras forgets the extras of a table's fields (all of them
// when fields is empty).
func (s *Store) DeleteFieldExtras(ctx context.Context, serviceID int64, table string, fields ...string) error {
	q := s.DB.NewDelete().Model((*FieldExtra)(nil)).Where("service_id = ? AND table_name = ?", serviceID, table)
	if len(fields) > 0 {
		q = q.Where("field_name IN (?)", bun.List(fields))
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("store: delete field extras: %w", err)
	}
	return nil
}
