// Package store is the system store: the platform's own configuration in a
// SQL database (SQLite by default, PostgreSQL or MySQL for several
// instances), reached through bun.
//
// It owns the bun models of every system table, the embedded migrations that
// create them identically on the three engines, the seeding done by
// `portcullis init`, and the immutable [Snapshot] of configuration that the
// pipeline reads on every request. Writers bump a version counter in the
// same transaction as their change ([Store.Touch]); every instance polls the
// counter and reloads its snapshot when it moves.
//
// Migrations are append-only: the first one creates tables from the models
// as they were; a later change adds its columns or tables with a new
// migration (use [addColumnIfMissing] so a fresh database, which already has
// the column from the model, is left alone).
//
// store imports bun, dialects and the leaves; never HTTP or a backend.
package store
