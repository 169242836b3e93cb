package system

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Schema contracts in a package: section "schema_contract", one record per
// service that has contract settings or snapshots, by service name:
//
//	{"service": "db", "mode": "strict", "runtime_enforcement": "shape_response",
//	 "archive_retention_count": 3, "enabled": true,
//	 "snapshots": [{"table_name": "contact", "contract_version": 2, "status": "active",
//	                "schema_hash": "…", "schema": {…}, …}, …]}
//
// mode "none" means the service has snapshots but no settings. Snapshots
// are every table's active one and its archived ones, newest first, as
// many as archive_retention_count keeps (all when it is null). They hold
// table shapes only, no credential, so secrets do not change them.
//
// An import keeps versions, statuses, hashes and dates, so that diff and
// enforcement behave as on the exporting instance. A service's settings
// that exist here are skipped (updated with overwrite=true); a table
// that has snapshots here keeps them when they already hold the
// package's active version (re-importing changes nothing), else is
// skipped, or with overwrite=true has its snapshots replaced by the
// package's.

// contracts exports the schema-contract settings and snapshots.
func (x *exporter) contracts(ctx context.Context) ([]object, error) {
	var settings []*store.SchemaContract
	if err := x.db.NewSelect().Model(&settings).Order("service_id").Scan(ctx); err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	bySvc := map[int64]*store.SchemaContract{}
	for _, s := range settings {
		bySvc[s.ServiceID] = s
	}
	out := []object{}
	for _, svc := range x.svcRecs {
		snaps, err := store.Snapshots(ctx, x.db, svc.ID, "")
		if err != nil {
			return nil, dbError(err)
		}
		set := bySvc[svc.ID]
		if set == nil && len(snaps) == 0 {
			continue
		}
		o := object{{"service", svc.Name}, {"mode", store.ContractModeNone}, {"runtime_enforcement", store.EnforcementOff},
			{"archive_retention_count", nil}, {"enabled", true}}
		var retention *int
		if set != nil {
			o.set("mode", set.Mode)
			o.set("runtime_enforcement", set.RuntimeEnforcement)
			o.set("archive_retention_count", set.ArchiveRetentionCount)
			o.set("enabled", set.Enabled)
			retention = set.ArchiveRetentionCount
		}
		list := []object{}
		archived := map[string]int{}
		for _, s := range snaps {
			if s.Status != store.SnapshotActive {
				if retention != nil && archived[s.TableName] >= *retention {
					continue
				}
				archived[s.TableName]++
			}
			schema := json.RawMessage(s.SchemaJSON)
			if !json.Valid(schema) {
				schema = json.RawMessage("null")
			}
			list = append(list, object{
				{"table_name", s.TableName}, {"table_catalog", optional(s.TableCatalog)}, {"table_schema", optional(s.TableSchema)},
				{"object_type", s.ObjectType}, {"contract_version", s.ContractVersion}, {"schema_hash", s.SchemaHash},
				{"status", s.Status}, {"created_date", s.CreatedDate.UTC().Format(time.RFC3339)},
				{"last_modified_date", s.LastModifiedDate.UTC().Format(time.RFC3339)}, {"schema", schema}})
		}
		o.set("snapshots", list)
		out = append(out, o)
	}
	return out, nil
}

// packageSnapshot is a snapshot as a package holds it.
type packageSnapshot struct {
	TableName        string          `json:"table_name"`
	TableCatalog     *string         `json:"table_catalog"`
	TableSchema      *string         `json:"table_schema"`
	ObjectType       string          `json:"object_type"`
	ContractVersion  int             `json:"contract_version"`
	SchemaHash       string          `json:"schema_hash"`
	Status           string          `json:"status"`
	CreatedDate      string          `json:"created_date"`
	LastModifiedDate string          `json:"last_modified_date"`
	Schema           json.RawMessage `json:"schema"`
}

// packageContract is a schema_contract record of a package.
type packageContract struct {
	Service               string            `json:"service"`
	Mode                  string            `json:"mode"`
	RuntimeEnforcement    string            `json:"runtime_enforcement"`
	ArchiveRetentionCount *int              `json:"archive_retention_count"`
	Enabled               *bool             `json:"enabled"`
	Snapshots             []packageSnapshot `json:"snapshots"`
}

