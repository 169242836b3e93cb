package system

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/julienschmidt/httprouter"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/contract"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// The schema-contract resource, /system/schema_contract: DreamFactory's
// df-schema-contracts endpoints. Settings and snapshots live in the
// system database (store/contract.go); the canonical shapes and drift
// come from proxy/contract; live shapes from the service's backend
// (contract.Source), read anew on every call that reports drift.

// routeContracts registers the schema_contract routes.
func (b *Backend) routeContracts() {
	const p = "/schema_contract"
	b.handle(p, b.contractOverview, http.MethodGet)
	b.handle(p+"/:svc", b.contractService, http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete)
	b.handle(p+"/:svc/tables", b.contractTables, http.MethodGet)
	b.handle(p+"/:svc/diff", b.contractServiceDiff, http.MethodGet)
	b.handle(p+"/:svc/promote", b.contractPromote, http.MethodPost)
	b.handle(p+"/:svc/openapi", b.contractServiceOpenAPI, http.MethodGet)
	b.handle(p+"/:svc/tables/:table", b.contractUnlock, http.MethodDelete)
	b.handle(p+"/:svc/tables/:table/lock", b.contractLock, http.MethodPost)
	b.handle(p+"/:svc/tables/:table/test", b.contractTest, http.MethodPost)
	b.handle(p+"/:svc/tables/:table/snapshot", b.contractSnapshot, http.MethodGet)
	b.handle(p+"/:svc/tables/:table/snapshots", b.contractSnapshots, http.MethodGet)
	b.handle(p+"/:svc/tables/:table/snapshots/:version", b.contractSnapshotVersion, http.MethodGet)
	b.handle(p+"/:svc/tables/:table/diff", b.contractDiff, http.MethodGet)
	b.handle(p+"/:svc/tables/:table/openapi", b.contractOpenAPI, http.MethodGet)
}

// contractTarget is the SQL service a schema_contract call names.
type contractTarget struct {
	svc *store.Service
	src contract.Source
}

func (b *Backend) contractTarget(name string) (*contractTarget, error) {
	snap := b.deps.Registry.Snapshot()
	var svc *store.Service
	if snap != nil {
		svc = snap.Service(name)
	}
	if svc == nil {
		return nil, apierr.NotFound("Service '%s' not found.", name)
	}
	be, ok := b.deps.Registry.Backend(name)
	src, isSQL := be.(contract.Source)
	if !ok || !isSQL {
		return nil, apierr.BadRequest("Service '%s' is not a SQL database service; schema contracts are SQL-only.", name)
	}
	return &contractTarget{svc: svc, src: src}, nil
}

// live reads the service's schema now, so that changes made in the
// database itself show.
func (ct *contractTarget) live(ctx context.Context) (*dialects.Schema, error) {
	s, err := ct.src.ContractSchema(ctx, 0)
	if err != nil {
		return nil, apierr.As(err)
	}
	return s, nil
}

// settings are the service's settings, or nil for mode none.
func (b *Backend) contractSettings(ctx context.Context, ct *contractTarget) (*store.SchemaContract, error) {
	c, err := store.ContractSettings(ctx, b.db, ct.svc.ID)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	return c, nil
}

func modeOf(c *store.SchemaContract) string {
	if c == nil {
		return store.ContractModeNone
	}
	return c.Mode
}

// snapshotObject is a snapshot as the API shows it.
type snapshotObject struct {
	ID               int64           `json:"id"`
	ServiceID        int64           `json:"service_id"`
	ServiceName      string          `json:"service_name"`
	TableCatalog     *string         `json:"table_catalog"`
	TableSchema      *string         `json:"table_schema"`
	TableName        string          `json:"table_name"`
	ObjectType       string          `json:"object_type"`
	ContractVersion  int             `json:"contract_version"`
	SchemaHash       string          `json:"schema_hash"`
	Status           string          `json:"status"`
	CreatedDate      time.Time       `json:"created_date"`
	LastModifiedDate time.Time       `json:"last_modified_date"`
	LockResult       *string         `json:"lock_result"`
	Schema           json.RawMessage `json:"schema"`
}

