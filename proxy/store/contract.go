package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// Schema contract values.
const (
	ContractModeNone   = "none"
	ContractModeAuto   = "auto"
	ContractModeStrict = "strict"

	EnforcementOff           = "off"
	EnforcementShapeResponse = "shape_response"
	EnforcementStrict        = "strict"

	SnapshotActive   = "active"
	SnapshotArchived = "archived"
)

// ContractSettings returns the schema-contract settings of a service, or
// nil when it has none (mode none).
func ContractSettings(ctx context.Context, db bun.IDB, serviceID int64) (*SchemaContract, error) {
	var c SchemaContract
	err := db.NewSelect().Model(&c).Where("service_id = ?", serviceID).Scan(ctx)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read contract settings: %w", err)
	}
	return &c, nil
}

// ActiveSnapshot returns the active snapshot of a table, or nil.
func ActiveSnapshot(ctx context.Context, db bun.IDB, serviceID int64, table string) (*SchemaSnapshot, error) {
	var s SchemaSnapshot
	err := db.NewSelect().Model(&s).
		Where("service_id = ? AND table_name = ? AND status = ?", serviceID, table, SnapshotActive).
		Order("contract_version DESC").Limit(1).Scan(ctx)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read active snapshot: %w", err)
	}
	return &s, nil
}

// Snapshots returns the snapshots of a service (of one table when table is
// not ""), newest version first within each table, tables by name.
func Snapshots(ctx context.Context, db bun.IDB, serviceID int64, table string) ([]*SchemaSnapshot, error) {
	var out []*SchemaSnapshot
	q := db.NewSelect().Model(&out).Where("service_id = ?", serviceID)
	if table != "" {
		q = q.Where("table_name = ?", table)
	}
	if err := q.Order("table_name", "contract_version DESC").Scan(ctx); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("store: read snapshots: %w", err)
	}
	return out, nil
}

// SaveSnapshot makes s the active snapshot of its table in one
// transaction: the active one (if any) is archived, s gets the next
// version (one more than any version the table ever had, so versions never
// repeat across unlock and relock), archived versions beyond retention
// (nil: keep all) are deleted, and the configuration version is bumped so
// every instance sees the change. It returns the snapshot it archived.
func SaveSnapshot(ctx context.Context, db bun.IDB, s *SchemaSnapshot, retention *int) (archived *SchemaSnapshot, err error) {
	err = inTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		prev, err := ActiveSnapshot(ctx, tx, s.ServiceID, s.TableName)
		if err != nil {
			return err
		}
		if prev != nil {
			if err := archive(ctx, tx, prev); err != nil {
				return err
			}
			archived = prev
		}
		var max int
		if err := tx.NewSelect().Model((*SchemaSnapshot)(nil)).ColumnExpr("COALESCE(MAX(contract_version), 0)").
			Where("service_id = ? AND table_name = ?", s.ServiceID, s.TableName).Scan(ctx, &max); err != nil {
			return fmt.Errorf("store: next contract version: %w", err)
		}
		s.ContractVersion = max + 1
		s.Status = SnapshotActive
		s.CreatedDate, s.LastModifiedDate = now(), now()
		if _, err := tx.NewInsert().Model(s).Exec(ctx); err != nil {
			return fmt.Errorf("store: write snapshot: %w", err)
		}
		if archived != nil && retention != nil {
			if _, err := PruneSnapshots(ctx, tx, s.ServiceID, s.TableName, *retention, false); err != nil {
				return err
			}
		}
		return Touch(ctx, tx)
	})
	return archived, err
}

func archive(ctx context.Context, db bun.IDB, s *SchemaSnapshot) error {
	s.Status, s.LastModifiedDate = SnapshotArchived, now()
	if _, err := db.NewUpdate().Model(s).Column("status", "last_modified_date").WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("store: archive snapshot: %w", err)
	}
	return nil
}

