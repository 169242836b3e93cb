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
// resource; the query string wins. Per-relation options are
// {relation}.fields, {relation}.order and {relation}.limit (or with "_").
//
// # Writes
//
// Batch writes stop at the first failure and keep what was written before
// it, unless rollback=true (undone on failure) or continue=true (every
// record is tried). A batch runs in one transaction with a savepoint per
// record, committed once at the end, so nothing is acknowledged before it
// is durable. A failed batch is a 400 with code 1000, context.errors
// [{index,message}] and (except under rollback) context.resource with each
// record's key or error; a request for a single record fails with that
// record's own error (404, 409, 400, 403). Writes answer with keys
// ({"resource":[{"id":5}]}) unless fields or related ask for records; by-id
// PUT, PATCH and DELETE answer with the record. PUT resets the fields a
// record leaves out to their defaults (NULL when none); PATCH merges.
// Unknown fields in records are ignored; relation members are not written.
//
// # Decisions where the spec and DreamFactory are silent or differ
//
//   - Without order, records come in primary-key order, and PostgreSQL is
//     made to put NULLs where SQLite and MySQL do (first ascending, last
//     descending), so pages are stable and the same on every engine.
//   - meta.next (offset of the next page) is set whenever more records
//     remain, as DreamFactory does; meta.count only with include_count.
//   - A composite key is addressed in the path as its values in key order,
//     separated by commas (_table/order_tag/1,2); in ids, each key is
//     quoted ('1,2','1,3'). A single value is given to every key column, as
//     DreamFactory does.
//   - An unknown relation in related is a 400 (DreamFactory ignores it).
//   - A role's row filter that cannot be applied (unknown field or
//     operator) refuses the request with 403 instead of showing all rows.
//   - A read that meets a table or column dropped behind the cached schema
//     is retried once on the schema read anew; a write answers 409 and the
//     next request sees the new schema. A table created behind the cache is
//     found on the next request for it (the schema is re-read at most once
//     a second for unknown tables).
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
// Responses are streamed with dialects/rowjson (flushed every 32 KiB), which
// gives every engine the same JSON for the same data: lowercased field names
// in column order, integers and decimals as exact JSON numbers (decimals
// with their declared scale, 12.50), floats as the shortest exact text,
// booleans as true/false (MySQL TINYINT(1) too), NULL as null, DATE
// "2006-01-02", TIME "15:04:05", DATETIME and TIMESTAMP "2006-01-02
// 15:04:05" in UTC (fractions only when present), JSON columns as JSON,
// binary as base64. Input values are checked against the column's type and
// written in the same forms (a date-time with a zone is converted to UTC),
// so what is read back is what every engine stores.
//
// sqldb imports the leaves (apierr, caller), service, store and the
// dialects packages; it must not import other backends or the proxy root.
package sqldb
