package proxy

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// DemoApp is the name of the app `portcullis demo` creates; its key reaches
// the sample database with the demo role.
const DemoApp = "demo"

// DemoMCPService is the demo's mcp service: the sample database as MCP
// tools, at /api/v2/ai.
const DemoMCPService = "ai"

// demoSchema is the sample database: customers, products, orders and their
// items (orders ↔ products is many-to-many through order_item).
var demoSchema = []string{
	`CREATE TABLE customer (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(100) NOT NULL, email VARCHAR(255) NOT NULL UNIQUE, city VARCHAR(100), vip BOOLEAN NOT NULL DEFAULT 0, created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
	`CREATE TABLE product (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(100) NOT NULL, price DECIMAL(10,2) NOT NULL, in_stock BOOLEAN NOT NULL DEFAULT 1)`,
	`CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, customer_id INTEGER NOT NULL REFERENCES customer(id) ON DELETE CASCADE, status VARCHAR(20) NOT NULL DEFAULT 'open', ordered_on DATE NOT NULL, note TEXT)`,
	`CREATE TABLE order_item (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE, product_id INTEGER NOT NULL REFERENCES product(id), quantity INTEGER NOT NULL DEFAULT 1)`,
	`INSERT INTO customer (name, email, city, vip) VALUES ('Ada Lovelace','ada@example.com','London',1), ('Grace Hopper','grace@example.com','Arlington',0), ('Alan Turing','alan@example.com','Manchester',1), ('Edsger Dijkstra','edsger@example.com','Austin',0), ('Barbara Liskov','barbara@example.com','Boston',0)`,
	`INSERT INTO product (name, price, in_stock) VALUES ('Analytical Engine',1999.99,1), ('Punch cards (100)',4.50,1), ('Compiler manual',29.00,0), ('Enigma rotor',120.25,1)`,
	`INSERT INTO orders (customer_id, status, ordered_on, note) VALUES (1,'shipped','2026-01-05','Gift wrap'), (1,'open','2026-02-11',NULL), (2,'shipped','2026-01-20',NULL), (3,'cancelled','2026-03-02','Changed mind'), (5,'open','2026-03-15',NULL)`,
	`INSERT INTO order_item (order_id, product_id, quantity) VALUES (1,1,1), (1,2,3), (2,4,2), (3,3,1), (3,2,10), (4,1,1), (5,4,1)`,
}

// SeedDemo fills the built-in db service's SQLite file in cfg's data
// directory with the sample tables (unless they are there) and makes the
// demo role and app, whose key it returns, and the "ai" mcp service that
// exposes db as MCP tools. The role may use every verb on the db service
// and call ai.
func SeedDemo(ctx context.Context, cfg Config) (string, error) {
	cfg = cfg.withDefaults()
	path := filepath.Join(cfg.DataDir, "db.sqlite")
	db, _, err := engines.Open(ctx, dialects.Config{Kind: dialects.SQLite, DSN: path})
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'customer'").Scan(&n); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	if n == 0 {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range demoSchema {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%.40s…: %w", stmt, err)
				}
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("demo: sample database: %w", err)
		}
	}

	st := cfg.Store
	if st == nil {
		st, err = store.Open(ctx, cfg.SystemDB)
		if err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
		defer st.Close()
	}
	var key string
	err = st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var app store.App
		if err := tx.NewSelect().Model(&app).Where("name = ?", DemoApp).Scan(ctx); err == nil {
			key = app.APIKey
			return nil
		} else if !store.IsNoRows(err) {
			return err
		}
		var dbsvc store.Service
		if err := tx.NewSelect().Model(&dbsvc).Where("name = ?", "db").Scan(ctx); err != nil {
			return fmt.Errorf("the built-in db service is missing (run init first): %w", err)
		}
		role := &store.Role{Name: "demo", Description: "Full access to the sample database.", IsActive: true}
		if _, err := tx.NewInsert().Model(role).Exec(ctx); err != nil {
			return err
		}
		// "ai" exposes db as MCP tools (the mcp type's services form).
		ai := &store.Service{Name: DemoMCPService, Label: "AI tools", Description: "The sample database as MCP tools.",
			IsActive: true, Type: "mcp", Mutable: true, Deletable: true, Config: `{"services":["db"]}`}
		if _, err := tx.NewInsert().Model(ai).Exec(ctx); err != nil {
			return err
		}
		for _, grant := range []struct {
			svc  int64
			comp string
		}{{dbsvc.ID, "*"}, {ai.ID, ""}, {ai.ID, "*"}} {
			access := &store.RoleServiceAccess{RoleID: role.ID, ServiceID: &grant.svc, Component: grant.comp,
				VerbMask: 31, RequestorMask: 3, FilterOp: "AND"}
			if _, err := tx.NewInsert().Model(access).Exec(ctx); err != nil {
				return err
			}
		}
		app = store.App{Name: DemoApp, Label: "Demo", Description: "Reaches the sample database.",
			IsActive: true, APIKey: store.NewAPIKey(), RoleID: &role.ID, AllowFullscreenToggle: true}
		if _, err := tx.NewInsert().Model(&app).Exec(ctx); err != nil {
			return err
		}
		key = app.APIKey
		return store.Touch(ctx, tx)
	})
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	return key, nil
}
