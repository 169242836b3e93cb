package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
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
// The statements are kept per driver connection in Backend.lite (the
// same liteConn as SQLite's): a schema change closes a connection's old
// statements the next time it is used, a closed connection's entry is
// dropped when a new connection is first seen, and Close forgets them (the
// server frees them with their connections).

// errNotMy says that a read cannot run on the MySQL driver (an argument
// the driver would convert, a connection of another driver): it goes
// through database/sql.
var errNotMy = errors.New("sqldb: not a MySQL driver connection")

// myRead is liteRead for MySQL: it runs text (sh.byID or sh.page) with
// args on a connection of the pool through the driver and gives fn a
// reader of its rows, planned with plan. ok is false when the read must
// go through database/sql instead (see errNotMy, driver.ErrBadConn).
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
		st, err := q.b.myStmt(ctx, dc, q.db.DB, text)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, nv)
		if err != nil {
			return err
		}
		rr, err := newMyReader(rows, plan, len(q.table.Columns), q.table)
		if err != nil {
			rows.Close()
			return err
		}
		defer rr.release()
		fnErr = fn(rr)
		return nil
	})
	switch {
	case errors.Is(err, errNotMy), errors.Is(err, driver.ErrBadConn):
		// database/sql has dropped a bad connection (Raw); the general
		// path retries on another.
		return false, nil
	case err != nil:
		return true, q.b.dbError(err)
	}
	return true, fnErr
}

// myStmt returns the statement of text prepared on dc, a MySQL driver
// connection of db held by the caller, preparing it on first use.
func (b *Backend) myStmt(ctx context.Context, dc any, db *sql.DB, text string) (driver.StmtQueryContext, error) {
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok || b.kind != dialects.MySQL {
		return nil, errNotMy
	}
	gen := b.statements(db)
	var lc *liteConn
	if v, ok := b.lite.Load(dc); ok {
		lc = v.(*liteConn)
	} else {
		b.pruneClosed()
		lc = &liteConn{gen: gen, stmts: map[string]driver.Stmt{}}
		b.lite.Store(dc, lc)
	}
	st := lc.stmts[text]
	if lc.gen != gen || st == nil && len(lc.stmts) >= maxLiteStmts {
		lc.closeAll() // prepared for an older schema, or too many
		lc.gen, st = gen, nil
	}
	if st == nil {
		var err error
		if st, err = pc.PrepareContext(ctx, text); err != nil {
			return nil, err
		}
		lc.stmts[text] = st
	}
	sq, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, errNotMy
	}
	return sq, nil
}

// pruneClosed forgets the statements of connections the pool has closed
// (their statements went with them on the server), so that connections
// replaced over time (ConnMaxLifetime, ConnMaxIdleTime) are not kept.
func (b *Backend) pruneClosed() {
	b.lite.Range(func(k, _ any) bool {
		if v, ok := k.(driver.Validator); ok && !v.IsValid() {
			b.lite.Delete(k)
		}
		return true
	})
}

// newMyReader wraps rows, a MySQL driver result of a fast read, in a
// reader from the pool, with the plan kept in plan (worked out from the
// driver's columns on the first read, as newRowReader works it out from
// database/sql's, which asks the driver the same).
func newMyReader(rows driver.Rows, plan *atomic.Pointer[readPlan], visible int, table *dialects.Table) (*rowReader, error) {
	var p *rowjson.Plan
	if rp := plan.Load(); rp != nil && rp.visible == visible && rp.hints == table {
		p = rp.p
	}
	names := rows.Columns()
	if p == nil || p.Len() != len(names) {
		types, ok := rows.(driver.RowsColumnTypeDatabaseTypeName)
		if !ok {
			return nil, errNotMy
		}
		cols := make([]rowjson.ResultColumn, len(names))
		for i, name := range names {
			cols[i] = rowjson.ResultColumn{Name: name, DatabaseType: types.ColumnTypeDatabaseTypeName(i)}
		}
		p = rowjson.NewPlanOf(dialects.MySQL, cols, rowjson.Options{Table: table, Visible: visible})
		plan.Store(&readPlan{visible: visible, hints: table, p: p})
	}
	n := p.Len()
	if visible < 0 || visible > n {
		visible = n
	}
	r := readers.Get().(*rowReader)
	p.Reset(&r.own, nil)
	if cap(r.vals) < n {
		r.vals = make([]driver.Value, n)
	}
	r.rj, r.drows, r.vals, r.visible, r.ncols = &r.own, rows, r.vals[:n], visible, n
	return r, nil
}

// nativeMy turns the driver path of the MySQL fast reads on; tests turn it
// off to compare with database/sql's (export_test.go).
var nativeMy = true