func newSnapshotObject(s *store.SchemaSnapshot, lockResult string) snapshotObject {
	o := snapshotObject{ID: s.ID, ServiceID: s.ServiceID, ServiceName: s.ServiceName,
		TableCatalog: optional(s.TableCatalog), TableSchema: optional(s.TableSchema),
		TableName: s.TableName, ObjectType: s.ObjectType, ContractVersion: s.ContractVersion,
		SchemaHash: s.SchemaHash, Status: s.Status, CreatedDate: s.CreatedDate,
		LastModifiedDate: s.LastModifiedDate, Schema: json.RawMessage(s.SchemaJSON)}
	if lockResult != "" {
		o.LockResult = &lockResult
	}
	if len(o.Schema) == 0 {
		o.Schema = json.RawMessage("null")
	}
	return o
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// versionObject is a snapshot in a history list.
type versionObject struct {
	ID               int64     `json:"id"`
	ContractVersion  int       `json:"contract_version"`
	Status           string    `json:"status"`
	ObjectType       string    `json:"object_type"`
	TableCatalog     *string   `json:"table_catalog"`
	TableSchema      *string   `json:"table_schema"`
	SchemaHash       string    `json:"schema_hash"`
	CreatedDate      time.Time `json:"created_date"`
	LastModifiedDate time.Time `json:"last_modified_date"`
}

// snapshotCounts counts a service's snapshots.
type snapshotCounts struct {
	Active   int `json:"active"`
	Archived int `json:"archived"`
	Total    int `json:"total"`
}

func countSnapshots(list []*store.SchemaSnapshot) snapshotCounts {
	var c snapshotCounts
	for _, s := range list {
		if s.Status == store.SnapshotActive {
			c.Active++
		} else {
			c.Archived++
		}
	}
	c.Total = len(list)
	return c
}

// activeOf returns the active snapshots among list, by table name.
func activeOf(list []*store.SchemaSnapshot) map[string]*store.SchemaSnapshot {
	m := map[string]*store.SchemaSnapshot{}
	for _, s := range list {
		if s.Status == store.SnapshotActive {
			m[s.TableName] = s
		}
	}
	return m
}

// tableDrift is the drift of one locked table against the live schema.
type tableDrift struct {
	snap      *store.SchemaSnapshot
	locked    *contract.Table
	candidate *contract.Table // nil when the table is gone
	report    contract.Report
}

func driftOf(snap *store.SchemaSnapshot, live *dialects.Schema) (*tableDrift, error) {
	locked, err := contract.Parse([]byte(snap.SchemaJSON))
	if err != nil {
		return nil, apierr.Internal(err)
	}
	d := &tableDrift{snap: snap, locked: locked}
	if t := live.Table(snap.TableName); t != nil && t.Name == snap.TableName {
		d.candidate = contract.FromTable(t)
	}
	d.report = contract.Diff(locked, d.candidate)
	return d, nil
}

// serviceDrift is the drift of every locked table of a service, by name.
func serviceDrift(active map[string]*store.SchemaSnapshot, live *dialects.Schema) ([]*tableDrift, error) {
	names := make([]string, 0, len(active))
	for n := range active {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*tableDrift, 0, len(names))
	for _, n := range names {
		d, err := driftOf(active[n], live)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// driftSummary sums a service's drift.
type driftSummary struct {
	HasDrift           bool `json:"has_drift"`
	HasBreaking        bool `json:"has_breaking"`
	TablesWithDrift    int  `json:"tables_with_drift"`
	TablesWithBreaking int  `json:"tables_with_breaking"`
	contract.Summary
}

func summarize(drifts []*tableDrift) driftSummary {
	var s driftSummary
	for _, d := range drifts {
		s.Summary.Add(d.report.Summary)
		if d.report.HasDrift {
			s.TablesWithDrift++
		}
		if d.report.HasBreaking {
			s.TablesWithBreaking++
		}
	}
	s.HasDrift, s.HasBreaking = s.TablesWithDrift > 0, s.TablesWithBreaking > 0
	return s
}

// contractOverview answers GET /schema_contract: every SQL service with
// its mode and snapshot counts.
func (b *Backend) contractOverview(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx := r.Context()
	type serviceRow struct {
		ID             int64          `json:"id"`
		Name           string         `json:"name"`
		Label          string         `json:"label"`
		Type           string         `json:"type"`
		Mode           string         `json:"mode"`
		Configured     bool           `json:"configured"`
		SnapshotCounts snapshotCounts `json:"snapshot_counts"`
		LatestChange   *time.Time     `json:"latest_change"`
	}
	var summary struct {
		ServicesTotal      int `json:"services_total"`
		ServicesConfigured int `json:"services_configured"`
		ServicesLocked     int `json:"services_locked"`
		SnapshotsTotal     int `json:"snapshots_total"`
	}
	rows := []serviceRow{}
	snap := b.deps.Registry.Snapshot()
	if snap != nil {
		for _, svc := range snap.Services {
			be, ok := b.deps.Registry.Backend(svc.Name)
			if _, isSQL := be.(contract.Source); !ok || !isSQL {
				continue
			}
			settings, err := store.ContractSettings(ctx, b.db, svc.ID)
			if err != nil {
				return apierr.Internal(err)
			}
			list, err := store.Snapshots(ctx, b.db, svc.ID, "")
			if err != nil {
				return apierr.Internal(err)
			}
			row := serviceRow{ID: svc.ID, Name: svc.Name, Label: svc.Label, Type: svc.Type,
				Mode: modeOf(settings), Configured: settings != nil, SnapshotCounts: countSnapshots(list)}
			for _, s := range list {
				if row.LatestChange == nil || s.LastModifiedDate.After(*row.LatestChange) {
					t := s.LastModifiedDate
					row.LatestChange = &t
				}
			}
			summary.ServicesTotal++
			if row.Configured {
				summary.ServicesConfigured++
			}
			if row.SnapshotCounts.Active > 0 {
				summary.ServicesLocked++
			}
			summary.SnapshotsTotal += row.SnapshotCounts.Total
			rows = append(rows, row)
		}
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"summary": summary, "services": rows})
}

// contractService answers GET, PATCH (PUT) and DELETE /schema_contract/{svc}.
func (b *Backend) contractService(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	switch r.Method {
	case http.MethodPatch, http.MethodPut:
		if err := b.patchContractSettings(r, ct); err != nil {
			return err
		}
	case http.MethodDelete:
		return b.deleteServiceContract(w, r, ct)
	}
	out, err := b.serviceStatus(ctx, ct)
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// serviceStatus is the service-level status object.
type serviceStatus struct {
	Service               string         `json:"service"`
	Mode                  string         `json:"mode"`
	RuntimeEnforcement    string         `json:"runtime_enforcement"`
	ArchiveRetentionCount *int           `json:"archive_retention_count"`
	Enabled               bool           `json:"enabled"`
	SnapshotCounts        snapshotCounts `json:"snapshot_counts"`
	LatestPromotion       any            `json:"latest_promotion"`
	Drift                 *driftSummary  `json:"drift"`
	DescribeError         *string        `json:"describe_error,omitempty"`
}

func (b *Backend) serviceStatus(ctx context.Context, ct *contractTarget) (*serviceStatus, error) {
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return nil, err
	}
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, "")
	if err != nil {
		return nil, apierr.Internal(err)
	}
	out := &serviceStatus{Service: ct.svc.Name, Mode: modeOf(settings), RuntimeEnforcement: store.EnforcementOff,
		Enabled: true, SnapshotCounts: countSnapshots(list)}
	if settings != nil {
		out.RuntimeEnforcement = settings.RuntimeEnforcement
		out.ArchiveRetentionCount = settings.ArchiveRetentionCount
		out.Enabled = settings.Enabled
	}
	var latest *store.SchemaSnapshot
	for _, s := range list {
		if s.ContractVersion > 1 && (latest == nil || s.CreatedDate.After(latest.CreatedDate) ||
			s.CreatedDate.Equal(latest.CreatedDate) && s.ID > latest.ID) {
			latest = s
		}
	}
	if latest != nil {
		out.LatestPromotion = map[string]any{"table": latest.TableName, "version": latest.ContractVersion,
			"created_date": latest.CreatedDate}
	}
	live, err := ct.src.ContractSchema(ctx, 0)
	if err != nil {
		msg := apierr.As(err).Message
		out.DescribeError = &msg
		return out, nil
	}
	drifts, err := serviceDrift(activeOf(list), live)
	if err != nil {
		return nil, err
	}
	sum := summarize(drifts)
	out.Drift = &sum
	return out, nil
}

// patchContractSettings applies a PATCH body to the service's settings.
func (b *Backend) patchContractSettings(r *http.Request, ct *contractTarget) error {
	ctx := r.Context()
	var body map[string]json.RawMessage
	if err := apierr.DecodeJSON(r, &body, true); err != nil {
		return err
	}
	var (
		mode, enforcement *string
		retention         *int
		retentionSet      bool
		enabled           *bool
	)
	for k, raw := range body {
		switch k {
		case "mode", "runtime_enforcement":
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return apierr.BadRequest("%s must be a string.", k)
			}
			if k == "mode" {
				if s != store.ContractModeNone && s != store.ContractModeAuto && s != store.ContractModeStrict {
					return apierr.BadRequest("Invalid mode '%s'. Must be one of: none, auto, strict", s)
				}
				mode = &s
			} else {
				if s != store.EnforcementOff && s != store.EnforcementShapeResponse && s != store.EnforcementStrict {
					return apierr.BadRequest("Invalid runtime_enforcement '%s'. Must be one of: off, shape_response, strict", s)
				}
				enforcement = &s
			}
		case "archive_retention_count":
			retentionSet = true
			if isNullJSON(raw) || string(raw) == `""` {
				break
			}
			var n int
			if json.Unmarshal(raw, &n) != nil || n < 0 {
				return apierr.BadRequest("archive_retention_count must be a non-negative integer or null.")
			}
			retention = &n
		case "enabled":
			var v bool
			if json.Unmarshal(raw, &v) != nil {
				return apierr.BadRequest("enabled must be true or false.")
			}
			enabled = &v
		default:
			return apierr.BadRequest("Unknown schema contract setting '%s'. Settings: mode, runtime_enforcement, archive_retention_count, enabled.", k)
		}
	}
	if len(body) == 0 {
		return nil
	}
	err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		cur, err := store.ContractSettings(ctx, tx, ct.svc.ID)
		if err != nil {
			return err
		}
		if mode != nil && *mode == store.ContractModeNone {
			if cur != nil {
				if _, err := tx.NewDelete().Model(cur).WherePK().Exec(ctx); err != nil {
					return err
				}
			}
			return store.Touch(ctx, tx)
		}
		if cur == nil {
			if mode == nil {
				return apierr.BadRequest("Cannot configure a service without first setting mode. Pass mode='auto' or mode='strict' to create the config row.")
			}
			cur = &store.SchemaContract{ServiceID: ct.svc.ID, ServiceName: ct.svc.Name,
				RuntimeEnforcement: store.EnforcementOff, Enabled: true}
			cur.CreatedDate = now()
		}
		if mode != nil {
			cur.Mode = *mode
		}
		if enforcement != nil {
			cur.RuntimeEnforcement = *enforcement
		}
		if retentionSet {
			cur.ArchiveRetentionCount = retention
		}
		if enabled != nil {
			cur.Enabled = *enabled
		}
		cur.ServiceName, cur.LastModifiedDate = ct.svc.Name, now()
		if id := callerID(ctx); id != nil {
			cur.LastModifiedByID = id
			if cur.ID == 0 {
				cur.CreatedByID = id
			}
		}
		if cur.ID == 0 {
			_, err = tx.NewInsert().Model(cur).Exec(ctx)
		} else {
			_, err = tx.NewUpdate().Model(cur).WherePK().Exec(ctx)
		}
		if err != nil {
			return err
		}
		return store.Touch(ctx, tx)
	})
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return ae
		}
		return apierr.Internal(err)
	}
	b.reload(ctx)
	return nil
}

