// Package sqldb is the database service backend: the table API of the spec
// (GET/POST/PUT/PATCH/DELETE on /api/v2/{service}/_table/…) over SQLite,
// PostgreSQL and MySQL/MariaDB through bun and the dialects packages.
//
// # Service types
//
// [Types] returns the three service types, sqlite, pgsql and mysql. A
// service's config object holds either dsn (in the contract's forms:
// sqlite:///abs.db, postgres://…, mysql://user:pass@tcp(host:3306)/db) or
// host, port, database, username and password; a SQLite database path is
// relative to the data directory. max_records (default 1000) is the
// default and largest page; allow_upsert lets PUT and PATCH create missing
// records; max_connections caps the pool.
//
// Each service has one connection pool, opened on the first request that
// needs it and closed by Close when the service is reloaded or removed. A
// database that cannot be reached answers 503 in the error envelope; the
// next request tries again, so the service recovers on its own.
//
// # Routes
//
//	GET    /                    {"resource":[{"name":"_table"}]}
//	GET    /_table              tables: {"resource":[{"name":…}]}; fields=* gives name,label,plural,access
//	GET    /_table/{t}          records: filter, fields, order, group, having, limit, offset,
//	                            related, ids, id_field, include_count, count_only
//	POST   /_table/{t}          create {"resource":[…]} or […]  → {"resource":[{pk}]}
//	PUT    /_table/{t}          replace whole records (by key in each record, or ids/filter)
//	PATCH  /_table/{t}          merge fields (by key in each record, or ids/filter)
//	DELETE /_table/{t}          by ids, filter or records in the body → keys
//	GET    /_table/{t}/{id}     one record, unwrapped
//	PUT    /_table/{t}/{id}     replace, returns the record
//	PATCH  /_table/{t}/{id}     merge, returns the record
//	DELETE /_table/{t}/{id}     delete, returns the record as it was
//
// Query parameters have DreamFactory's aliases (select, where, top, skip,
// sort, order_by, group_by) and may also be sent in a JSON body next to
// resource; the query string wins. Batch writes stop at the first failure
// and keep what was written before it, unless rollback=true (one
// transaction, undone on failure) or continue=true (every record is tried);
// a failed batch is a 400 with code 1000 and context.errors
// [{index,message}] and context.resource with the per-record outcome.
//
// # Safety
//
// Every identifier in a query comes from the introspected schema and is
// quoted by bun; every value is bound. The query language is parsed by
// proxy/sqldb/filter, which compiles through the [filter.Resolver] this
// package implements over the schema, so request text never becomes SQL.
// The caller's [caller.Grant] is honoured: fields it does not allow are
// dropped from reads (related records too) and refused in writes with 403;
// its row filters are ANDed into every read, update and delete, and records
// being written must satisfy them.
//
// # Values
//
// Responses are streamed with dialects/rowjson, which gives every engine the
// same JSON for the same data: lowercased field names in column order,
// numbers as numbers, booleans as booleans, NULL as null, and dates and
// times in one format.
//
// sqldb imports the leaves (apierr, caller), service, store and the
// dialects packages; it must not import other backends or the proxy root.
package sqldb
