package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

func register20261122000001(m *migrate.Migrations) {
	m.MustRegister(upSystemTables, downNothing)
}

// table is one table of the first migration, with its foreign keys.
type table struct {
	model any
	fks   []string
}

func systemTables() []table {
	return []table{
		{model: (*Service)(nil)},
		{model: (*Role)(nil)},
		{model: (*App)(nil), fks: []string{"(role_id) REFERENCES role (id) ON DELETE SET NULL"}},
		{model: (*User)(nil), fks: []string{"(default_app_id) REFERENCES app (id) ON DELETE SET NULL"}},
		{model: (*RoleServiceAccess)(nil), fks: []string{
			"(role_id) REFERENCES role (id) ON DELETE CASCADE",
			"(service_id) REFERENCES service (id) ON DELETE CASCADE",
		}},
		{model: (*UserAppRole)(nil), fks: []string{
			"(user_id) REFERENCES ?user? (id) ON DELETE CASCADE",
			"(app_id) REFERENCES app (id) ON DELETE CASCADE",
			"(role_id) REFERENCES role (id) ON DELETE CASCADE",
		}},
		{model: (*CORS)(nil)},
		{model: (*Limit)(nil), fks: []string{
			"(user_id) REFERENCES ?user? (id) ON DELETE CASCADE",
			"(role_id) REFERENCES role (id) ON DELETE CASCADE",
			"(service_id) REFERENCES service (id) ON DELETE CASCADE",
		}},
		{model: (*Lookup)(nil), fks: []string{
			"(app_id) REFERENCES app (id) ON DELETE CASCADE",
			"(role_id) REFERENCES role (id) ON DELETE CASCADE",
			"(user_id) REFERENCES ?user? (id) ON DELETE CASCADE",
		}},
		{model: (*EventScript)(nil)},
		{model: (*EmailTemplate)(nil)},
		{model: (*Custom)(nil)},
		{model: (*SchemaContract)(nil), fks: []string{"(service_id) REFERENCES service (id) ON DELETE CASCADE"}},
		{model: (*SchemaSnapshot)(nil), fks: []string{"(service_id) REFERENCES service (id) ON DELETE CASCADE"}},
		{model: (*Setting)(nil)},
		{model: (*State)(nil)},
		{model: (*Session)(nil), fks: []string{"(user_id) REFERENCES ?user? (id) ON DELETE CASCADE"}},
	}
}

func upSystemTables(ctx context.Context, db *bun.DB) error {
	userTable := string(db.QueryGen().AppendIdent(nil, "user"))
	for _, t := range systemTables() {
		q := db.NewCreateTable().Model(t.model).IfNotExists()
		for _, fk := range t.fks {
			q = q.ForeignKey(strings.ReplaceAll(fk, "?user?", userTable))
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("create %T: %w", t.model, err)
		}
	}
	indexes := []struct {
		model   any
		name    string
		unique  bool
		columns []string
	}{
		{(*UserAppRole)(nil), "user_to_app_to_role_user_app", true, []string{"user_id", "app_id"}},
		{(*RoleServiceAccess)(nil), "role_service_access_role", false, []string{"role_id"}},
		{(*Lookup)(nil), "lookup_name", false, []string{"name"}},
		{(*SchemaSnapshot)(nil), "schema_contract_snapshot_table", false, []string{"service_id", "table_name", "status"}},
		{(*Session)(nil), "session_user", false, []string{"user_id"}},
		{(*Limit)(nil), "limits_key_text", true, []string{"key_text"}},
	}
	for _, ix := range indexes {
		q := db.NewCreateIndex().Model(ix.model).Index(ix.name).Column(ix.columns...)
		if ix.unique {
			q = q.Unique()
		}
		if db.Dialect().Name() != dialect.MySQL {
			q = q.IfNotExists()
		}
		if _, err := q.Exec(ctx); err != nil && !isDuplicateIndex(err) {
			return fmt.Errorf("create index %s: %w", ix.name, err)
		}
	}
	if db.Dialect().Name() == dialect.MySQL {
		// TEXT holds 64 KiB on MySQL; configuration, scripts and snapshots
		// may be larger.
		for _, stmt := range []string{
			"ALTER TABLE service MODIFY config MEDIUMTEXT",
			"ALTER TABLE event_script MODIFY content MEDIUMTEXT",
			"ALTER TABLE system_custom MODIFY value MEDIUMTEXT",
			"ALTER TABLE schema_contract_snapshot MODIFY schema_json LONGTEXT",
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
	}
	if _, err := db.NewInsert().Model(&State{ID: 1}).Ignore().Exec(ctx); err != nil {
		return fmt.Errorf("seed platform_state: %w", err)
	}
	return nil
}