// deleteServiceContract archives every active snapshot of the service and
// removes its settings.
func (b *Backend) deleteServiceContract(w http.ResponseWriter, r *http.Request, ct *contractTarget) error {
	ctx := r.Context()
	var archived []*store.SchemaSnapshot
	removed := false
	err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		cur, err := store.ContractSettings(ctx, tx, ct.svc.ID)
		if err != nil {
			return err
		}
		var retention *int
		if cur != nil {
			retention = cur.ArchiveRetentionCount
			if _, err := tx.NewDelete().Model(cur).WherePK().Exec(ctx); err != nil {
				return err
			}
			removed = true
		}
		if archived, err = store.ArchiveActive(ctx, tx, ct.svc.ID, "", retention); err != nil {
			return err
		}
		return store.Touch(ctx, tx)
	})
	if err != nil {
		return apierr.Internal(err)
	}
	b.reload(ctx)
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "result": "unlocked",
		"snapshots_archived": len(archived), "service_config_removed": removed})
}

// contractTables answers GET /{svc}/tables: every live table and every
// locked one, with its contract status.
func (b *Backend) contractTables(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return err
	}
	live, err := ct.live(ctx)
	if err != nil {
		return err
	}
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, "")
	if err != nil {
		return apierr.Internal(err)
	}
	active := activeOf(list)
	type snapRef struct {
		Version     int       `json:"version"`
		Hash        string    `json:"hash"`
		CreatedDate time.Time `json:"created_date"`
	}
	type driftRef struct {
		HasDrift    bool             `json:"has_drift"`
		HasBreaking bool             `json:"has_breaking"`
		Summary     contract.Summary `json:"summary"`
	}
	type row struct {
		Name     string    `json:"name"`
		Catalog  *string   `json:"catalog"`
		Schema   *string   `json:"schema"`
		Type     *string   `json:"type"`
		Locked   bool      `json:"locked"`
		Snapshot *snapRef  `json:"snapshot"`
		Drift    *driftRef `json:"drift"`
	}
	var summary struct {
		TablesTotal        int `json:"tables_total"`
		TablesLocked       int `json:"tables_locked"`
		TablesWithDrift    int `json:"tables_with_drift"`
		TablesWithBreaking int `json:"tables_with_breaking"`
	}
	rows := []row{}
	add := func(name string, typ *string) error {
		rw := row{Name: name, Type: typ}
		if s := active[name]; s != nil {
			d, err := driftOf(s, live)
			if err != nil {
				return err
			}
			rw.Locked = true
			rw.Snapshot = &snapRef{Version: s.ContractVersion, Hash: s.SchemaHash, CreatedDate: s.CreatedDate}
			rw.Drift = &driftRef{HasDrift: d.report.HasDrift, HasBreaking: d.report.HasBreaking, Summary: d.report.Summary}
			summary.TablesLocked++
			if d.report.HasDrift {
				summary.TablesWithDrift++
			}
			if d.report.HasBreaking {
				summary.TablesWithBreaking++
			}
		}
		summary.TablesTotal++
		rows = append(rows, rw)
		return nil
	}
	seen := map[string]bool{}
	for _, t := range live.Tables {
		typ := "table"
		if t.IsView {
			typ = "view"
		}
		seen[t.Name] = true
		if err := add(t.Name, &typ); err != nil {
			return err
		}
	}
	var gone []string
	for name := range active {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		if err := add(name, nil); err != nil {
			return err
		}
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "mode": modeOf(settings),
		"summary": summary, "tables": rows, "describe_error": nil})
}

