// Package sqlite is the SQLite dialect: modernc.org/sqlite (pure Go, no C
// toolchain) under bun's sqlitedialect.
//
// It imports bun, the driver and the dialects root only.
package sqlite
