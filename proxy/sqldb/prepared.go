package sqldb

import (
	"container/list"
	"context"
	"database/sql"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/portcullis-dev/portcullis/dialects"
)

// Prepared reads. bun writes every value into the query text, so each
// call with another id or filter value is a new statement the database
// parses and plans again. Reads of tables instead bind their values: the
// query is built by bun as before, but each value argument is written as
// a placeholder ($n on PostgreSQL, ? elsewhere) and sent apart, so the
// text is the same for the same shape. The statement of a shape is
// prepared once per connection and kept in a bounded cache (stmtCache),
// dropped with the schema (InvalidateSchema) so that a schema change
// takes effect at once. Identifiers and lists (IN) stay in the text.

// maxStatements bounds the prepared shapes a backend keeps.
const maxStatements = 256

// binds collects the values of one query, in placeholder order.
type binds struct {
	pg   bool
	vals []any
}

// bound is one value argument written as a placeholder.
type bound struct {
	b *binds
	v any
}

// AppendQuery writes the placeholder and records the value.
func (a bound) AppendQuery(_ schema.QueryGen, b []byte) ([]byte, error) {
	a.b.vals = append(a.b.vals, a.v)
	if a.b.pg {
		return strconv.AppendInt(append(b, '$'), int64(len(a.b.vals)), 10), nil
	}
	return append(b, '?'), nil
}

// wrap returns args with every plain value (not an identifier, list or
// other query fragment, and not nil) replaced by a placeholder.
func (bs *binds) wrap(args []any) []any {
	if bs == nil || len(args) == 0 {
		return args
	}
	out := make([]any, len(args))
	for i, a := range args {
		if bindable(a) {
			out[i] = bound{b: bs, v: a}
		} else {
			out[i] = a
		}
	}
	return out
}

// stmtCache keeps the prepared statements of one connection pool, least
// recently used first out.
type stmtCache struct {
	db *sql.DB

	mu    sync.Mutex
	items map[string]*list.Element // of *cachedStmt
	lru   list.List
	done  bool
}

type cachedStmt struct {
	text string
	stmt *sql.Stmt
	// once marks a statement prepared while the cache was being dropped:
	// it is not kept, and is closed once its query has started.
	once bool
	// plan is how the results of the statement are encoded, worked out
	// on its first read (rows.go).
	plan atomic.Pointer[readPlan]
}

// release closes a statement that is not kept in the cache, once the
// query on it has started (an open result keeps it until closed).
func (cs *cachedStmt) release() {
	if cs.once {
		cs.stmt.Close()
	}
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, items: map[string]*list.Element{}}
}

// get returns the statement of text, preparing it on first use. The
// caller calls release once its query has started.
func (c *stmtCache) get(ctx context.Context, text string) (*cachedStmt, error) {
	c.mu.Lock()
	el, ok := c.items[text]
	cs := c.hit(el, ok)
	c.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	return c.prepare(ctx, text)
}

// getBytes is get for text in a buffer: the text is copied only when a
// statement is prepared.
func (c *stmtCache) getBytes(ctx context.Context, text []byte) (*cachedStmt, error) {
	c.mu.Lock()
	el, ok := c.items[string(text)]
	cs := c.hit(el, ok)
	c.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	return c.prepare(ctx, string(text))
}

// hit returns the statement of a cache entry found (ok) and marks it
// used; nil when there is none. c.mu is held.
func (c *stmtCache) hit(el *list.Element, ok bool) *cachedStmt {
	if !ok || c.done {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cachedStmt)
}

