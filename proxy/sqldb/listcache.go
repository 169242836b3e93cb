package sqldb

import (
	"context"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
)

// Compiled list reads. A list read (GET _table/{table} without group,
// having, related or count_only) parses and compiles its filter, order and
// fields into SQL; done on every request that is most of what a filtered
// page costs beyond the query itself. The compiled read is kept per schema
// (in cachedSchema, so a schema change drops it at once), keyed by
// everything that decides its SQL and values: the table, the fields,
// filter and order texts, and the caller's grant (its field list and row
// filters, by content, so two callers share an entry only when the grant
// would compile the same way). Its values stay bound parameters and its
// LIMIT and OFFSET are parameters too, so one text is prepared once for
// every page of every request of the same shape. A request that fails to
// compile is not kept: it fails the same way every time, with the same
// error.

// maxListReads bounds the compiled list reads kept per schema; past it an
// arbitrary entry makes room.
const maxListReads = 256

// maxListKey is the longest key kept: a read with longer texts (a filter
// with a long in list) is compiled on every request, so a few such
// requests cannot pin much memory.
const maxListKey = 4 << 10

// listRead is a compiled list read.
type listRead struct {
	// text is the SELECT, ending in LIMIT and OFFSET placeholders; vals
	// are the values of its other placeholders.
	text string
	vals []any
	// count is SELECT COUNT(*) with the same conditions (include_count),
	// countVals its values.
	count     string
	countVals []any
	// visible and hints are the selection's, for newRowReader.
	visible int
	hints   *dialects.Table
	// pgText is text on PostgreSQL as pgList runs it, tagged with this
	// compiled read (as shape's pgPage is), when the read is kept; pgPlan
	// is its plan.
	pgText string
	pgPlan atomic.Pointer[pgPlan]
	// liteText is text on SQLite as runList runs it on the driver
	// (liteListText), when the read is kept and selects every column;
	// liteTimes and liteDecl are the reader's, litePlan the plan of its
	// results.
	liteText  string
	liteTimes []int
	liteDecl  []string
	litePlan  atomic.Pointer[readPlan]
}

// listReads holds the compiled list reads of one schema.
type listReads struct {
	mu sync.RWMutex
	m  map[string]*listRead
}

func (c *listReads) get(key []byte) *listRead {
	c.mu.RLock()
	lr := c.m[string(key)]
	c.mu.RUnlock()
	return lr
}

func (c *listReads) put(key []byte, lr *listRead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*listRead)
	}
	if len(c.m) >= maxListReads {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[string(key)] = lr
}

// listCacheable reports whether get answers the request from a compiled
// list read (runList): no group, having, related or count_only.
func (q *tableReq) listCacheable() bool {
	o := q.opts
	return !o.countOnly && strings.TrimSpace(o.group) == "" && strings.TrimSpace(o.having) == "" &&
		strings.TrimSpace(o.related) == ""
}

// listReadOf returns the compiled list read of the request, from the
// schema's cache or compiled now (and kept when the schema is the cached
// one). Its errors are those of compiling the request (400, 403).
func (q *tableReq) listReadOf() (*listRead, error) {
	c := q.b.schema.Load()
	if c == nil || c.s != q.schema {
		return q.buildListRead() // an older schema than the cached one: build, do not keep
	}
	kb := getBuf()
	defer putBuf(kb)
	key := q.listKey((*kb)[:0])
	*kb = key
	if lr := c.reads.get(key); lr != nil {
		return lr, nil
	}
	lr, err := q.buildListRead()
	if err != nil {
		return nil, err
	}
	if len(key) <= maxListKey {
		if q.kind == dialects.Postgres {
			// Only a read that is kept runs on pgx: each text it runs is
			// prepared on every connection, which pays only when reused.
			lr.pgText = lr.text + " /* pc:" + strconv.FormatUint(shapes.Add(1), 10) + " */"
		}
		lr.liteText, lr.liteTimes, lr.liteDecl = q.liteListText(lr)
		c.reads.put(key, lr)
	}
	return lr, nil
}