// tableArg resolves the {table} of a route: the live table's own spelling
// when it exists (names match case-insensitively), else as given.
func tableArg(live *dialects.Schema, name string) (string, *dialects.Table) {
	if live != nil {
		if t := live.Table(name); t != nil {
			return t.Name, t
		}
	}
	return name, nil
}

func notFoundTable(svc, table string) error {
	return apierr.NotFound("Table '%s' not found in service '%s'.", table, svc)
}

// lockPlan says what locking a table would do.
type lockPlan struct {
	name      string
	candidate *contract.Table
	active    *store.SchemaSnapshot
	hash      string
	action    string // locked, promoted, no_change
	next      int    // the version a write would create
}

func (b *Backend) planLock(ctx context.Context, ct *contractTarget, tableName string, force bool) (*lockPlan, error) {
	live, err := ct.live(ctx)
	if err != nil {
		return nil, err
	}
	name, t := tableArg(live, tableName)
	if t == nil {
		return nil, notFoundTable(ct.svc.Name, tableName)
	}
	p := &lockPlan{name: name, candidate: contract.FromTable(t)}
	p.hash = p.candidate.Hash()
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, name)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	max := 0
	for _, s := range list {
		if s.ContractVersion > max {
			max = s.ContractVersion
		}
		if s.Status == store.SnapshotActive {
			p.active = s
		}
	}
	p.next = max + 1
	switch {
	case p.active == nil:
		p.action = "locked"
	case p.active.SchemaHash == p.hash && !force:
		p.action, p.next = "no_change", p.active.ContractVersion
	default:
		p.action = "promoted"
	}
	return p, nil
}

