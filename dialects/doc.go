// Package dialects owns everything Portcullis knows about a SQL database
// engine: how a DSN is written, how a pool is opened through bun, and (in the
// engine packages) introspection, DDL, type mapping and the classification of
// constraint errors.
//
// The root package holds the engine-neutral types: [Kind], [Config] (parsed
// from the contract's DSN forms by [ParseDSN]), the [Dialect] interface that
// dialects/sqlite, dialects/pgsql and dialects/mysql implement, the
// introspected [Schema] ([Table], [Column], [ForeignKey], [Index] and the
// DreamFactory-shaped [Relation]s derived from foreign keys), and the
// DreamFactory simple types ([FieldType]). dialects/engines picks the
// implementation for a kind, dialects/rowjson turns query results into
// JSON, and dialects/dbtest gives tests a fresh database on every available
// engine.
//
// Nothing here knows about HTTP. It imports bun and the drivers only.
package dialects
