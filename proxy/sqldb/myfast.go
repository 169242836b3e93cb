package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync/atomic"
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

// myRead is liteRead for MySQL: it runs text (sh.byID or sh.page) with
// args on a connection of the pool through the driver and gives fn a
// reader of its rows, planned with plan. ok is false when the read must
// go through database/sql instead (see errNotDriver, driver.ErrBadConn).
func (q *tableReq) myRead(ctx context.Context, text string, args []any, plan *atomic.Pointer[readPlan],
	fn func(rr *rowReader) error) (ok bool, err error) {
	var argBuf [4]driver.NamedValue
	nv := argBuf[:0]
	for i, a := range args {
		switch a.(type) {
		case int64, string: // the driver's CheckNamedValue keeps them as they are
		default:
			return false, nil
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	conn, err := q.db.DB.Conn(ctx)
	if err != nil {
		return true, q.b.dbError(err)
	}
	defer conn.Close()
	var fnErr error
	err = conn.Raw(func(dc any) error {
		st, err := q.b.driverQuery(ctx, dc, q.db.DB, text)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, nv)
		if err != nil {
			return err
		}
		rr, err := q.b.newDriverReader(rows, plan, len(q.table.Columns), q.table, nil, nil)
		if err != nil {
			rows.Close()
			return err
		}
		defer rr.release()
		fnErr = fn(rr)
		return nil
	})
	switch {
	case errors.Is(err, errNotDriver), errors.Is(err, driver.ErrBadConn):
		// database/sql has dropped a bad connection (Raw); the general
		// path retries on another.
		return false, nil
	case err != nil:
		return true, q.b.dbError(err)
	}
	return true, fnErr
}

// nativeMy turns the driver path of the MySQL fast reads on; tests turn it
// off to compare with database/sql's (export_test.go).
var nativeMy = true