// lockTable writes the plan's snapshot (unless nothing changed).
func (b *Backend) lockTable(ctx context.Context, ct *contractTarget, p *lockPlan) (*store.SchemaSnapshot, error) {
	if p.action == "no_change" {
		return p.active, nil
	}
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return nil, err
	}
	var retention *int
	if settings != nil {
		retention = settings.ArchiveRetentionCount
	}
	s := &store.SchemaSnapshot{ServiceID: ct.svc.ID, ServiceName: ct.svc.Name, TableName: p.name,
		ObjectType: p.candidate.Type, SchemaHash: p.hash, SchemaJSON: string(p.candidate.JSON())}
	if id := callerID(ctx); id != nil {
		s.CreatedByID, s.LastModifiedByID = id, id
	}
	if _, err := store.SaveSnapshot(ctx, b.db, s, retention); err != nil {
		return nil, apierr.Internal(err)
	}
	return s, nil
}

// contractLock answers POST /{svc}/tables/{t}/lock[?force=1].
func (b *Backend) contractLock(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	p, err := b.planLock(ctx, ct, ps.ByName("table"), boolParam(r.URL.Query().Get("force")))
	if err != nil {
		return err
	}
	s, err := b.lockTable(ctx, ct, p)
	if err != nil {
		return err
	}
	if p.action != "no_change" {
		b.reload(ctx)
	}
	return apierr.WriteJSON(w, http.StatusOK, newSnapshotObject(s, p.action))
}

