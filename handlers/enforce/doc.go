// Package enforce is the pipeline stage of schema-contract runtime
// enforcement: it applies a service's runtime_enforcement setting to the
// table requests of that service (/api/v2/{service}/_table/{table}…).
//
//   - off (or no settings, or enabled false, or no active snapshot for the
//     table): the request passes untouched. A table without a contract is
//     never affected.
//   - shape_response: fields the table's active contract does not have are
//     dropped from the records of the response, and the related records it
//     embeds are shaped by their own table's contract (one level deep).
//   - strict: as shape_response, and a write (POST, PUT, PATCH, DELETE) to
//     a table whose live shape has drifted from its contract is refused
//     with 400, the drift items in the error's context.
//
// The cost when nothing has drifted is one lookup: the settings and active
// snapshots are in the configuration snapshot every request already holds,
// parsed contracts and the canonical shapes of introspected tables are
// cached, and a response is buffered only when the table has drifted or
// embeds related records. Strict writes are checked against a schema no
// older than Options.MaxAge (one second by default), so a change made in
// the database itself (ALTER TABLE) is refused within a second; responses
// are shaped against the schema the backend serves with.
//
// The stage runs last, next to the backend, so that it sees the request
// and the response as the backend does. It imports proxy/contract (the
// engine it fronts), proxy/store, proxy/service and proxy/apierr.
package enforce
