package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
)

// The fast reads on SQLite (a record by key, a plain page) run on the
// driver itself, on a connection of the pool (sql.Conn.Raw), instead of
// through database/sql's Stmt and Rows. SQLite sees the same thing either
// way: a statement prepared once per connection, then bind, step and
// reset. What goes is database/sql's and the driver's work around it,
// which on SQLite (the database is in the process) is a good part of a
// read: a Rows with its own context and a goroutine watching it, the
// argument conversion, a scan per value, and the driver's own goroutine
// that interrupts the statement when the request's context ends
// (modernc.org/sqlite's interruptOnDone) — about 20 allocations and two
// goroutines a read. The connection is taken from the pool with the
// request's context (a request that gives up while waiting for one leaves
// at once); the statement then runs without a context: a read by key or a
// page of rows in the process takes microseconds, and interrupting it
// would save nothing. Each value is the driver's own, as database/sql
// hands it to a Scanner, so the JSON is the same bytes as the general
// path's (TestFastReadsMatchGeneral).
//
// The statements are kept per driver connection (Backend.lite), tagged
// with the statement cache they belong to: when the schema changes
// (dropStatements) a connection finalizes its old statements the next time
// it is used, and Close finalizes all of them before the pool closes (a
// SQLite connection closed with statements left is kept alive by them).

// maxLiteStmts bounds the statements kept per connection; past it, the
// connection's statements are all finalized and prepared again as used.
const maxLiteStmts = 64

// liteConn is what a SQLite driver connection keeps for the fast reads.
// Only the holder of the connection (inside sql.Conn.Raw) touches it.
type liteConn struct {
	// gen is the statement cache of the schema the statements were
	// prepared for.
	gen   *stmtCache
	stmts map[string]driver.Stmt
	// used is when the connection last ran one of them (UnixNano); it is
	// the one field pruneClosed reads from outside the holder.
	used atomic.Int64
}

// closeAll finalizes the connection's statements.
func (lc *liteConn) closeAll() {
	for _, st := range lc.stmts {
		st.Close()
	}
	clear(lc.stmts)
}

// errNotDriver says that a read or insert cannot run on the SQLite or
// MySQL driver itself (a connection of another driver, an argument the
// driver would convert in a way of its own): it goes through
// database/sql.
var errNotDriver = errors.New("sqldb: not a connection the driver path knows")

// driverRead runs text (a shape's read by key or page) with args on a
// connection of the pool through the SQLite or MySQL driver and gives fn
// a reader of its rows, planned with plan (kept for the text, worked out
// on the first read). ok is false when it cannot (an argument
// database/sql would convert in a way of its own, a connection of another
// driver, one the driver found unusable before sending anything, which
// database/sql has then dropped): the caller reads through database/sql,
// which retries on another connection. Errors of the database come back
// as dbError makes them; fn's as it returns them. MySQL runs the query
// with ctx, which its driver watches; SQLite, in the process, without it
// (its driver would start a goroutine to interrupt it) unless watch is
// set (a list read with a filter or an order, which may scan or sort a
// whole table). times and decl are what newDriverReader takes: the
// selection's columns read as stored (SQLite; liteShape) and their
// declared types.
func (q *tableReq) driverRead(ctx context.Context, times []int, decl []string, text string, args []any,
	plan *atomic.Pointer[readPlan], watch bool, fn func(rr *rowReader) error) (ok bool, err error) {
	var argBuf [4]driver.NamedValue
	var nv []driver.NamedValue
	queryCtx := ctx
	if q.kind == dialects.SQLite {
		nv, ok = liteArgs(argBuf[:0], args)
		if !watch {
			queryCtx = context.Background()
		}
	} else {
		nv, ok = myArgs(argBuf[:0], args)
	}
	if !ok {
		return false, nil
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
		rows, err := st.QueryContext(queryCtx, nv)
		if err != nil {
			return err
		}
		rr, err := q.b.newDriverReader(rows, plan, len(q.table.Columns), q.table, times, decl)
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
		return false, nil
	case err != nil:
		return true, q.b.dbError(err)
	}
	return true, fnErr
}

