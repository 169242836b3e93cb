// Package pgsql is the PostgreSQL dialect: pgx v5 through database/sql under
// bun's pgdialect, with the simple query protocol (bun formats values into
// the query text itself, so prepared statements would only cost a round
// trip).
//
// It imports bun, the driver and the dialects root only.
package pgsql
