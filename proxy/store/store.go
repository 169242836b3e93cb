package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/engines"
)

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("store: not found")

// Store is the system database.
type Store struct {
	// DB is the pool. Writers that change configuration call Touch in the
	// same transaction.
	DB *bun.DB
	// Dialect is the engine of DB.
	Dialect dialects.Dialect
	// Config is how DB was reached (for logs; it redacts itself).
	Config dialects.Config
}

// Open opens the system database named by dsn (a contract DSN form) and
// brings its schema up to date.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := dialects.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig is Open for a parsed configuration.
func OpenConfig(ctx context.Context, cfg dialects.Config) (*Store, error) {
	db, d, err := engines.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{DB: db, Dialect: d, Config: cfg}
	if err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() error { return s.DB.Close() }

// Kind returns the engine of the system database.
func (s *Store) Kind() dialects.Kind { return s.Dialect.Kind() }

// Touch bumps the configuration version so that every instance reloads its
// snapshot. Call it inside the transaction that changes configuration.
func Touch(ctx context.Context, db bun.IDB) error {
	_, err := db.NewUpdate().Model((*State)(nil)).
		Set("config_version = config_version + 1").
		Where("id = 1").Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: bump config version: %w", err)
	}
	return nil
}

// Touch bumps the configuration version outside any transaction.
func (s *Store) Touch(ctx context.Context) error { return Touch(ctx, s.DB) }

// Version returns the configuration version.
func (s *Store) Version(ctx context.Context) (int64, error) {
	var v int64
	err := s.DB.NewSelect().Model((*State)(nil)).Column("config_version").Where("id = 1").Scan(ctx, &v)
	if err != nil {
		return 0, fmt.Errorf("store: read config version: %w", err)
	}
	return v, nil
}

// Setting returns the value of a named setting, or ErrNotFound.
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var st Setting
	err := s.DB.NewSelect().Model(&st).Where("name = ?", name).Scan(ctx)
	if isNoRows(err) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store: read setting %s: %w", name, err)
	}
	return st.Value, nil
}

// SetSettingIfAbsent stores value under name unless a value is there, and
// returns the value in force. Concurrent callers all get the same value.
func SetSettingIfAbsent(ctx context.Context, db bun.IDB, name, value string) (string, error) {
	if _, err := db.NewInsert().Model(&Setting{Name: name, Value: value}).Ignore().Exec(ctx); err != nil {
		return "", fmt.Errorf("store: write setting %s: %w", name, err)
	}
	var st Setting
	if err := db.NewSelect().Model(&st).Where("name = ?", name).Scan(ctx); err != nil {
		return "", fmt.Errorf("store: read setting %s: %w", name, err)
	}
	return st.Value, nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// IsNoRows reports whether err means a query found no row.
func IsNoRows(err error) bool { return isNoRows(err) }

// MinPasswordLength is the contract's password composition rule.
const MinPasswordLength = 8

// ErrWeakPassword is returned for a password shorter than MinPasswordLength
// or longer than bcrypt accepts.
var ErrWeakPassword = fmt.Errorf("password must have at least %d characters and at most 72 bytes", MinPasswordLength)

// HashPassword checks the composition rule and returns a bcrypt hash.
func HashPassword(password string) (string, error) {
	if len([]rune(password)) < MinPasswordLength || len(password) > 72 {
		return "", ErrWeakPassword
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), PasswordCost())
	if err != nil {
		return "", fmt.Errorf("store: hash password: %w", err)
	}
	return string(h), nil
}

// passwordCost is the bcrypt cost set by SetPasswordCost; zero means
// bcrypt.DefaultCost.
var passwordCost atomic.Int32

// PasswordCost is the bcrypt cost of new password and secret hashes:
// bcrypt.DefaultCost unless SetPasswordCost changed it.
func PasswordCost() int {
	if c := passwordCost.Load(); c != 0 {
		return int(c)
	}
	return bcrypt.DefaultCost
}

// SetPasswordCost sets the bcrypt cost of new hashes. Tests lower it to
// bcrypt.MinCost so that signing in and changing passwords under the race
// detector stays fast; a production instance keeps the default. Existing
// hashes keep the cost they were made with.
func SetPasswordCost(cost int) error {
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		return fmt.Errorf("store: bcrypt cost %d outside %d..%d", cost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	passwordCost.Store(int32(cost))
	return nil
}

// dummyHash is compared against when a user does not exist, so that a login
// for an unknown e-mail costs as much as one for a known one.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("portcullis-timing-equaliser"), bcrypt.DefaultCost)

// CheckPassword reports whether password matches hash (bcrypt, including
// DreamFactory's $2y$ hashes). An empty hash never matches but costs the
// same time.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// NewAPIKey returns a new random API key: 64 lowercase hex characters, as
// DreamFactory's keys are.
func NewAPIKey() string { return randomHex(32) }

// NewSecret returns n random bytes as hex.
func NewSecret(n int) string { return randomHex(n) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// now is the time written into audit columns, in UTC to the second.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }
