// Package dialects owns everything Portcullis knows about a SQL database
// engine: how a DSN is written, how a pool is opened through bun, and (in the
// engine packages) introspection, DDL, type mapping and the classification of
// constraint errors.
//
// The root package holds the engine-neutral types: [Kind], [Config] (parsed
// from the contract's DSN forms by [ParseDSN]) and the [Dialect] interface
// that dialects/sqlite, dialects/pgsql and dialects/mysql implement.
// dialects/engines picks the implementation for a kind, and dialects/dbtest
// gives tests a fresh database on every available engine.
//
// Nothing here knows about HTTP. It imports bun and the drivers only.
package dialects