// liteArgs appends args to dst as database/sql passes them to a driver
// without a value checker of its own (modernc.org/sqlite has none): each
// converted by driver.DefaultParameterConverter. ok is false for a value
// that database/sql would treat otherwise (a driver.Valuer).
func liteArgs(dst []driver.NamedValue, args []any) ([]driver.NamedValue, bool) {
	for i, a := range args {
		if _, ok := a.(driver.Valuer); ok {
			return nil, false
		}
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, false
		}
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return dst, true
}

// driverStmt returns the statement of text prepared on dc, a SQLite or
// MySQL driver connection of db held by the caller (inside sql.Conn.Raw),
// preparing it on first use. The statements are kept per connection
// (Backend.lite) with the statement cache of the schema they were
// prepared for: a schema change (dropStatements) closes a connection's
// old statements the next time it is used, as does going past
// maxLiteStmts. A connection seen for the first time first drops the
// entries of connections the pool has closed (pruneClosed). MySQL
// prepares with ctx (a round trip to the server); SQLite, in the
// process, without it (a context with a Done channel would cost the
// driver a goroutine).
func (b *Backend) driverStmt(ctx context.Context, dc any, db *sql.DB, text string) (driver.Stmt, error) {
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok || b.kind != dialects.SQLite && b.kind != dialects.MySQL {
		return nil, errNotDriver
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
	lc.used.Store(time.Now().UnixNano())
	st := lc.stmts[text]
	if lc.gen != gen || st == nil && len(lc.stmts) >= maxLiteStmts {
		lc.closeAll() // prepared for an older schema, or too many
		lc.gen, st = gen, nil
	}
	if st == nil {
		if b.kind == dialects.SQLite {
			ctx = context.Background()
		}
		var err error
		if st, err = pc.PrepareContext(ctx, text); err != nil {
			return nil, err
		}
		lc.stmts[text] = st
	}
	return st, nil
}

// driverQuery is driverStmt for a statement that returns rows.
func (b *Backend) driverQuery(ctx context.Context, dc any, db *sql.DB, text string) (driver.StmtQueryContext, error) {
	st, err := b.driverStmt(ctx, dc, db, text)
	if err != nil {
		return nil, err
	}
	sq, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, errNotDriver
	}
	return sq, nil
}

// staleStmts is how long a MySQL connection's statements are kept unused
// before pruneClosed takes the connection for closed: three times the idle
// time after which the pool closes a connection (dialects/mysql).
const staleStmts = 15 * time.Minute

// pruneClosed forgets the statements of MySQL connections the pool has
// closed (the server freed their statements with them), so that
// connections replaced over time (ConnMaxLifetime, ConnMaxIdleTime) are
// not kept. It cannot ask a connection it does not hold whether it is
// closed (the driver's IsValid reads state its holder writes), so it goes
// by when each was last used: longer ago than staleStmts, it is closed. A
// live connection taken for closed only prepares its statements again.
// SQLite's connections are never closed by the pool (no lifetime or idle
// limit), and forgetting a live one would leave its statements open, so
// they are kept.
func (b *Backend) pruneClosed() {
	if b.kind != dialects.MySQL {
		return
	}
	cut := time.Now().Add(-staleStmts).UnixNano()
	b.lite.Range(func(k, v any) bool {
		if v.(*liteConn).used.Load() < cut {
			b.lite.Delete(k)
		}
		return true
	})
}

// closeLite finalizes the statements the fast reads prepared on db's
// connections, each on its own connection, before db closes. A connection
// in use for longer than a second keeps its statements (and stays open
// until they go).
func (b *Backend) closeLite(db *sql.DB) {
	n := 0
	b.lite.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for max := db.Stats().MaxOpenConnections; n > 0 && (max <= 0 || len(held) < max); {
		c, err := db.Conn(ctx)
		if err != nil {
			break
		}
		held = append(held, c)
		_ = c.Raw(func(dc any) error {
			if v, ok := b.lite.LoadAndDelete(dc); ok {
				v.(*liteConn).closeAll()
				n--
			}
			return nil
		})
	}
	b.lite.Clear()
}