// contractTest answers POST /{svc}/tables/{t}/test: what a lock would do,
// changing nothing.
func (b *Backend) contractTest(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	p, err := b.planLock(ctx, ct, ps.ByName("table"), false)
	if err != nil {
		return err
	}
	rep := contract.NewReport(nil)
	var activeVersion any
	var activeHash any
	if p.active != nil {
		locked, err := contract.Parse([]byte(p.active.SchemaJSON))
		if err != nil {
			return apierr.Internal(err)
		}
		rep = contract.Diff(locked, p.candidate)
		activeVersion, activeHash = p.active.ContractVersion, p.active.SchemaHash
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{
		"service": ct.svc.Name, "table": p.name, "checked_at": now(),
		"would_be_version": p.next, "would_be_action": p.action,
		"active_snapshot_version": activeVersion, "active_snapshot_hash": activeHash,
		"candidate_hash": p.hash, "has_drift": rep.HasDrift, "has_breaking": rep.HasBreaking,
		"summary": rep.Summary, "changes": rep.Changes, "candidate": p.candidate,
	})
}

// activeFor finds the active snapshot of the route's table (matching the
// live spelling of the name first).
func (b *Backend) activeFor(ctx context.Context, ct *contractTarget, live *dialects.Schema, tableName string) (string, *store.SchemaSnapshot, error) {
	name, _ := tableArg(live, tableName)
	s, err := store.ActiveSnapshot(ctx, b.db, ct.svc.ID, name)
	if err == nil && s == nil && name != tableName {
		s, err = store.ActiveSnapshot(ctx, b.db, ct.svc.ID, tableName)
		if s != nil {
			name = tableName
		}
	}
	if err != nil {
		return name, nil, apierr.Internal(err)
	}
	return name, s, nil
}

// contractSnapshot answers GET /{svc}/tables/{t}/snapshot.
func (b *Backend) contractSnapshot(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	live, _ := ct.src.ContractSchema(r.Context(), -1)
	name, s, err := b.activeFor(r.Context(), ct, live, ps.ByName("table"))
	if err != nil {
		return err
	}
	if s == nil {
		return apierr.NotFound("No active snapshot for '%s/%s'.", ct.svc.Name, name)
	}
	return apierr.WriteJSON(w, http.StatusOK, newSnapshotObject(s, ""))
}

// history returns the route's table's snapshots, 404 when there are none.
func (b *Backend) history(r *http.Request, ct *contractTarget, tableName string) (string, []*store.SchemaSnapshot, error) {
	ctx := r.Context()
	live, _ := ct.src.ContractSchema(ctx, -1)
	name, _ := tableArg(live, tableName)
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, name)
	if err == nil && len(list) == 0 && name != tableName {
		name = tableName
		list, err = store.Snapshots(ctx, b.db, ct.svc.ID, name)
	}
	if err != nil {
		return name, nil, apierr.Internal(err)
	}
	if len(list) == 0 {
		return name, nil, apierr.NotFound("No snapshots exist for '%s/%s'.", ct.svc.Name, name)
	}
	return name, list, nil
}

// contractSnapshots answers GET /{svc}/tables/{t}/snapshots.
func (b *Backend) contractSnapshots(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	name, list, err := b.history(r, ct, ps.ByName("table"))
	if err != nil {
		return err
	}
	versions := make([]versionObject, len(list))
	for i, s := range list {
		versions[i] = versionObject{ID: s.ID, ContractVersion: s.ContractVersion, Status: s.Status,
			ObjectType: s.ObjectType, TableCatalog: optional(s.TableCatalog), TableSchema: optional(s.TableSchema),
			SchemaHash: s.SchemaHash, CreatedDate: s.CreatedDate, LastModifiedDate: s.LastModifiedDate}
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "table": name, "versions": versions})
}

// contractSnapshotVersion answers GET /{svc}/tables/{t}/snapshots/{v}.
func (b *Backend) contractSnapshotVersion(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	name, list, err := b.history(r, ct, ps.ByName("table"))
	v, convErr := strconv.Atoi(ps.ByName("version"))
	if err != nil {
		if convErr != nil {
			return apierr.NotFound("Version %s of '%s/%s' not found.", ps.ByName("version"), ct.svc.Name, name)
		}
		return err
	}
	for _, s := range list {
		if convErr == nil && s.ContractVersion == v {
			return apierr.WriteJSON(w, http.StatusOK, newSnapshotObject(s, ""))
		}
	}
	return apierr.NotFound("Version %s of '%s/%s' not found.", ps.ByName("version"), ct.svc.Name, name)
}