// check validates a record and fills in defaults.
func (pc *packageContract) check() error {
	if pc.Mode == "" {
		pc.Mode = store.ContractModeNone
	}
	switch pc.Mode {
	case store.ContractModeNone, store.ContractModeAuto, store.ContractModeStrict:
	default:
		return apierr.BadRequest("Invalid mode '%s'. Must be one of: none, auto, strict", pc.Mode)
	}
	if pc.RuntimeEnforcement == "" {
		pc.RuntimeEnforcement = store.EnforcementOff
	}
	switch pc.RuntimeEnforcement {
	case store.EnforcementOff, store.EnforcementShapeResponse, store.EnforcementStrict:
	default:
		return apierr.BadRequest("Invalid runtime_enforcement '%s'. Must be one of: off, shape_response, strict", pc.RuntimeEnforcement)
	}
	if pc.ArchiveRetentionCount != nil && *pc.ArchiveRetentionCount < 0 {
		return apierr.BadRequest("archive_retention_count must be a non-negative integer or null.")
	}
	active := map[string]int{}
	versions := map[string]bool{}
	for i, s := range pc.Snapshots {
		switch {
		case strings.TrimSpace(s.TableName) == "":
			return apierr.BadRequest("snapshots[%d]: table_name is required.", i)
		case s.ContractVersion < 1:
			return apierr.BadRequest("snapshots[%d] (%s): contract_version must be 1 or more.", i, s.TableName)
		case s.Status != store.SnapshotActive && s.Status != store.SnapshotArchived:
			return apierr.BadRequest("snapshots[%d] (%s): status must be active or archived.", i, s.TableName)
		case s.SchemaHash == "" || len(s.Schema) == 0 || string(s.Schema) == "null" || !json.Valid(s.Schema):
			return apierr.BadRequest("snapshots[%d] (%s): schema_hash and schema are required.", i, s.TableName)
		}
		k := fmt.Sprintf("%s\x00%d", s.TableName, s.ContractVersion)
		if versions[k] {
			return apierr.BadRequest("snapshots[%d] (%s): version %d is listed twice.", i, s.TableName, s.ContractVersion)
		}
		versions[k] = true
		if s.Status == store.SnapshotActive {
			if active[s.TableName]++; active[s.TableName] > 1 {
				return apierr.BadRequest("snapshots[%d] (%s): a table has one active snapshot at most.", i, s.TableName)
			}
		}
	}
	return nil
}

// packageTime reads a date of a package; the zero time or a bad one is now.
func packageTime(s string, fallback time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	if t, err := time.Parse("2006-01-02 15:04:05", s); err == nil {
		return t.UTC()
	}
	return fallback
}

// schemaContract imports a schema_contract record; see the top of the
// file.
func (im *importer) schemaContract(f fields) error {
	var pc packageContract
	raw, _ := json.Marshal(f)
	if err := json.Unmarshal(raw, &pc); err != nil {
		return apierr.BadRequest("Invalid schema_contract record: %v", err)
	}
	if err := pc.check(); err != nil {
		return err
	}
	svcID, err := im.serviceID(pc.Service)
	if err != nil {
		return err
	}
	if svcID == 0 {
		im.log.warn("schema contract of service '%s' left out: the service does not exist here", pc.Service)
		return nil
	}
	ctx, tx := im.w.ctx, im.w.tx
	if err := im.contractSettings(svcID, &pc); err != nil {
		return err
	}
	byTable := map[string][]packageSnapshot{}
	var tables []string
	for _, s := range pc.Snapshots {
		if _, ok := byTable[s.TableName]; !ok {
			tables = append(tables, s.TableName)
		}
		byTable[s.TableName] = append(byTable[s.TableName], s)
	}
	for _, table := range tables {
		snaps := byTable[table]
		local, err := store.Snapshots(ctx, tx, svcID, table)
		if err != nil {
			return dbError(err)
		}
		if len(local) > 0 {
			if holdsActive(local, snaps) {
				im.log.notice("schema contract of %s.%s: already present; skipped", pc.Service, table)
				continue
			}
			if !im.overwrite {
				im.log.notice("schema contract of %s.%s: the table has other snapshots here; skipped (overwrite=true replaces them)", pc.Service, table)
				continue
			}
			if _, err := tx.NewDelete().Model((*store.SchemaSnapshot)(nil)).Where("service_id = ? AND table_name = ?", svcID, table).Exec(ctx); err != nil {
				return dbError(err)
			}
		}
		// Oldest first, so that ids grow with versions as they did there.
		sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].ContractVersion < snaps[j].ContractVersion })
		for _, s := range snaps {
			rec := &store.SchemaSnapshot{ServiceID: svcID, ServiceName: pc.Service, TableName: s.TableName,
				ObjectType: s.ObjectType, ContractVersion: s.ContractVersion, SchemaHash: s.SchemaHash,
				SchemaJSON: string(s.Schema), Status: s.Status}
			if rec.ObjectType == "" {
				rec.ObjectType = "table"
			}
			if s.TableCatalog != nil {
				rec.TableCatalog = *s.TableCatalog
			}
			if s.TableSchema != nil {
				rec.TableSchema = *s.TableSchema
			}
			rec.CreatedDate = packageTime(s.CreatedDate, im.w.now)
			rec.LastModifiedDate = packageTime(s.LastModifiedDate, rec.CreatedDate)
			rec.CreatedByID, rec.LastModifiedByID = callerID(ctx), callerID(ctx)
			if _, err := tx.NewInsert().Model(rec).Exec(ctx); err != nil {
				return dbError(err)
			}
		}
		im.log.created++
		im.log.notice("schema contract of %s.%s: %d snapshot(s) imported", pc.Service, table, len(snaps))
	}
	return nil
}

