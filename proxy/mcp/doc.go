// Package mcp is the MCP service backend (service type "mcp", group MCP)
// and the audit log of its tool calls.
//
// # Remote form
//
// With config {"url": "https://mcp.example.com/mcp"} the service forwards
// to a remote MCP server, streamable HTTP or the older HTTP+SSE transport,
// behind the whole pipeline (key, session, RBAC, limits, logging,
// scripts). The forwarding itself is a [Forwarder] that the composition
// root builds on proxy/rws: configured headers and parameters with their
// lookups are added, the platform's key and token never leave, the
// upstream allow list applies, an unreachable server is 503 and a silent
// one 504 (config.timeout bounds the wait for the answer's headers; event
// streams then run as long as they last). Event streams pass through as
// they arrive; the HTTP+SSE transport's endpoint event is rewritten so
// that the client posts its messages through the service too.
//
// # Services form
//
// With config {"services": ["db", …]} the service is an MCP server
// (streamable HTTP, stateless, JSON answers) at POST /api/v2/{name}. Its
// tools act on the named database services: list_tables,
// describe_table, query_records, create_records, update_records,
// delete_records, call_procedure and call_function, taking the arguments
// service (required when more than one service is exposed), table,
// filter, fields, order, limit, offset, related, ids, records, name and
// params.
//
// Every tool call is one inner request through the platform's /api/v2
// pipeline ([service.Call]) as the caller of the MCP request: the caller's
// role decides what it may do, its field and row restrictions apply, rate
// limits count it, event scripts fire, and the tool's result is the JSON
// body the REST call answers. A refused or failed call is a tool error
// (isError) whose text is the error envelope. list_tables lists only the
// tables the caller may read.
//
// Tool input schemas are generated per role from the tables: the table
// argument's enum lists the tables the role may use with that tool's verb,
// and its description the fields of the tables whose schema the role may
// read. A conditional at the root of the schema (if the table is this one,
// then …; one per table) gives each table's record schema for the records
// of create_records, update_records and delete_records and the field names
// of query_records: the columns with their types, nullability, lengths and
// defaults from the service's OpenAPI document, without the columns the
// role's grant drops, without read-only columns in writes, the NOT NULL
// columns without a default required in a create and the primary key in
// an update. Schemas are cached per role and configuration version (a
// schema change moves it), the record schemas per service and schema
// epoch. The filter language is explained in the tools' descriptions.
//
// # Audit
//
// [Audit] keeps the last tool calls in a bounded ring and streams each new
// one, as a line of JSON ([Event]), to every follower without waiting for
// any: a follower that falls behind misses events, which are counted.
// Both forms record their calls: the url form reads the JSON-RPC
// tools/call requests it forwards and watches the answers pass (see
// remoteaudit.go). Calls the pipeline answers before the backend (401,
// 403, 429, a script) are recorded too, with the status the client got:
// the proxy puts [Audit.Gate] before the API key stage and [SeeCaller]
// after the stages that identify the caller (see refused.go).
// Arguments are recorded with secrets redacted ([Redact]). The proxy
// serves it, to administrators only, at GET /_internal/ai/audit-stream.
//
// mcp imports the proxy leaves, proxy/service and proxy/store, and the
// official MCP SDK; never another backend, a stage or the proxy root.
package mcp