// contractDiff answers GET /{svc}/tables/{t}/diff, computed live.
func (b *Backend) contractDiff(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	live, err := ct.live(ctx)
	if err != nil {
		return err
	}
	name, s, err := b.activeFor(ctx, ct, live, ps.ByName("table"))
	if err != nil {
		return err
	}
	if s == nil {
		return apierr.NotFound("No active snapshot for '%s/%s' — lock the table before requesting drift.", ct.svc.Name, name)
	}
	d, err := driftOf(s, live)
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{
		"service": ct.svc.Name, "table": s.TableName, "checked_at": now(),
		"active_snapshot_version": s.ContractVersion, "active_snapshot_hash": s.SchemaHash,
		"has_drift": d.report.HasDrift, "has_breaking": d.report.HasBreaking,
		"summary": d.report.Summary, "changes": d.report.Changes, "candidate": d.candidate,
	})
}

// contractServiceDiff answers GET /{svc}/diff[?include=candidate].
func (b *Backend) contractServiceDiff(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	live, err := ct.live(ctx)
	if err != nil {
		return err
	}
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, "")
	if err != nil {
		return apierr.Internal(err)
	}
	drifts, err := serviceDrift(activeOf(list), live)
	if err != nil {
		return err
	}
	withCandidate := r.URL.Query().Get("include") == "candidate"
	tables := make([]map[string]any, 0, len(drifts))
	for _, d := range drifts {
		row := map[string]any{"name": d.snap.TableName, "catalog": nil, "schema": nil,
			"active_snapshot_version": d.snap.ContractVersion, "has_drift": d.report.HasDrift,
			"has_breaking": d.report.HasBreaking, "summary": d.report.Summary, "changes": d.report.Changes}
		if withCandidate {
			row["candidate"] = d.candidate
		}
		tables = append(tables, row)
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "checked_at": now(),
		"active_snapshot_count": len(drifts), "summary": summarize(drifts), "tables": tables})
}

// contractPromote answers POST /{svc}/promote: in mode auto the drifted
// tables without breaking or potentially breaking changes take their live
// shape as the contract and the others wait for review; in mode strict
// every drifted table does (the spec: the current shape becomes the
// contract). Tables that are gone always wait for review.
func (b *Backend) contractPromote(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return err
	}
	mode := modeOf(settings)
	if mode == store.ContractModeNone {
		return apierr.BadRequest("Service mode is 'none'. Promotion is not applicable — set mode='auto' or 'strict' via PATCH /%s first.", ct.svc.Name)
	}
	live, err := ct.live(ctx)
	if err != nil {
		return err
	}
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, "")
	if err != nil {
		return apierr.Internal(err)
	}
	drifts, err := serviceDrift(activeOf(list), live)
	if err != nil {
		return err
	}
	type promoted struct {
		Table       string `json:"table"`
		FromVersion int    `json:"from_version"`
		ToVersion   int    `json:"to_version"`
	}
	type review struct {
		Table       string           `json:"table"`
		Version     int              `json:"version"`
		Reason      string           `json:"reason"`
		HasBreaking bool             `json:"has_breaking"`
		Summary     contract.Summary `json:"summary"`
	}
	out := struct {
		Promoted       []promoted `json:"promoted"`
		NeedsReview    []review   `json:"needs_review"`
		SkippedNoDrift []string   `json:"skipped_no_drift"`
	}{[]promoted{}, []review{}, []string{}}
	changed := false
	for _, d := range drifts {
		rev := review{Table: d.snap.TableName, Version: d.snap.ContractVersion,
			HasBreaking: d.report.HasBreaking, Summary: d.report.Summary}
		switch {
		case !d.report.HasDrift:
			out.SkippedNoDrift = append(out.SkippedNoDrift, d.snap.TableName)
			continue
		case d.candidate == nil:
			rev.Reason = "table_removed"
		case mode == store.ContractModeAuto && d.report.HasBreaking:
			rev.Reason = "breaking_drift"
		case mode == store.ContractModeAuto && !d.report.OnlyAdditive():
			rev.Reason = "potentially_breaking_drift"
		}
		if rev.Reason != "" {
			out.NeedsReview = append(out.NeedsReview, rev)
			continue
		}
		p, err := b.planLock(ctx, ct, d.snap.TableName, true)
		if err != nil {
			return err
		}
		s, err := b.lockTable(ctx, ct, p)
		if err != nil {
			return err
		}
		changed = true
		out.Promoted = append(out.Promoted, promoted{Table: d.snap.TableName, FromVersion: d.snap.ContractVersion, ToVersion: s.ContractVersion})
	}
	if changed {
		b.reload(ctx)
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{
		"service": ct.svc.Name, "mode": mode,
		"summary": map[string]int{"tables_evaluated": len(drifts), "tables_promoted": len(out.Promoted),
			"tables_needs_review": len(out.NeedsReview), "tables_no_drift": len(out.SkippedNoDrift)},
		"promoted": out.Promoted, "needs_review": out.NeedsReview, "skipped_no_drift": out.SkippedNoDrift,
	})
}