// prepare prepares text and keeps it (evicting the least recently used).
func (c *stmtCache) prepare(ctx context.Context, text string) (*cachedStmt, error) {
	stmt, err := c.db.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		// Dropped meanwhile: use it once (release closes it).
		return &cachedStmt{text: text, stmt: stmt, once: true}, nil
	}
	if el, ok := c.items[text]; ok { // prepared twice at once: keep one
		stmt.Close()
		c.lru.MoveToFront(el)
		return el.Value.(*cachedStmt), nil
	}
	cs := &cachedStmt{text: text, stmt: stmt}
	c.items[text] = c.lru.PushFront(cs)
	for c.lru.Len() > maxStatements {
		back := c.lru.Back()
		c.lru.Remove(back)
		old := back.Value.(*cachedStmt)
		delete(c.items, old.text)
		old.stmt.Close() // waits for rows still open on it
	}
	return cs, nil
}

// drop closes every statement (those in use once their rows are closed).
func (c *stmtCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	for el := c.lru.Front(); el != nil; el = el.Next() {
		el.Value.(*cachedStmt).stmt.Close()
	}
	c.items = nil
	c.lru.Init()
}

// statements returns the statement cache of db.
func (b *Backend) statements(db *sql.DB) *stmtCache {
	if c := b.stmts.Load(); c != nil && c.db == db {
		return c
	}
	c := newStmtCache(db)
	if old := b.stmts.Swap(c); old != nil {
		old.drop()
	}
	return c
}

// dropStatements forgets every prepared statement (schema change, close).
func (b *Backend) dropStatements() {
	if old := b.stmts.Swap(nil); old != nil {
		old.drop()
	}
}

// rows runs sq, built with values from bs wrapped (binds.wrap), as a
// prepared statement of db's pool; in a transaction, as a one-off bound
// query on it. The statement is returned too (nil for a one-off query):
// it keeps the plan of its results (newRowReader).
func (q *tableReq) rows(ctx context.Context, db bun.IDB, sq *bun.SelectQuery, bs *binds) (*sql.Rows, *cachedStmt, error) {
	buf := getBuf()
	defer putBuf(buf)
	text, err := sq.AppendQuery(q.db.QueryGen(), (*buf)[:0])
	*buf = text
	if err != nil {
		return nil, nil, err
	}
	if d, ok := db.(*bun.DB); ok {
		cs, err := q.b.statements(d.DB).getBytes(ctx, text)
		return queryStmt(ctx, cs, err, bs.vals)
	}
	return q.query(ctx, db, string(text), bs.vals)
}

// query runs text with vals bound, as rows does.
func (q *tableReq) query(ctx context.Context, db bun.IDB, text string, vals []any) (*sql.Rows, *cachedStmt, error) {
	st, cs, err := q.stmtFor(ctx, db, text)
	if err != nil {
		return nil, nil, err
	}
	if st != nil {
		rows, err := st.QueryContext(ctx, vals...)
		cs.release()
		if err != nil {
			return nil, nil, err
		}
		return rows, cs, nil
	}
	if r := rawDB(db); r != nil {
		rows, err := r.QueryContext(ctx, text, vals...)
		return rows, nil, err
	}
	rows, err := db.QueryContext(ctx, text, vals...)
	return rows, nil, err
}

// queryStmt runs the prepared statement cs (or returns err, the failure
// to get it) with vals.
func queryStmt(ctx context.Context, cs *cachedStmt, err error, vals []any) (*sql.Rows, *cachedStmt, error) {
	if err != nil {
		return nil, nil, err
	}
	rows, err := cs.stmt.QueryContext(ctx, vals...)
	cs.release()
	if err != nil {
		return nil, nil, err
	}
	return rows, cs, nil
}

