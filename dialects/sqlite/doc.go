// Package sqlite is the SQLite dialect: modernc.org/sqlite (pure Go, no C
// toolchain) under bun's sqlitedialect.
//
// Introspection reads sqlite_master and the pragma table functions. DDL
// that SQLite's ALTER TABLE cannot do (changing or dropping a column,
// adding a key) rebuilds the table in one transaction, keeping the rest of
// its definition as written; see [Dialect.AlterColumn] and the rebuild's
// notes on foreign key enforcement.
//
// It imports bun, the driver, the dialects root and dialects/internal only.
package sqlite
