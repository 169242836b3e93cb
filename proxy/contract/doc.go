// Package contract is the schema-contract engine: the canonical shape of a
// SQL table, its hash, the drift between a locked shape and the live one
// with DreamFactory's severities, the OpenAPI schema of a shape and the
// shaping of records to a shape.
//
// The canonical [Table] is built from a [dialects.Table] as introspection
// gives it and holds nothing engine-specific, so the same table gives the
// same JSON (and the same [Hash]) on SQLite, PostgreSQL and MySQL. [Diff]
// finds what changed between two shapes with go-cmp and classifies every
// change by the rule table of DreamFactory's df-schema-contracts
// (breaking, potentially_breaking, additive, cosmetic).
//
// contract has no HTTP in it: the system service puts it on the wire
// (/api/v2/system/schema_contract) and the enforcement stage applies it to
// table requests. It imports dialects and kin-openapi, never a backend, a
// stage or the proxy root.
package contract
