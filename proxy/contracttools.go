package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/contract"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// The schema-contract command-line tools (schema-contracts:describe and
// schema-contracts:prune). They work on the system database of a data
// directory or DSN, also while a server runs on it: prune bumps the
// configuration version, so running servers reload within a second.

// openToolStore opens cfg's system database; a default SQLite one must
// already exist (the tools never initialise a data directory).
func openToolStore(ctx context.Context, cfg Config) (*store.Store, func(), error) {
	if cfg.Store != nil {
		return cfg.Store, func() {}, nil
	}
	cfg = cfg.withDefaults()
	if d, err := dialects.ParseDSN(cfg.SystemDB); err == nil && d.Kind == dialects.SQLite {
		if _, err := os.Stat(d.Database); err != nil {
			return nil, nil, fmt.Errorf("no system database at %s (run `portcullis init` first, or give --data or --system-db)", d.Database)
		}
	}
	st, err := store.Open(ctx, cfg.SystemDB)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

// DescribeOptions selects what DescribeSchema prints.
type DescribeOptions struct {
	// Service is the service's name.
	Service string
	// Table, when set, prints that table's canonical shape alone.
	Table string
	// Pretty indents the JSON.
	Pretty bool
}

// DescribeSchema writes the canonical JSON schema of a SQL service's
// tables to w: DreamFactory's service envelope (version, service,
// database, generated_at, tables, views, procedures, native), or one
// table with opts.Table. The database is introspected now.
func DescribeSchema(ctx context.Context, cfg Config, opts DescribeOptions, w io.Writer) error {
	st, done, err := openToolStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer done()
	var svc store.Service
	if err := st.DB.NewSelect().Model(&svc).Where("name = ?", opts.Service).Scan(ctx); err != nil {
		if store.IsNoRows(err) {
			return fmt.Errorf("Service '%s' was not found.", opts.Service)
		}
		return err
	}
	var typ service.Type
	for _, t := range defaultTypes(nil, nil, nil, nil) {
		if t.Info().Name == svc.Type {
			typ = t
		}
	}
	if typ == nil || typ.Info().Group != service.GroupDatabase {
		return fmt.Errorf("Service '%s' is not a SQL database service; schema contracts are SQL-only.", svc.Name)
	}
	be, err := typ.New(ctx, &svc, service.Deps{Store: st, DataDir: cfg.withDefaults().DataDir})
	if err != nil {
		return fmt.Errorf("service '%s': %w", svc.Name, err)
	}
	defer be.Close()
	src, ok := be.(contract.Source)
	if !ok {
		return fmt.Errorf("Service '%s' is not a SQL database service; schema contracts are SQL-only.", svc.Name)
	}
	live, err := src.ContractSchema(ctx, 0)
	if err != nil {
		return fmt.Errorf("service '%s': %w", svc.Name, err)
	}
	var out any
	if opts.Table != "" {
		t := live.Table(opts.Table)
		if t == nil {
			return fmt.Errorf("Table '%s' not found in service '%s'.", opts.Table, svc.Name)
		}
		out = contract.FromTable(t)
	} else {
		tables, views := []*contract.Table{}, []*contract.Table{}
		for _, t := range live.Tables {
			if t.IsView {
				views = append(views, contract.FromTable(t))
			} else {
				tables = append(tables, contract.FromTable(t))
			}
		}
		out = struct {
			Version     string            `json:"version"`
			Service     any               `json:"service"`
			Database    any               `json:"database"`
			GeneratedAt string            `json:"generated_at"`
			Tables      []*contract.Table `json:"tables"`
			Views       []*contract.Table `json:"views"`
			Procedures  []any             `json:"procedures"`
			Native      map[string]any    `json:"native"`
		}{
			Version: "1.0",
			Service: struct {
				ID    int64  `json:"id"`
				Name  string `json:"name"`
				Type  string `json:"type"`
				Label string `json:"label"`
			}{svc.ID, svc.Name, svc.Type, svc.Label},
			Database: struct {
				Vendor        string  `json:"vendor"`
				ServerVersion *string `json:"server_version"`
				DefaultSchema *string `json:"default_schema"`
			}{Vendor: svc.Type},
			GeneratedAt: time.Now().UTC().Format("2006-01-02T15:04:05Z"),
			Tables:      tables, Views: views, Procedures: []any{}, Native: map[string]any{},
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if opts.Pretty {
		enc.SetIndent("", "    ")
	}
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// PruneOptions selects what PruneSnapshots prunes.
type PruneOptions struct {
	// Service limits pruning to one service; "" prunes every service with
	// an archive_retention_count.
	Service string
	// DryRun reports what would be deleted and deletes nothing.
	DryRun bool
}

// PruneSnapshots deletes, per table, the archived snapshots beyond the
// service's archive_retention_count (the newest ones are kept) and writes
// DreamFactory's report lines to w.
func PruneSnapshots(ctx context.Context, cfg Config, opts PruneOptions, w io.Writer) error {
	st, done, err := openToolStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer done()
	var settings []*store.SchemaContract
	q := st.DB.NewSelect().Model(&settings).Where("archive_retention_count IS NOT NULL").Order("service_name")
	if opts.Service != "" {
		var svc store.Service
		if err := st.DB.NewSelect().Model(&svc).Where("name = ?", opts.Service).Scan(ctx); err != nil {
			if store.IsNoRows(err) {
				return fmt.Errorf("Service '%s' was not found.", opts.Service)
			}
			return err
		}
		q = q.Where("service_id = ?", svc.ID)
	}
	if err := q.Scan(ctx); err != nil && !store.IsNoRows(err) {
		return err
	}
	if len(settings) == 0 {
		if opts.Service != "" {
			fmt.Fprintf(w, "Service '%s' has no archive_retention_count set; nothing to prune.\n", opts.Service)
		} else {
			fmt.Fprintln(w, "No services have archive_retention_count set; nothing to prune.")
		}
		return nil
	}
	verb := "deleting"
	if opts.DryRun {
		verb = "would delete"
	}
	total, services := 0, 0
	err = st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, s := range settings {
			list, err := store.Snapshots(ctx, tx, s.ServiceID, "")
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			touched := false
			for _, snap := range list {
				if seen[snap.TableName] {
					continue
				}
				seen[snap.TableName] = true
				versions, err := store.PruneSnapshots(ctx, tx, s.ServiceID, snap.TableName, *s.ArchiveRetentionCount, opts.DryRun)
				if err != nil {
					return err
				}
				if len(versions) == 0 {
					continue
				}
				names := make([]string, len(versions))
				for i, v := range versions {
					names[i] = fmt.Sprintf("v%d", v)
				}
				fmt.Fprintf(w, "  %s / %s: keeping %d, %s %d archived version(s) (%s)\n",
					s.ServiceName, snap.TableName, *s.ArchiveRetentionCount, verb, len(versions), strings.Join(names, ", "))
				total += len(versions)
				touched = true
			}
			if touched {
				services++
			}
		}
		if opts.DryRun || total == 0 {
			return nil
		}
		return store.Touch(ctx, tx)
	})
	if err != nil {
		return errors.Join(errors.New("prune failed, nothing was deleted"), err)
	}
	if opts.DryRun {
		fmt.Fprintf(w, "Would delete %d archived snapshot(s) across %d service(s).\n", total, services)
	} else {
		fmt.Fprintf(w, "Deleted %d archived snapshot(s) across %d service(s).\n", total, services)
	}
	return nil
}