// ArchiveActive archives the active snapshots of a service (of one table
// when table is not "") and bumps the configuration version; the rows are
// kept as history. It returns what it archived.
func ArchiveActive(ctx context.Context, db bun.IDB, serviceID int64, table string, retention *int) ([]*SchemaSnapshot, error) {
	var done []*SchemaSnapshot
	err := inTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var active []*SchemaSnapshot
		q := tx.NewSelect().Model(&active).Where("service_id = ? AND status = ?", serviceID, SnapshotActive)
		if table != "" {
			q = q.Where("table_name = ?", table)
		}
		if err := q.Order("table_name").Scan(ctx); err != nil && !isNoRows(err) {
			return fmt.Errorf("store: read active snapshots: %w", err)
		}
		for _, s := range active {
			if err := archive(ctx, tx, s); err != nil {
				return err
			}
			if retention != nil {
				if _, err := PruneSnapshots(ctx, tx, serviceID, s.TableName, *retention, false); err != nil {
					return err
				}
			}
		}
		done = active
		if len(active) == 0 {
			return nil
		}
		return Touch(ctx, tx)
	})
	return done, err
}

// PruneSnapshots deletes the archived snapshots of a table beyond the
// newest keep ones (only reports them when dryRun) and returns their
// versions, oldest first.
func PruneSnapshots(ctx context.Context, db bun.IDB, serviceID int64, table string, keep int, dryRun bool) ([]int, error) {
	var archived []*SchemaSnapshot
	if err := db.NewSelect().Model(&archived).Column("id", "contract_version").
		Where("service_id = ? AND table_name = ? AND status = ?", serviceID, table, SnapshotArchived).
		Order("contract_version DESC").Scan(ctx); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("store: read archived snapshots: %w", err)
	}
	if keep < 0 {
		keep = 0
	}
	if len(archived) <= keep {
		return nil, nil
	}
	gone := archived[keep:]
	ids := make([]int64, len(gone))
	versions := make([]int, len(gone))
	for i, s := range gone {
		ids[i], versions[i] = s.ID, s.ContractVersion
	}
	slices.Sort(versions)
	if dryRun {
		return versions, nil
	}
	if _, err := db.NewDelete().Model((*SchemaSnapshot)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: delete archived snapshots: %w", err)
	}
	return versions, nil
}

// inTx runs fn in a transaction of db, or in db itself when it already is
// one.
func inTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	if tx, ok := db.(bun.Tx); ok {
		return fn(ctx, tx)
	}
	return db.RunInTx(ctx, nil, fn)
}

// contractKey names a table of a service.
type contractKey struct {
	serviceID int64
	table     string
}

func (s *Snapshot) indexContracts() {
	s.contracts = make(map[int64]*SchemaContract, len(s.SchemaContracts))
	for _, c := range s.SchemaContracts {
		s.contracts[c.ServiceID] = c
	}
	s.contractSnapshots = make(map[contractKey]*SchemaSnapshot, len(s.ContractSnapshots))
	for _, c := range s.ContractSnapshots {
		s.contractSnapshots[contractKey{c.ServiceID, strings.ToLower(c.TableName)}] = c
	}
}

// ContractSettings returns the schema-contract settings of a service in
// force, or nil (mode none, enforcement off).
func (s *Snapshot) ContractSettings(serviceID int64) *SchemaContract { return s.contracts[serviceID] }

// ContractSnapshot returns the active snapshot of a table in force
// (table names match case-insensitively), or nil.
func (s *Snapshot) ContractSnapshot(serviceID int64, table string) *SchemaSnapshot {
	if len(s.contractSnapshots) == 0 {
		return nil
	}
	return s.contractSnapshots[contractKey{serviceID, strings.ToLower(table)}]
}

// WithContracts returns a copy of s holding the given contract settings
// and active snapshots instead of its own, for programs that embed
// Portcullis without a system database (and for tests).
func (s *Snapshot) WithContracts(settings []*SchemaContract, active []*SchemaSnapshot) *Snapshot {
	c := *s
	c.SchemaContracts, c.ContractSnapshots = settings, active
	c.indexContracts()
	return &c
}
