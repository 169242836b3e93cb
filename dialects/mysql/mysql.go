package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"

	"github.com/portcullis-dev/portcullis/dialects"
)

// Dialect is the MySQL implementation of [dialects.Dialect].
type Dialect struct{}

// New returns the MySQL dialect.
func New() Dialect { return Dialect{} }

// Kind returns [dialects.MySQL].
func (Dialect) Kind() dialects.Kind { return dialects.MySQL }

// DriverConfig turns cfg into the driver's configuration, with parseTime
// and UTC set (the driver's default collation is already utf8mb4).
func DriverConfig(cfg dialects.Config) (*driver.Config, error) {
	var mc *driver.Config
	if cfg.DSN != "" {
		var err error
		mc, err = driver.ParseDSN(cfg.DSN)
		if err != nil {
			return nil, fmt.Errorf("mysql: %w: %v", dialects.ErrDSN, err)
		}
	} else {
		mc = driver.NewConfig()
		mc.Net = "tcp"
		port := cfg.Port
		if port == 0 {
			port = 3306
		}
		mc.Addr = fmt.Sprintf("%s:%d", cfg.Host, port)
		mc.User = cfg.Username
		mc.Passwd = cfg.Password
		mc.DBName = cfg.Database
	}
	mc.ParseTime = true
	mc.Loc = time.UTC
	if mc.Timeout == 0 {
		mc.Timeout = 5 * time.Second
	}
	if mc.Params == nil {
		mc.Params = map[string]string{}
	}
	if _, ok := mc.Params["time_zone"]; !ok {
		mc.Params["time_zone"] = "'+00:00'"
	}
	return mc, nil
}

// Open connects to the database described by cfg.
func (Dialect) Open(ctx context.Context, cfg dialects.Config) (*bun.DB, error) {
	mc, err := DriverConfig(cfg)
	if err != nil {
		return nil, err
	}
	conn, err := driver.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	sqldb := sql.OpenDB(conn)
	n := cfg.MaxOpenConns
	if n <= 0 {
		n = 20
	}
	sqldb.SetMaxOpenConns(n)
	sqldb.SetMaxIdleConns(n)
	sqldb.SetConnMaxLifetime(time.Hour)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := bun.NewDB(sqldb, mysqldialect.New())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql: connect %s@%s/%s: %w", mc.User, mc.Addr, mc.DBName, err)
	}
	return db, nil
}
