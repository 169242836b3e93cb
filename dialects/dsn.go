package dialects

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
)

// Kind names a database engine, as a service type does.
type Kind string

// The engines Portcullis speaks.
const (
	SQLite   Kind = "sqlite"
	Postgres Kind = "pgsql"
	MySQL    Kind = "mysql"
)

// Config says how to reach one database. Either DSN is set (in the driver's
// own form) or the discrete fields are; [ParseDSN] fills DSN from the
// contract's URL forms.
type Config struct {
	// Kind is the engine.
	Kind Kind
	// DSN is the driver's data source name: a file path for SQLite, a
	// postgres:// URL for PostgreSQL, user:pass@tcp(host:port)/db for MySQL.
	DSN string
	// Host, Port, Database, Username and Password are used when DSN is
	// empty. For SQLite, Database is the file path.
	Host     string
	Port     int
	Database string
	Username string
	Password string
	// MaxOpenConns caps the pool; zero picks the engine's default.
	MaxOpenConns int
}

// LogValue hides the password and the DSN's credentials in logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("kind", string(c.Kind)),
		slog.String("host", c.Host),
		slog.String("database", c.Database),
		slog.String("dsn", Redact(c.DSN)),
	)
}

// Redact returns dsn with any password replaced by ***.
func Redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			const placeholder = "portcullisredacted"
			u.User = url.UserPassword(u.User.Username(), placeholder)
			return strings.Replace(u.String(), ":"+placeholder+"@", ":***@", 1)
		}
		return dsn
	}
	// [mysql://]user:pass@tcp(…)
	start := 0
	if i := strings.Index(dsn, "://"); i >= 0 {
		start = i + len("://")
	}
	if at := strings.LastIndex(dsn, "@"); at > start {
		if colon := strings.Index(dsn[start:at], ":"); colon >= 0 {
			return dsn[:start+colon+1] + "***" + dsn[at:]
		}
	}
	return dsn
}

// ErrDSN is wrapped by every DSN parsing error.
var ErrDSN = errors.New("invalid DSN")

// ParseDSN parses the contract's DSN forms:
//
//	sqlite:///abs/path.db   sqlite://rel/path.db   (a bare path ending in .db is SQLite too)
//	postgres://user:pass@host:5432/db?sslmode=disable   (postgresql:// too)
//	mysql://user:pass@tcp(host:3306)/db   (mysql://user:pass@host:3306/db too)
func ParseDSN(s string) (Config, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Config{}, fmt.Errorf("%w: empty", ErrDSN)
	case strings.HasPrefix(s, "sqlite://"):
		path := strings.TrimPrefix(s, "sqlite://")
		if path == "" || path == "/" {
			return Config{}, fmt.Errorf("%w: sqlite DSN needs a file path", ErrDSN)
		}
		return Config{Kind: SQLite, DSN: path, Database: path}, nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		u, err := url.Parse(s)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %v", ErrDSN, err)
		}
		if u.Host == "" {
			return Config{}, fmt.Errorf("%w: postgres DSN needs a host", ErrDSN)
		}
		c := Config{Kind: Postgres, DSN: s, Host: u.Hostname(), Database: strings.TrimPrefix(u.Path, "/")}
		if u.User != nil {
			c.Username = u.User.Username()
		}
		if p := u.Port(); p != "" {
			c.Port, _ = strconv.Atoi(p)
		}
		return c, nil
	case strings.HasPrefix(s, "mysql://"):
		rest := strings.TrimPrefix(s, "mysql://")
		if !strings.Contains(rest, "tcp(") && !strings.Contains(rest, "unix(") {
			// mysql://user:pass@host:port/db → user:pass@tcp(host:port)/db
			u, err := url.Parse(s)
			if err != nil {
				return Config{}, fmt.Errorf("%w: %v", ErrDSN, err)
			}
			userinfo := ""
			if u.User != nil {
				userinfo = u.User.String() + "@"
				if p, ok := u.User.Password(); ok {
					userinfo = u.User.Username() + ":" + p + "@"
				}
			}
			host := u.Host
			if u.Port() == "" {
				host += ":3306"
			}
			rest = userinfo + "tcp(" + host + ")" + u.Path
			if u.RawQuery != "" {
				rest += "?" + u.RawQuery
			}
		}
		if !strings.Contains(rest, "/") {
			return Config{}, fmt.Errorf("%w: mysql DSN needs /database", ErrDSN)
		}
		c := Config{Kind: MySQL, DSN: rest}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			user := rest[:at]
			if i := strings.Index(user, ":"); i >= 0 {
				user = user[:i]
			}
			c.Username = user
		}
		if i := strings.Index(rest, "("); i >= 0 {
			if j := strings.Index(rest[i:], ")"); j > 0 {
				hp := rest[i+1 : i+j]
				if h, p, ok := strings.Cut(hp, ":"); ok {
					c.Host = h
					c.Port, _ = strconv.Atoi(p)
				} else {
					c.Host = hp
				}
			}
		}
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			db := rest[i+1:]
			if q := strings.Index(db, "?"); q >= 0 {
				db = db[:q]
			}
			c.Database = db
		}
		return c, nil
	case strings.HasSuffix(s, ".db") || strings.HasSuffix(s, ".sqlite") || strings.HasPrefix(s, "file:"):
		return Config{Kind: SQLite, DSN: s, Database: s}, nil
	}
	return Config{}, fmt.Errorf("%w: unknown scheme in %q (want sqlite://, postgres:// or mysql://)", ErrDSN, Redact(s))
}

// URL returns the contract form of c (the inverse of ParseDSN), built from
// the discrete fields when DSN is empty.
func (c Config) URL() string {
	switch c.Kind {
	case SQLite:
		p := c.DSN
		if p == "" {
			p = c.Database
		}
		return "sqlite://" + p
	case Postgres:
		if c.DSN != "" {
			return c.DSN
		}
		u := url.URL{Scheme: "postgres", Host: c.Host, Path: "/" + c.Database}
		if c.Port != 0 {
			u.Host = fmt.Sprintf("%s:%d", c.Host, c.Port)
		}
		if c.Username != "" {
			if c.Password != "" {
				u.User = url.UserPassword(c.Username, c.Password)
			} else {
				u.User = url.User(c.Username)
			}
		}
		return u.String()
	case MySQL:
		if c.DSN != "" {
			return "mysql://" + c.DSN
		}
		port := c.Port
		if port == 0 {
			port = 3306
		}
		auth := c.Username
		if c.Password != "" {
			auth += ":" + c.Password
		}
		if auth != "" {
			auth += "@"
		}
		return fmt.Sprintf("mysql://%stcp(%s:%d)/%s", auth, c.Host, port, c.Database)
	}
	return ""
}