// newDriverReader wraps rows, a result of the SQLite or MySQL driver for
// a fast read, in a reader from the pool, with the plan kept in plan
// (worked out from rows' columns on the first read, as newRowReader works
// it out from database/sql's, which asks the driver the same). times are
// the columns selected as +column whose text the reader turns into times
// (SQLite; liteTime) and decl the declared types of the result's columns
// for them.
func (b *Backend) newDriverReader(rows driver.Rows, plan *atomic.Pointer[readPlan], visible int, table *dialects.Table,
	times []int, decl []string) (*rowReader, error) {
	var p *rowjson.Plan
	if rp := plan.Load(); rp != nil && rp.visible == visible && rp.hints == table {
		p = rp.p
	}
	names := rows.Columns()
	if p == nil || p.Len() != len(names) {
		types, ok := rows.(driver.RowsColumnTypeDatabaseTypeName)
		if !ok || len(times) > 0 && len(decl) != len(names) {
			return nil, errNotDriver
		}
		cols := make([]rowjson.ResultColumn, len(names))
		for i, name := range names {
			cols[i] = rowjson.ResultColumn{Name: name, DatabaseType: types.ColumnTypeDatabaseTypeName(i)}
			if len(times) > 0 && decl[i] != "" {
				cols[i].DatabaseType = decl[i]
			}
		}
		p = rowjson.NewPlanOf(b.kind, cols, rowjson.Options{Table: table, Visible: visible})
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
	r.times, r.decl = times, decl
	return r, nil
}

// nextDriver is Next on a reader of driver rows.
func (r *rowReader) nextDriver() (bool, error) {
	if r.dclosed {
		return false, nil
	}
	switch err := r.drows.Next(r.vals); {
	case err == io.EOF:
		return false, nil
	case err != nil:
		return false, err
	}
	for _, i := range r.times {
		if s, ok := r.vals[i].(string); ok && !keepDateTime(r.decl[i], s) {
			r.vals[i] = liteTime(s)
		}
	}
	for i, v := range r.vals {
		r.rj.Set(i, v)
	}
	return true, nil
}

// closeDriver is Close on a reader of driver rows.
func (r *rowReader) closeDriver() error {
	if r.dclosed {
		return nil
	}
	r.dclosed = true
	return r.drows.Close()
}

// Dates and times. modernc.org/sqlite turns the text of a column declared
// DATE, DATETIME or TIMESTAMP into a time.Time (conn.parseTime): it tries
// the form of time.Time's String first, then seven layouts in turn, and
// every one that fails builds a time.ParseError. For the commonest form,
// "2006-01-02 15:04:05", that is three failures, about nine allocations
// and four parses per value, the largest part of reading a row. The fast
// reads therefore select those columns as +column (the same value without
// a declared type, which the driver hands over as stored) and liteTime
// does what the driver does with it, trying that form directly. It is not
// done when the DSN changes how the driver reads times (liteTimesDSN).

// liteTimeLayouts are the driver's layouts (parseTimeFormats), in its
// order.
var liteTimeLayouts = [...]string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// liteTime is what the driver makes of s, the text of a DATE, DATETIME or
// TIMESTAMP column: a time.Time when it reads one, else s itself.
func liteTime(s string) any {
	if plainDateTime(s) {
		// Neither time.Time's String form nor a layout before the
		// third reads it (they need a zone offset or a 'T'), nor one
		// after it (a 'T', or less text): the third decides.
		if t, err := time.Parse(liteTimeLayouts[2], s); err == nil {
			return t
		}
		return s
	}
	str := s
	if x := strings.Index(s, "m="); x > 0 {
		str = s[:x]
	}
	if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", strings.TrimSpace(str)); err == nil {
		return t
	}
	ts := strings.TrimSuffix(s, "Z")
	for _, f := range liteTimeLayouts {
		if t, err := time.Parse(f, ts); err == nil {
			return t
		}
	}
	return s
}

