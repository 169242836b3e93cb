// Package pgsql is the PostgreSQL dialect: pgx v5 through database/sql under
// bun's pgdialect, with the simple query protocol (bun formats values into
// the query text itself, so prepared statements would only cost a round
// trip).
//
// Introspection reads pg_catalog for the current schema; DDL runs in a
// transaction (PostgreSQL's DDL is transactional). It needs PostgreSQL 12
// or later.
//
// It imports bun, the driver, the dialects root and dialects/internal only.
package pgsql
