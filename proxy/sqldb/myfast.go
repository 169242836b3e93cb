package sqldb

import (
	"database/sql/driver"
)

// The fast reads on MySQL (a record by key, a plain page) run on the
// driver (go-sql-driver/mysql) on a connection of the pool
// (sql.Conn.Raw), as on SQLite (litefast.go), instead of through
// database/sql's Stmt and Rows. The server sees the same thing either
// way: the statement prepared once per connection, then COM_STMT_EXECUTE
// with the values bound. What goes is database/sql's work around each
// query: a Rows with a context of its own and a goroutine watching it
// (started per query, woken when the rows close), the Stmt's search for
// the connection's statement, and a conversion and scan per value. The
// query runs with the request's context, which the driver watches itself
// (a request that gives up ends the query as before). A connection the
// driver finds unusable before anything was sent (driver.ErrBadConn) is
// dropped and the read goes through database/sql, which retries on
// another one as it always did. Each value is the driver's own, as
// database/sql hands it to a Scanner, so the JSON is the same bytes as the
// general path's (TestMySQLDriverReadsMatchGeneral).
//
// The statements are kept per driver connection in Backend.lite (driverStmt,
// shared with SQLite): a schema change closes a connection's old
// statements the next time it is used, a closed connection's entry is
// dropped when a new connection is first seen, and Close forgets them (the
// server frees them with their connections).

// myArgs appends args to dst as the MySQL driver takes them for the fast
// reads: int64 and string, which its CheckNamedValue keeps as they are.
// ok is false for anything else (the read goes through database/sql).
func myArgs(dst []driver.NamedValue, args []any) ([]driver.NamedValue, bool) {
	for i, a := range args {
		switch a.(type) {
		case int64, string:
		default:
			return nil, false
		}
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return dst, true
}

// nativeMy turns the driver path of the MySQL fast reads on; tests turn it
// off to compare with database/sql's (export_test.go).
var nativeMy = true