// stmtFor returns the prepared statement to run text with on db, and its
// cache entry: on the pool, the cached statement (prepared on first use);
// in a transaction, the cached statement bound to it (database/sql
// prepares it once per connection) when the pool has prepared the text,
// else nil: the text then runs one-off (preparing on the pool from inside
// a transaction could wait for the connection the transaction holds).
// The caller calls cs.release once its statement has started.
func (q *tableReq) stmtFor(ctx context.Context, db bun.IDB, text string) (*sql.Stmt, *cachedStmt, error) {
	switch d := db.(type) {
	case *bun.DB:
		cs, err := q.b.statements(d.DB).get(ctx, text)
		if err != nil {
			return nil, nil, err
		}
		return cs.stmt, cs, nil
	case bun.Tx:
		c := q.b.stmts.Load()
		if c == nil || c.db != q.db.DB {
			return nil, nil, nil
		}
		c.mu.Lock()
		el, ok := c.items[text]
		cs := c.hit(el, ok)
		c.mu.Unlock()
		if cs == nil {
			return nil, nil, nil
		}
		// A statement closed meanwhile is prepared again on the
		// transaction's connection; the transaction closes it.
		return d.Tx.StmtContext(ctx, cs.stmt), cs, nil
	}
	return nil, nil, nil
}

// sqlRunner is what *sql.DB, *sql.Tx and *sql.Conn have in common.
type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rawDB returns the database/sql handle under db, which runs a text as it
// is (bun's own methods would format it again); nil for another IDB.
func rawDB(db bun.IDB) sqlRunner {
	switch d := db.(type) {
	case *bun.DB:
		return d.DB
	case bun.Tx:
		return d.Tx
	case bun.Conn:
		return d.Conn
	}
	return nil
}

// newBinds returns the collector for a query on kind.
func newBinds(kind dialects.Kind) *binds { return &binds{pg: kind == dialects.Postgres} }

// bound formats query with args, every value a bound parameter, and
// returns the text and the values.
func (q *tableReq) bound(query string, args []any) (string, []any) {
	bs := newBinds(q.kind)
	text := q.db.QueryGen().FormatQuery(query, bs.wrap(args)...)
	return text, bs.vals
}

// exec runs a statement with its values bound: prepared on db's pool,
// or in a transaction as stmtFor says.
func (q *tableReq) exec(ctx context.Context, db bun.IDB, query string, args []any) (sql.Result, error) {
	text, vals := q.bound(query, args)
	st, cs, err := q.stmtFor(ctx, db, text)
	if err != nil {
		return nil, err
	}
	if st != nil {
		defer cs.release()
		return st.ExecContext(ctx, vals...)
	}
	if r := rawDB(db); r != nil {
		return r.ExecContext(ctx, text, vals...)
	}
	return db.ExecContext(ctx, query, args...)
}

// queryRow runs a one-row query with its values bound and scans it.
func (q *tableReq) queryRow(ctx context.Context, db bun.IDB, query string, args []any, dest ...any) error {
	text, vals := q.bound(query, args)
	st, cs, err := q.stmtFor(ctx, db, text)
	if err != nil {
		return err
	}
	if st != nil {
		defer cs.release()
		return st.QueryRowContext(ctx, vals...).Scan(dest...)
	}
	if r := rawDB(db); r != nil {
		return r.QueryRowContext(ctx, text, vals...).Scan(dest...)
	}
	return db.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// countWhere returns how many records of the table match cond (with args) and
// the grant's row condition, with the values bound.
func (q *tableReq) countWhere(ctx context.Context, db bun.IDB, cond string, args []any) (int64, error) {
	bs := newBinds(q.kind)
	sq := q.whereBound(db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).ColumnExpr("COUNT(*)"), cond, args, bs)
	text, err := sq.AppendQuery(q.db.QueryGen(), nil)
	if err != nil {
		return 0, err
	}
	var n int64
	st, cs, err := q.stmtFor(ctx, db, string(text))
	switch {
	case err != nil:
		return 0, err
	case st != nil:
		defer cs.release()
		err = st.QueryRowContext(ctx, bs.vals...).Scan(&n)
	case rawDB(db) != nil:
		err = rawDB(db).QueryRowContext(ctx, string(text), bs.vals...).Scan(&n)
	default:
		n64, cerr := q.where(db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)), cond, args).Count(ctx)
		n, err = int64(n64), cerr
	}
	return n, err
}