// listKey appends the cache key of the request's list read to b: every
// part length-prefixed, so that no two requests share a key unless their
// parts are equal.
func (q *tableReq) listKey(b []byte) []byte {
	o := q.opts
	b = appendKeyPart(b, q.table.Name)
	b = appendKeyPart(b, o.fields)
	b = appendKeyPart(b, o.filter)
	b = appendKeyPart(b, o.order)
	g := q.grant
	if g == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(g.Fields))+1)
	for _, f := range g.Fields {
		b = appendKeyPart(b, f)
	}
	b = appendKeyPart(b, g.FilterOp)
	b = binary.AppendUvarint(b, uint64(len(g.Filters)))
	for _, f := range g.Filters {
		b = appendKeyPart(b, f.Name)
		b = appendKeyPart(b, f.Operator)
		b = appendKeyPart(b, f.Value)
	}
	return b
}

func appendKeyPart(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// buildListRead compiles the request's list read with get's own steps, so
// that it fails exactly as get would.
func (q *tableReq) buildListRead() (*listRead, error) {
	qu, err := q.compileWhere()
	if err != nil {
		return nil, err
	}
	if err := q.compileColumns(qu, nil); err != nil {
		return nil, err
	}
	qu.limit, qu.offset = 0, 0
	gen := q.db.QueryGen()
	bs := newBinds(q.kind)
	text, err := q.build(q.db, qu, bs).AppendQuery(gen, nil)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	if n := len(bs.vals); q.kind == dialects.Postgres {
		text = append(text, " LIMIT $"...)
		text = strconv.AppendInt(text, int64(n+1), 10)
		text = append(text, " OFFSET $"...)
		text = strconv.AppendInt(text, int64(n+2), 10)
	} else {
		text = append(text, limitOffset(q.kind)...)
	}
	cbs := newBinds(q.kind)
	count, err := q.whereBound(q.db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).ColumnExpr("COUNT(*)"),
		qu.cond, qu.args, cbs).AppendQuery(gen, nil)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	return &listRead{text: string(text), vals: bs.vals, count: string(count), countVals: cbs.vals, visible: qu.sel.visible, hints: qu.sel.hints}, nil
}

// runList answers a list read from its compiled form: the count when
// asked for, then the page (one row more than the limit, which tells
// whether a next page exists), streamed.
func (q *tableReq) runList(ctx context.Context, w http.ResponseWriter, lr *listRead) error {
	o := q.opts
	var total int64 = -1
	if o.includeCount {
		if err := q.queryRowText(ctx, lr.count, lr.countVals, &total); err != nil {
			return q.b.dbError(err)
		}
	}
	if lr.pgText != "" {
		if ok, err := q.pgList(ctx, w, lr.pgText, &lr.pgPlan, lr.vals, lr.visible, lr.hints, total); ok {
			return err
		}
	}
	args := make([]any, len(lr.vals)+2)
	copy(args, lr.vals)
	args[len(lr.vals)] = int64(o.limit) + 1
	args[len(lr.vals)+1] = int64(o.offset)
	if lr.liteText != "" {
		// On SQLite's driver, as fastPage reads: no database/sql Rows
		// and its goroutine, no scan per value, times read as stored.
		// The statement is interrupted if the request ends (ctx).
		var end streamEnd
		read := func(rr *rowReader) error {
			end = q.streamRows(w, rr, o.limit, o.offset, total)
			return nil
		}
		ok, err := q.driverRead(ctx, lr.liteTimes, lr.liteDecl, lr.liteText, args, &lr.litePlan, true, read)
		if ok {
			if err != nil {
				return err // before any row was read
			}
			return end.finish(w) // the connection is back in the pool
		}
	}
	rows, cs, err := q.query(ctx, q.db, lr.text, args)
	if err != nil {
		return q.b.dbError(err)
	}
	rr, err := newRowReader(q.kind, rows, cs, lr.visible, lr.hints)
	if err != nil {
		rows.Close()
		return q.b.dbError(err)
	}
	defer rr.release()
	return q.stream(w, rr, o.limit, o.offset, total)
}

// queryRowText runs text, a query with its values bound (vals), as a
// prepared statement of the pool and scans its one row into dest.
func (q *tableReq) queryRowText(ctx context.Context, text string, vals []any, dest ...any) error {
	st, cs, err := q.stmtFor(ctx, q.db, text)
	if err != nil {
		return err
	}
	defer cs.release()
	return st.QueryRowContext(ctx, vals...).Scan(dest...)
}