// contractDelete answers DELETE /{svc}/tables/{t}: the table's active
// snapshot is archived.
func (b *Backend) contractUnlock(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	live, _ := ct.src.ContractSchema(ctx, -1)
	name, s, err := b.activeFor(ctx, ct, live, ps.ByName("table"))
	if err != nil {
		return err
	}
	if s == nil {
		return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "table": name, "result": "no_active_snapshot"})
	}
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return err
	}
	var retention *int
	if settings != nil {
		retention = settings.ArchiveRetentionCount
	}
	if _, err := store.ArchiveActive(ctx, b.db, ct.svc.ID, s.TableName, retention); err != nil {
		return apierr.Internal(err)
	}
	b.reload(ctx)
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "table": s.TableName,
		"result": "unlocked", "archived_snapshot_id": s.ID, "archived_snapshot_version": s.ContractVersion})
}

// openAPISource picks the shape a table's OpenAPI schema comes from: the
// active snapshot in mode auto or strict, else the live table.
func openAPISource(mode string, snap *store.SchemaSnapshot, live *dialects.Table) (*contract.Table, string, any, error) {
	if mode != store.ContractModeNone && snap != nil {
		t, err := contract.Parse([]byte(snap.SchemaJSON))
		if err != nil {
			return nil, "", nil, apierr.Internal(err)
		}
		return t, "snapshot", snap.ContractVersion, nil
	}
	if live == nil {
		return nil, "", nil, nil
	}
	return contract.FromTable(live), "live", nil, nil
}

// contractOpenAPI answers GET /{svc}/tables/{t}/openapi.
func (b *Backend) contractOpenAPI(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return err
	}
	live, err := ct.live(ctx)
	if err != nil {
		return err
	}
	name, s, err := b.activeFor(ctx, ct, live, ps.ByName("table"))
	if err != nil {
		return err
	}
	_, lt := tableArg(live, name)
	t, source, version, err := openAPISource(modeOf(settings), s, lt)
	if err != nil {
		return err
	}
	if t == nil {
		return notFoundTable(ct.svc.Name, ps.ByName("table"))
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "table": t.Name,
		"source": source, "snapshot_version": version, "schema_name": contract.SchemaName(t.Name),
		"schema": t.OpenAPISchema()})
}

// contractServiceOpenAPI answers GET /{svc}/openapi: the component
// schemas of every table (a document's components object).
func (b *Backend) contractServiceOpenAPI(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ct, err := b.contractTarget(ps.ByName("svc"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	settings, err := b.contractSettings(ctx, ct)
	if err != nil {
		return err
	}
	live, err := ct.live(ctx)
	if err != nil {
		return err
	}
	list, err := store.Snapshots(ctx, b.db, ct.svc.ID, "")
	if err != nil {
		return apierr.Internal(err)
	}
	active := activeOf(list)
	schemas := openapi3.Schemas{}
	sources := map[string]any{}
	add := func(snap *store.SchemaSnapshot, lt *dialects.Table) error {
		t, source, version, err := openAPISource(modeOf(settings), snap, lt)
		if err != nil || t == nil {
			return err
		}
		n := contract.SchemaName(t.Name)
		schemas[n] = openapi3.NewSchemaRef("", t.OpenAPISchema())
		sources[n] = map[string]any{"source": source, "version": version}
		return nil
	}
	for _, lt := range live.Tables {
		if err := add(active[lt.Name], lt); err != nil {
			return err
		}
	}
	for name, s := range active {
		if live.Table(name) == nil || live.Table(name).Name != name {
			if err := add(s, nil); err != nil {
				return err
			}
		}
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"service": ct.svc.Name, "mode": modeOf(settings),
		"components": map[string]any{"schemas": schemas}, "sources": sources})
}

// callerID is the signed-in user's id for the audit columns, or nil.
func callerID(ctx context.Context) *int64 {
	id := caller.IdentityFrom(ctx)
	if id == nil || id.UserID == 0 {
		return nil
	}
	uid := id.UserID
	return &uid
}
