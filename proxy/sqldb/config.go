package sqldb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
)

// DefaultMaxRecords is the page size when a service does not set
// max_records, and the most records one GET returns.
const DefaultMaxRecords = 1000

// Config is a database service's configuration, the service record's
// config object. Keys it does not know are kept by the store as sent and
// ignored here.
type Config struct {
	// DSN is a connection string in one of the contract's forms
	// (sqlite://, postgres://, mysql://), an alternative to the discrete
	// fields below.
	DSN string `json:"dsn,omitempty"`
	// Host, Port, Database, Username and Password reach the database when
	// DSN is empty. For SQLite, Database is the file path, relative to the
	// data directory unless absolute.
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	Database string `json:"database,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// MaxRecords is the default and largest page size (default 1000).
	MaxRecords int `json:"max_records,omitempty"`
	// AllowUpsert makes PUT and PATCH of a record that does not exist
	// create it instead of answering 404.
	AllowUpsert bool `json:"allow_upsert,omitempty"`
	// MaxConnections caps the service's connection pool; zero picks the
	// engine's default.
	MaxConnections int `json:"max_connections,omitempty"`
}

// ParseConfig reads and checks the config object of a service of kind,
// reporting every problem at once (an empty config lacks the database and
// is refused). Keys it does not know are ignored.
func ParseConfig(kind dialects.Kind, raw json.RawMessage) (Config, error) {
	var c Config
	var errs []error
	fields := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &fields); err != nil {
			return c, fmt.Errorf("config must be a JSON object: %w", err)
		}
	}
	str := func(key string, dst *string) {
		v, ok := fields[key]
		if !ok || string(v) == "null" {
			return
		}
		if err := json.Unmarshal(v, dst); err != nil {
			errs = append(errs, fmt.Errorf("config.%s must be a string", key))
		}
	}
	integer := func(key string, dst *int, min, max int) {
		v, ok := fields[key]
		if !ok || string(v) == "null" || string(v) == `""` {
			return
		}
		var n json.Number
		s := strings.Trim(string(v), `"`)
		if err := json.Unmarshal([]byte(s), &n); err != nil {
			errs = append(errs, fmt.Errorf("config.%s must be an integer", key))
			return
		}
		i, err := strconv.Atoi(n.String())
		if err != nil || i < min || i > max {
			errs = append(errs, fmt.Errorf("config.%s must be an integer from %d to %d", key, min, max))
			return
		}
		*dst = i
	}
	boolean := func(key string, dst *bool) {
		v, ok := fields[key]
		if !ok || string(v) == "null" {
			return
		}
		switch strings.ToLower(strings.Trim(string(v), `"`)) {
		case "true", "1":
			*dst = true
		case "false", "0", "":
			*dst = false
		default:
			errs = append(errs, fmt.Errorf("config.%s must be a boolean", key))
		}
	}
	str("dsn", &c.DSN)
	str("host", &c.Host)
	integer("port", &c.Port, 1, 65535)
	str("database", &c.Database)
	str("username", &c.Username)
	str("password", &c.Password)
	integer("max_records", &c.MaxRecords, 1, 1_000_000)
	boolean("allow_upsert", &c.AllowUpsert)
	integer("max_connections", &c.MaxConnections, 1, 10_000)
	if c.MaxRecords == 0 {
		c.MaxRecords = DefaultMaxRecords
	}
	c.DSN = strings.TrimSpace(c.DSN)
	c.Host = strings.TrimSpace(c.Host)

	if c.DSN != "" {
		parsed, err := dialects.ParseDSN(c.DSN)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("config.dsn: %w", err))
		case parsed.Kind != kind:
			errs = append(errs, fmt.Errorf("config.dsn is a %s DSN but the service type is %s", parsed.Kind, kind))
		}
	} else {
		switch kind {
		case dialects.SQLite:
			if strings.TrimSpace(c.Database) == "" {
				errs = append(errs, errors.New("config.database (the SQLite file) or config.dsn is required"))
			}
		case dialects.Postgres, dialects.MySQL:
			if c.Host == "" {
				errs = append(errs, errors.New("config.host or config.dsn is required"))
			}
			if strings.TrimSpace(c.Database) == "" {
				errs = append(errs, errors.New("config.database or config.dsn is required"))
			}
		}
	}
	if strings.ContainsRune(c.Database, 0) || strings.ContainsRune(c.Host, 0) {
		errs = append(errs, errors.New("config values must not contain NUL bytes"))
	}
	return c, errors.Join(errs...)
}

// Dialect returns the connection settings for c, resolving a relative
// SQLite path against dataDir.
func (c Config) Dialect(kind dialects.Kind, dataDir string) (dialects.Config, error) {
	var dc dialects.Config
	if c.DSN != "" {
		parsed, err := dialects.ParseDSN(c.DSN)
		if err != nil {
			return dc, err
		}
		dc = parsed
	} else {
		dc = dialects.Config{Kind: kind, Host: c.Host, Port: c.Port, Database: c.Database,
			Username: c.Username, Password: c.Password}
		if kind == dialects.SQLite {
			dc.DSN = c.Database
		}
	}
	if kind == dialects.SQLite {
		p := dc.DSN
		if p == "" {
			p = dc.Database
		}
		if !strings.HasPrefix(p, "file:") && !filepath.IsAbs(p) && dataDir != "" {
			p = filepath.Join(dataDir, p)
		}
		dc.DSN, dc.Database = p, p
	}
	dc.MaxOpenConns = c.MaxConnections
	return dc, nil
}