// keepDateTime reports whether s, the text of a column declared decl,
// is written the same whether liteTime makes it a time or not, so that it
// can stay text: the form 2006-01-02 15:04:05 in a DATETIME or TIMESTAMP
// column. Read as a time it is in UTC without fraction, which rowjson
// writes in that same form (cDateTime); not read as one (a month 13), it
// is written as the text it is. A DATE column writes only the date of a
// time, so its text is always read.
func keepDateTime(decl, s string) bool {
	return (decl == "DATETIME" || decl == "TIMESTAMP") && plainDateTime(s)
}

// plainDateTime reports whether s has the form 2006-01-02 15:04:05 (any
// digits).
func plainDateTime(s string) bool {
	if len(s) != 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != ' ' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// liteTimesDSN reports whether the driver reads times by default with dsn:
// none of the parameters that change it.
func liteTimesDSN(dsn string) bool {
	for _, p := range []string{"_timezone", "_inttotime", "_texttotime", "_time_integer_format"} {
		if strings.Contains(dsn, p) {
			return false
		}
	}
	return true
}

// liteShape sets sh's texts for the driver: byID and page with the DATE,
// DATETIME and TIMESTAMP columns (as the driver tells them: the declared
// type in capitals) selected as +column under their own name.
func (q *tableReq) liteShape(sh *shape) {
	sh.liteByID, sh.litePage = sh.byID, sh.page
	t := q.table
	if !liteTimesDSN(q.b.conn.DSN) {
		return
	}
	var times []int
	decl := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		switch d := strings.ToUpper(c.DBType); d {
		case "DATE", "DATETIME", "TIMESTAMP":
			times = append(times, i)
			decl[i] = d
		}
	}
	if len(times) == 0 {
		return
	}
	all := q.b.allColumns(q.db, t)
	gen := q.db.QueryGen()
	var buf []byte
	for i, col := range t.Columns {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		if decl[i] != "" {
			buf = append(buf, '+')
		}
		buf = gen.AppendIdent(buf, t.Name)
		buf = append(buf, '.')
		buf = gen.AppendIdent(buf, col.Name)
		if decl[i] != "" {
			buf = append(buf, " AS "...)
			buf = gen.AppendIdent(buf, col.Name)
		}
	}
	for _, text := range []string{sh.byID, sh.page} {
		if text != "" && !strings.Contains(text, all) {
			return
		}
	}
	lite := string(buf)
	sh.liteAll, sh.liteCols = all, lite
	if sh.byID != "" {
		sh.liteByID = strings.Replace(sh.byID, all, lite, 1)
	}
	if sh.page != "" {
		sh.litePage = strings.Replace(sh.page, all, lite, 1)
	}
	sh.liteTimes, sh.liteDecl = times, decl
}

// liteListText returns the text a compiled list read lr runs with on
// SQLite's driver (runList): lr's own, its DATE, DATETIME and TIMESTAMP
// columns selected as liteShape selects them, with the reader's times and
// declared types; "" when lr selects anything but every column of the
// table in order (fields, a role's field list that leaves some out),
// which database/sql reads.
func (q *tableReq) liteListText(lr *listRead) (text string, times []int, decl []string) {
	if q.kind != dialects.SQLite || lr.visible != len(q.table.Columns) || lr.hints != q.table {
		return "", nil, nil
	}
	cols := q.b.allColumns(q.db, q.table)
	all := "SELECT " + cols + " FROM "
	if !strings.HasPrefix(lr.text, all) {
		return "", nil, nil
	}
	sh := q.shapeOf()
	if sh.liteCols == "" || len(sh.liteTimes) == 0 {
		return lr.text, nil, nil
	}
	if sh.liteAll != cols {
		return "", nil, nil
	}
	return "SELECT " + sh.liteCols + " FROM " + lr.text[len(all):], sh.liteTimes, sh.liteDecl
}
