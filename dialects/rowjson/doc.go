// Package rowjson turns query results (*sql.Rows) into JSON, row by row,
// with the same bytes on SQLite, PostgreSQL and MySQL for the same data.
//
// [New] reads the column types once; each [Rows.Next] scans into the same
// cells (sql.Scanner values that keep the driver's value without a copy),
// and [Rows.AppendObject] appends the row as a JSON object with lowercased
// keys in column order, with no map per row and no reflection per value.
// [Rows.WriteArray] streams a whole result to an io.Writer. [ReadAll] and
// [Rows.Record] give ordered [Record]s for small results, such as the
// records returned after a write. [Options] can keep only some columns
// (Only, Visible) or drop columns a role may not read (Omit) without
// re-encoding.
//
// # Value formats
//
// Every engine's driver returns different Go types for the same column
// (see the library survey); rowjson writes one format per column type:
//
//   - NULL: null.
//   - Integers (any size): JSON numbers with every digit, so a BIGINT above
//     2^53 stays exact. Unsigned BIGINT too.
//   - Booleans: true/false. PostgreSQL boolean; SQLite columns declared
//     BOOLEAN (any non-zero number is true); MySQL TINYINT(1) and BIT(1)
//     when [Options.Table] says the column is boolean (the wire type does
//     not). MySQL BIT(n) otherwise: an unsigned number.
//   - Decimals (DECIMAL, NUMERIC, money kept as decimal): the exact digits
//     as a JSON number ("12.50" is written 12.50, never through a float).
//     SQLite stores decimals as integers or floats; they are written with
//     the declared scale (12 in DECIMAL(10,2) is 12.00) when that does not
//     change the value, so SQLite matches the other engines. Text that is
//     not a JSON number (NaN) is written as a string.
//   - Floats: the shortest text that reads back as the same value, as
//     encoding/json writes it (0.1, 1e+21); PostgreSQL real and MySQL
//     FLOAT as 32-bit values (2.1, not 2.0999999046325684). NaN and the
//     infinities, which JSON cannot hold, are the strings "NaN",
//     "Infinity" and "-Infinity".
//   - Text (CHAR, VARCHAR, TEXT, ENUM, UUID, …): JSON strings, escaped as
//     encoding/json escapes them (<, > and & too, as \u003c, \u003e and
//     \u0026); invalid UTF-8 becomes U+FFFD.
//   - DATE: "2006-01-02".
//   - TIME: "15:04:05", with fractional seconds when present
//     ("15:04:05.25"); time values the driver returns as text (all three
//     do, and MySQL's may pass 24:00:00) are written as they are.
//   - DATETIME and TIMESTAMP (with or without time zone): "2006-01-02
//     15:04:05" in UTC, with fractional seconds only when present
//     ("2006-01-02 15:04:05.5"), DreamFactory's style. Zoned values are
//     converted to UTC; zone-less values are taken as they are stored.
//   - JSON and JSONB: the raw JSON document, compacted (insignificant
//     space removed; key order is the engine's: PostgreSQL jsonb and
//     MySQL JSON sort keys, SQLite, MariaDB and PostgreSQL json keep
//     them as written). Text in a JSON column
//     that is not valid JSON is written as a string.
//   - Binary (BLOB, BYTEA, VARBINARY): standard base64 in a string.
//   - Anything else a driver returns as text (PostgreSQL intervals, arrays,
//     inet, …) is a string.
//
// SQLite keeps the type a value was stored with: a value of another type
// than the column's declared one is written as it is (text in an INTEGER
// column is a string, a BLOB is base64, a DATETIME column's text that is
// not a time is a string).
//
// Keys are the result's column names lowercased; when two result columns
// share a lowercased name, only the first is written.
//
// The package imports the dialects root and the standard library only.
package rowjson
