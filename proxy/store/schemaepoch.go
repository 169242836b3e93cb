package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// schemaEpochPrefix starts the names of the settings that hold each
// database service's schema epoch.
const schemaEpochPrefix = "schema_epoch."

func schemaEpochName(serviceID int64) string {
	return schemaEpochPrefix + strconv.FormatInt(serviceID, 10)
}

// BumpSchemaEpoch records that the structure of the database behind the
// service with serviceID changed (a table created, altered or dropped
// through the API): it gives the service a new schema epoch and bumps the
// configuration version, so that every instance loads a snapshot whose
// [Snapshot.SchemaEpoch] moved and its backend forgets the introspected
// schema.
func BumpSchemaEpoch(ctx context.Context, db bun.IDB, serviceID int64) error {
	name := schemaEpochName(serviceID)
	bump := func() error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			value := NewSecret(8)
			res, err := tx.NewUpdate().Model((*Setting)(nil)).Set("value = ?", value).Where("name = ?", name).Exec(ctx)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err == nil && n == 0 {
				if _, err := tx.NewInsert().Model(&Setting{Name: name, Value: value}).Exec(ctx); err != nil {
					return err
				}
			}
			return Touch(ctx, tx)
		})
	}
	err := bump()
	if err != nil {
		// Another instance inserted the same epoch row at the same time.
		err = bump()
	}
	if err != nil {
		return fmt.Errorf("store: bump schema epoch: %w", err)
	}
	return nil
}

// SchemaEpoch returns the schema epoch of the service with id: an opaque
// text that changes whenever [BumpSchemaEpoch] runs for it ("" before the
// first change).
func (s *Snapshot) SchemaEpoch(serviceID int64) string {
	if s == nil {
		return ""
	}
	return s.schemaEpochs[serviceID]
}

// loadSchemaEpochs reads every service's schema epoch.
func (s *Snapshot) loadSchemaEpochs(ctx context.Context, db bun.IDB) error {
	var settings []*Setting
	if err := db.NewSelect().Model(&settings).Where("name LIKE ?", schemaEpochPrefix+"%").Scan(ctx); err != nil && !isNoRows(err) {
		return fmt.Errorf("schema epochs: %w", err)
	}
	s.schemaEpochs = make(map[int64]string, len(settings))
	for _, st := range settings {
		id, err := strconv.ParseInt(strings.TrimPrefix(st.Name, schemaEpochPrefix), 10, 64)
		if err == nil && strings.HasPrefix(st.Name, schemaEpochPrefix) {
			s.schemaEpochs[id] = st.Value
		}
	}
	return nil
}
