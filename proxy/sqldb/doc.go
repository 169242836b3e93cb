// Package sqldb is the database service backend: the table API of the spec
// (GET/POST/PUT/PATCH/DELETE on /api/v2/{service}/_table/…), the schema API
// (_schema) and stored procedures and functions (_proc, _func) over SQLite,
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
//	GET    /                    {"resource":[{"name":"_schema"},{"name":"_table"},{"name":"_proc"},{"name":"_func"}]}
//	                            (SQLite: _schema and _table)
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
// Schema routes (bodies and objects in DreamFactory's shapes, field keys
// of its ColumnSchema in its order):
//
//	GET    /_schema                   names; fields=* (or a key list) table objects; ids=a,b those tables; as_list
//	POST   /_schema                   create {"resource":[{name, field:[…]}]} → {"resource":[{name}]};
//	                                  check_exist=true alters an existing table instead of refusing it
//	PUT    /_schema                   alter existing tables (fields not listed are dropped), create missing ones
//	PATCH  /_schema                   alter existing tables (listed fields added or changed)
//	DELETE /_schema                   drop tables named by ids or the body, all or none → {"resource":[{name}]}
//	GET    /_schema/{t}               table object: name, label, plural, is_view, primary_key, field, related, constraints
//	POST   /_schema/{t}               create t from a table object (or a list of fields)
//	PUT    /_schema/{t}               replace the field list: add, change, and drop the fields not listed
//	PATCH  /_schema/{t}               merge: add and change the fields listed
//	DELETE /_schema/{t}               drop → {"success":true}
//	GET    /_schema/{t}/_field[/{f}]  field objects; /_schema/{t}/{f} too (DreamFactory's older path)
//	POST   /_schema/{t}/_field[/{f}]  add fields ("Field 'x' already exists in table 't'.")
//	PUT    /_schema/{t}/_field[/{f}]  add or change fields (never drops)
//	PATCH  /_schema/{t}/_field[/{f}]  change existing fields (404 for others)
//	DELETE /_schema/{t}/_field[/{f}]  drop the field (ids or body for several)
//	GET    /_schema/{t}/_related[/{r}] relation objects
//	POST   /_schema/{t}/_related      belongs_to relations {field, ref_table, ref_field, ref_on_delete,
//	                                  ref_on_update} become foreign keys of t
//
// Writes answer with names ({"name":…} or {"resource":[{"name":…}]});
// fields=* (or a key list) answers with the objects as they now are.
//
// Procedure and function routes (PostgreSQL and MySQL; SQLite answers 501):
//
//	GET    /_proc, /_func             names; fields=* or ids=a,b describe them (params with
//	                                  name, position, param_type IN/OUT/INOUT, type, db_type, …)
//	GET    /_proc/{p}, /_func/{f}     call with the query string's values for parameters of those names
//	POST   /_proc/{p}, /_func/{f}     call with {"params":[{"name","value"}]} ({"a":1}, {"a":{"value":1}}
//	                                  and [values by position] too); the query string fills the rest;
//	                                  options wrapper (rename "resource") and returns (a simple type:
//	                                  answer the first value of the first row as that type)
//
// A function returning one value answers it bare (5, "text", true, null);
// rows answer {"resource":[…]}, several result sets (MySQL) a list of lists;
// a procedure with OUT or INOUT parameters answers an object of their
// values with the rows under "resource". Unknown routines are 404
// ("Procedure 'x' does not exist in the database."); errors a routine
// raises itself (RAISE EXCEPTION, SIGNAL) are 400 with its message.
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
// Unknown fields in records are ignored. A POST of one record of scalars
// with nothing related (the common case) is read from the body's text by
// the table's columns, without decoding it into a map, and its INSERT is
// built once per table, set of columns and schema (create.go); it answers
// exactly as the general path, which TestFastCreateMatchesGeneral checks. A member named after a relation
// ({ref}_by_{fk}, {child}_by_{fk}, {ref}_by_{junction}) writes the related
// records in the same transaction as the record (nested.go): under
// rollback=true a failing related record undoes the whole batch, otherwise
// its record with it. allow_related_delete=true lets a released child whose
// foreign key cannot be null be deleted.
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
// # Schema changes
//
// Field objects take DreamFactory's simple types (id, string, text,
// integer, bigint, boolean, float, double, decimal, date, time, datetime,
// timestamp, timestamp_on_create, timestamp_on_update, reference with
// ref_table, ref_field, ref_on_delete, ref_on_update, and the others of
// dialects.FieldType) with length, precision, scale, default, allow_null
// (true unless given), is_unique, is_index, is_primary_key and
// auto_increment. The native type always comes from the dialect's fixed
// table; a field given only a db_type gets the simple type and sizes read
// from it. Keys DreamFactory keeps in its own tables (label, description,
// picklist, validation, …) are ignored, so a table object read with GET
// can be sent back unchanged; a field whose settings do not change is left
// alone. A changed field keeps the settings it is not sent (PUT and PATCH
// alike; PUT on a table differs in dropping the fields it does not list).
// Changes add unique keys, indexes and foreign keys but never remove them,
// and a field whose default is an expression other than CURRENT_TIMESTAMP
// can be changed only when the request sends a default. The simple types
// read back as DreamFactory reports them: tinyint, smallint and mediumint
// as integer, mediumtext and longtext as text; PostgreSQL has no datetime
// (it reads back as timestamp), and timestamp_on_create/_on_update read
// back as timestamp with the CURRENT_TIMESTAMP default.
//
// A request's changes are made together or not at all: PostgreSQL runs
// them in one transaction; SQLite in one transaction on a connection whose
// foreign key enforcement is suspended (its ALTER TABLE cannot change or
// drop columns, so tables are rebuilt keeping rows, indexes, triggers and
// keys, and every changed table's keys are checked before the commit).
// MySQL commits each DDL statement, so there every change is checked
// against the schema before the first is made, each table's changes are
// one ALTER TABLE (which completes or leaves the table as it was), new
// tables are created first (each after the new tables it references) and
// dropped again if a later change fails, and drops are checked for
// references first. What MySQL cannot guarantee: when a request changes
// several existing tables and the database refuses a later one for its
// data (a value that does not convert, duplicates under a new unique key),
// the earlier tables keep their changes; the error names them in its
// message and in context.changed.
//
// A schema change forgets the introspected schema at once and moves the
// service's schema epoch in the system database (store.BumpSchemaEpoch,
// which also bumps the configuration version). Every instance reloads its
// snapshot within its reload interval (500 ms by default); the registry
// keeps the backends of unchanged services, and each backend compares the
// snapshot's epoch for its service with the last it saw at the start of
// its next request, forgetting its schema when it moved. Stored routines
// are listed from the catalog (pg_proc, information_schema) and cached
// for ten seconds; an unknown name or a call the database refuses as not
// matching reads them again at once.
//
// # Safety
//
// Every identifier in a query comes from the introspected schema (or the
// routine catalog) and is quoted by bun; every value is bound, MySQL INOUT
// values too (set into session variables by bound SET statements, on the
// call's own connection, cleared afterwards). PostgreSQL arguments are cast
// to the parameter types the catalog gives. The query language is parsed by
// proxy/filter, which compiles through the [filter.Resolver] this
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