// holdsActive reports whether the local snapshots of a table already hold
// the package's active one (same version and hash), or, when the package
// has none active, all of its versions.
func holdsActive(local []*store.SchemaSnapshot, pkg []packageSnapshot) bool {
	have := map[int]string{}
	for _, s := range local {
		have[s.ContractVersion] = s.SchemaHash
	}
	anyActive := false
	for _, s := range pkg {
		if s.Status == store.SnapshotActive {
			anyActive = true
			if have[s.ContractVersion] != s.SchemaHash {
				return false
			}
		}
	}
	if anyActive {
		return true
	}
	for _, s := range pkg {
		if have[s.ContractVersion] != s.SchemaHash {
			return false
		}
	}
	return true
}

// contractSettings imports a service's settings: created when the service
// has none here, else skipped, or replaced with overwrite=true. Mode none
// creates nothing (and, with overwrite, removes the settings here).
func (im *importer) contractSettings(svcID int64, pc *packageContract) error {
	ctx, tx := im.w.ctx, im.w.tx
	cur, err := store.ContractSettings(ctx, tx, svcID)
	if err != nil {
		return dbError(err)
	}
	if cur != nil && !im.overwrite {
		im.log.notice("schema contract settings of '%s' already exist; skipped", pc.Service)
		return nil
	}
	if pc.Mode == store.ContractModeNone {
		if cur != nil {
			if _, err := tx.NewDelete().Model(cur).WherePK().Exec(ctx); err != nil {
				return dbError(err)
			}
			im.log.notice("schema contract settings of '%s' removed (mode none)", pc.Service)
		}
		return nil
	}
	enabled := true
	if pc.Enabled != nil {
		enabled = *pc.Enabled
	}
	rec := &store.SchemaContract{ServiceID: svcID, ServiceName: pc.Service, Mode: pc.Mode,
		RuntimeEnforcement: pc.RuntimeEnforcement, ArchiveRetentionCount: pc.ArchiveRetentionCount, Enabled: enabled}
	rec.CreatedDate, rec.LastModifiedDate = im.w.now, im.w.now
	rec.CreatedByID, rec.LastModifiedByID = callerID(ctx), callerID(ctx)
	if cur != nil {
		rec.ID, rec.CreatedDate, rec.CreatedByID = cur.ID, cur.CreatedDate, cur.CreatedByID
		if _, err := tx.NewUpdate().Model(rec).WherePK().Exec(ctx); err != nil {
			return dbError(err)
		}
		im.log.notice("schema contract settings of '%s' updated", pc.Service)
		return nil
	}
	if _, err := tx.NewInsert().Model(rec).Exec(ctx); err != nil {
		return dbError(err)
	}
	im.log.created++
	im.log.notice("schema contract settings of '%s' created", pc.Service)
	return nil
}
