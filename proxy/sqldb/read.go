package sqldb

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// flushSize is how much encoded JSON a streamed response gathers before it
// writes to the client.
const flushSize = 32 << 10

// holdSize is how much of a page is read from the database before anything
// is written to the client. A page that fits is read whole and its
// database connection released before the first write, so a client that
// does not read holds no connection; a larger page streams, and the
// pipeline's write deadline cuts a client that stops reading. It bounds a
// read's buffer, so the memory of reads in flight is at most
// holdSize × requests in flight.
const holdSize = 1 << 20

// selection is the column list of a read: the visible columns the client
// asked for, then hidden ones the backend needs (keys, relation fields).
type selection struct {
	expr    string
	args    []any
	visible int
	hidden  map[string]int // lowercased column name → index among all columns
	grouped bool
	// aggregate is set when the visible columns hold an aggregate.
	aggregate bool
	// hints tells rowjson the types of the result columns: the table, or
	// the table plus its columns renamed with "as".
	hints *dialects.Table
}

// selectColumns builds the selection for fields (the client's parameter)
// plus hidden columns. Fields the grant does not allow are dropped.
func (q *tableReq) selectColumns(fields string, grouped bool, hidden []string) (*selection, error) {
	sel, err := filter.ParseFields(fields)
	if err != nil {
		return nil, badQuery(err)
	}
	s := &selection{grouped: grouped, hidden: map[string]int{}, hints: q.table}
	var parts []string
	visible := 0
	switch {
	case sel.All && (q.grant == nil || len(q.grant.Fields) == 0):
		// Every column: the list is built once per schema.
		visible = len(q.table.Columns)
		parts = append(parts, "?")
		s.args = append(s.args, bun.Safe(q.b.allColumns(q.db, q.table)))
	case sel.All:
		for _, c := range q.table.Columns {
			if q.grant.AllowsField(c.Name) {
				visible++
				parts = append(parts, "?")
				s.args = append(s.args, qualified(q.table.Name, c.Name))
			}
		}
	default:
		kept := sel.Items[:0:0]
		for _, it := range sel.Items {
			if it.Term.Agg == filter.NoAggregate && len(it.Term.Path) == 1 {
				if c := q.table.Column(it.Term.Path[0]); c != nil && !q.grant.AllowsField(c.Name) {
					continue // not readable: dropped
				}
			}
			if it.Term.Agg != filter.NoAggregate {
				s.aggregate = true
			} else if it.Alias != "" && len(it.Term.Path) == 1 {
				s.aliasHint(q.table, it.Term.Path[0], it.Alias)
			}
			kept = append(kept, it)
		}
		visible = len(kept)
		if len(kept) > 0 {
			expr, args, err := filter.CompileSelect(filter.Selection{Items: kept}, q.res)
			if err != nil {
				return nil, badQuery(err)
			}
			parts = append(parts, expr)
			s.args = append(s.args, args...)
		}
	}
	if len(parts) == 0 {
		return nil, apierr.Forbidden("None of the requested fields of table '%s' may be read.", q.table.Name)
	}
	s.visible = visible
	for _, h := range hidden {
		key := strings.ToLower(h)
		if _, ok := s.hidden[key]; ok {
			continue
		}
		s.hidden[key] = s.visible + len(s.hidden)
		parts = append(parts, "? AS ?")
		s.args = append(s.args, qualified(q.table.Name, h), bun.Ident("pc_h"+strconv.Itoa(len(s.hidden))))
	}
	s.expr = strings.Join(parts, ", ")
	return s, nil
}

// aliasHint records that column name of t is read under alias, so that
// rowjson writes it with the column's type (MySQL booleans).
func (s *selection) aliasHint(t *dialects.Table, name, alias string) {
	c := t.Column(name)
	if c == nil {
		return
	}
	if s.hints == t {
		s.hints = &dialects.Table{Name: t.Name, Columns: append([]*dialects.Column(nil), t.Columns...)}
	}
	renamed := *c
	renamed.Name = alias
	s.hints.Columns = append([]*dialects.Column{&renamed}, s.hints.Columns...)
}

// query is a read to run.
type query struct {
	sel    *selection
	cond   string
	args   []any
	group  string
	gargs  []any
	having string
	hargs  []any
	order  string
	oargs  []any
	limit  int // 0: none
	offset int
}

// build is the SELECT of qu. With bs, the values of its conditions are
// bound parameters collected in bs (prepared.go); with nil, bun writes
// them into the text.
func (q *tableReq) build(db bun.IDB, qu *query, bs *binds) *bun.SelectQuery {
	sq := db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).ColumnExpr(qu.sel.expr, qu.sel.args...)
	sq = q.whereBound(sq, qu.cond, qu.args, bs)
	if qu.group != "" {
		sq = sq.GroupExpr(qu.group, qu.gargs...)
	}
	if qu.having != "" {
		sq = sq.Having(qu.having, bs.wrap(qu.hargs)...)
	}
	if qu.order != "" {
		sq = sq.OrderExpr(qu.order, qu.oargs...)
	}
	if qu.limit > 0 {
		sq = sq.Limit(int64(qu.limit))
	}
	if qu.offset > 0 {
		if qu.limit == 0 {
			sq = sq.Limit(1 << 62)
		}
		sq = sq.Offset(int64(qu.offset))
	}
	return sq
}

// defaultOrder orders by the primary key, so that pages are stable and
// every engine returns the same order.
func (q *tableReq) defaultOrder() (string, []any) {
	if len(q.table.PrimaryKey) == 0 {
		return "", nil
	}
	parts := make([]string, len(q.table.PrimaryKey))
	args := make([]any, len(q.table.PrimaryKey))
	for i, k := range q.table.PrimaryKey {
		parts[i] = "? ASC"
		args[i] = qualified(q.table.Name, k)
	}
	return strings.Join(parts, ", "), args
}

// get answers GET _table/{table}.
func (q *tableReq) get(ctx context.Context, w http.ResponseWriter) error {
	o := q.opts
	if o.idsGiven || len(o.records) > 0 {
		return q.getByKeys(ctx, w)
	}
	if q.listCacheable() {
		lr, err := q.listReadOf()
		if err != nil {
			return err
		}
		return q.runList(ctx, w, lr)
	}
	qu, err := q.compileWhere()
	if err != nil {
		return err
	}
	if o.countOnly {
		n, err := q.count(ctx, qu)
		if err != nil {
			return err
		}
		return writeJSON(w, map[string]any{"meta": map[string]any{"count": n}})
	}
	rels, err := q.relations(qu.group != "")
	if err != nil {
		return err
	}
	if err := q.compileColumns(qu, rels); err != nil {
		return err
	}
	var total int64 = -1
	if o.includeCount {
		if total, err = q.count(ctx, qu); err != nil {
			return err
		}
	}
	qu.limit = o.limit + 1 // one more tells whether a next page exists
	bs := newBinds(q.kind)
	rows, cs, err := q.rows(ctx, q.db, q.build(q.db, qu, bs), bs)
	if err != nil {
		return q.b.dbError(err)
	}
	defer rows.Close()
	rr, err := newRowReader(q.kind, rows, cs, qu.sel.visible, qu.sel.hints)
	if err != nil {
		return q.b.dbError(err)
	}
	if len(rels) > 0 {
		page, err := q.readPage(rr, o.limit)
		if err != nil {
			return q.b.dbError(err)
		}
		rows.Close()
		if err := q.loadRelations(ctx, q.db, rels, page.rows, qu.sel); err != nil {
			return err
		}
		pb := getBuf()
		defer putBuf(pb)
		cw := &chunkWriter{w: w, buf: (*pb)[:0]}
		defer func() { *pb = cw.buf }()
		cw.buf = append(cw.buf, `{"resource":[`...)
		for i, pr := range page.rows {
			if i > 0 {
				cw.buf = append(cw.buf, ',')
			}
			cw.buf = appendWithRelations(cw.buf, pr, rels)
			pr.obj, pr.rels = nil, nil // written: let it go
			cw.maybeFlush()
		}
		cw.buf = append(cw.buf, ']')
		cw.buf = appendMeta(cw.buf, total, page.seen, o.limit, o.offset)
		cw.buf = append(cw.buf, "}\n"...)
		return cw.finish()
	}
	return q.stream(w, rr, o.limit, o.offset, total)
}

// compileWhere compiles the conditions of a list read: the client's filter,
// group and having. Its errors are the 400s of get.
func (q *tableReq) compileWhere() (*query, error) {
	o := q.opts
	cond, args, err := q.compileFilter(o.filter)
	if err != nil {
		return nil, err
	}
	qu := &query{cond: cond, args: args, limit: o.limit, offset: o.offset}
	if g := strings.TrimSpace(o.group); g != "" {
		terms, err := filter.ParseGroup(g)
		if err != nil {
			return nil, badQuery(err)
		}
		if qu.group, qu.gargs, err = filter.CompileGroup(terms, q.res); err != nil {
			return nil, badQuery(err)
		}
	}
	if h := strings.TrimSpace(o.having); h != "" {
		if qu.group == "" {
			return nil, apierr.BadRequest("having needs group.")
		}
		e, err := filter.ParseHaving(h)
		if err != nil {
			return nil, badQuery(err)
		}
		if qu.having, qu.hargs, err = filter.CompileHaving(e, q.res); err != nil {
			return nil, badQuery(err)
		}
	}
	return qu, nil
}

// compileColumns sets the selection (the client's fields, and the columns
// rels need) and the order of qu.
func (q *tableReq) compileColumns(qu *query, rels []*relLoad) error {
	o := q.opts
	var err error
	if qu.sel, err = q.selectColumns(o.fields, qu.group != "", relationFields(rels)); err != nil {
		return err
	}
	if ord := strings.TrimSpace(o.order); ord != "" {
		items, err := filter.ParseOrder(ord)
		if err != nil {
			return badQuery(err)
		}
		if qu.order, qu.oargs, err = filter.CompileOrder(q.nullsLikeOthers(items, q.table), q.res); err != nil {
			return badQuery(err)
		}
	} else if qu.group == "" && !qu.sel.aggregate {
		qu.order, qu.oargs = q.defaultOrder()
	}
	return nil
}

// appendMeta appends a page's meta member: count when total is not
// negative, next when more than limit rows were read (n); nothing when
// neither.
func appendMeta(b []byte, total int64, n, limit, offset int) []byte {
	more := n > limit
	if total < 0 && !more {
		return b
	}
	b = append(b, `,"meta":{`...)
	if total >= 0 {
		b = strconv.AppendInt(append(b, `"count":`...), total, 10)
	}
	if more {
		if total >= 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `"next":`...), int64(offset+limit), 10)
	}
	return append(b, '}')
}

// stream writes the rows of rr as {"resource":[…]} followed by the meta
// of a page at offset with total records (negative: not counted). It
// holds up to holdSize bytes before the first write, then flushes every
// flushSize bytes. An error before anything was written is
// returned (and becomes an error response); after that the response is cut
// short, so the client sees invalid JSON rather than a silently short list.
func (q *tableReq) stream(w http.ResponseWriter, rr rowSource, limit, offset int, total int64) error {
	return q.streamRows(w, rr, limit, offset, total).finish(w)
}

// streamEnd is what streamRows leaves to write once the rows are closed:
// buf, the end of the answer (in pb, a pooled buffer), or err.
type streamEnd struct {
	pb      *[]byte
	buf     []byte
	started bool
	err     error
}

// streamRows is stream up to its last write, which finish makes, so that
// a caller holding the rows' connection can release it first.
func (q *tableReq) streamRows(w http.ResponseWriter, rr rowSource, limit, offset int, total int64) (s streamEnd) {
	pb := getBuf()
	s.pb = pb
	buf := append((*pb)[:0], `{"resource":[`...)
	defer func() { *pb = buf; s.buf = buf }() // keep what it grew to
	started := false
	defer rr.Close() // released before the last write
	n := 0
	for {
		ok, err := rr.Next()
		if err != nil {
			if !started {
				s.err = q.b.dbError(err)
				return s
			}
			q.b.log.Error("reading rows failed mid-response", "error", err)
			s.started = true
			return s
		}
		if !ok {
			break
		}
		n++
		if n > limit {
			// Drain nothing more: the extra row only tells that a next page exists.
			break
		}
		if n > 1 {
			buf = append(buf, ',')
		}
		buf = rr.AppendObject(buf)
		if started && len(buf) >= flushSize || len(buf) >= holdSize {
			if !started {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				started = true
			}
			if _, err := w.Write(buf); err != nil {
				buf = buf[:0]
				s.started = true // the client went away
				return s
			}
			buf = buf[:0]
		}
	}
	if err := rr.Close(); err != nil && !started {
		s.err = q.b.dbError(err)
		return s
	}
	buf = append(buf, ']')
	buf = appendMeta(buf, total, n, limit, offset)
	buf = append(buf, "}\n"...)
	s.started = started
	return s
}

// finish writes what streamRows left and returns its buffer to the pool.
func (s streamEnd) finish(w http.ResponseWriter) error {
	defer putBuf(s.pb)
	switch {
	case s.err != nil:
		return s.err
	case !s.started:
		return writeRaw(w, s.buf)
	}
	if len(s.buf) > 0 {
		w.Write(s.buf)
	}
	return nil
}

func writeRaw(w http.ResponseWriter, b []byte) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

// count returns how many records (or groups) a read matches.
func (q *tableReq) count(ctx context.Context, qu *query) (int64, error) {
	var sq *bun.SelectQuery
	if qu.group != "" {
		inner := q.db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).ColumnExpr("1 AS ?", bun.Ident("pc_one"))
		inner = q.where(inner, qu.cond, qu.args).GroupExpr(qu.group, qu.gargs...)
		if qu.having != "" {
			inner = inner.Having(qu.having, qu.hargs...)
		}
		sq = q.db.NewSelect().TableExpr("(?) AS ?", inner, bun.Ident("pc_c")).ColumnExpr("COUNT(*)")
	} else {
		sq = q.where(q.db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).ColumnExpr("COUNT(*)"), qu.cond, qu.args)
	}
	var n int64
	if err := sq.Scan(ctx, &n); err != nil {
		return 0, q.b.dbError(err)
	}
	return n, nil
}

// pageRow is one buffered row: its JSON object and its hidden values.
type pageRow struct {
	obj    []byte
	hidden []any
	// rels holds the encoded related records, one per relation.
	rels [][]byte
}

type page struct {
	rows []*pageRow
	seen int // rows read, including the one past the limit
}

// readPage buffers up to limit rows (limit 0: all).
func (q *tableReq) readPage(rr *rowReader, limit int) (*page, error) {
	p := &page{}
	for {
		ok, err := rr.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return p, nil
		}
		p.seen++
		if limit > 0 && p.seen > limit {
			return p, nil
		}
		pr := &pageRow{obj: rr.AppendObject(nil)}
		if n := rr.ncols - rr.visible; n > 0 {
			pr.hidden = make([]any, n)
			for i := range n {
				pr.hidden[i] = rr.Value(rr.visible + i)
			}
		}
		p.rows = append(p.rows, pr)
	}
}

// getByID answers GET _table/{table}/{id}: the record, unwrapped.
func (q *tableReq) getByID(ctx context.Context, w http.ResponseWriter, id string) error {
	cols, err := q.keyColumns()
	if err != nil {
		return err
	}
	key, err := pathKey(cols, id)
	if err != nil {
		return err
	}
	recs, err := q.fetchByKeys(ctx, q.db, cols, [][]any{key}, q.opts.fields)
	if err != nil {
		return err
	}
	obj, ok := findRecord(recs, key)
	if !ok {
		return apierr.NotFound("Record with identifier '%s' not found.", id)
	}
	return writeRaw(w, append(obj, '\n'))
}

// getByKeys answers GET with ids (or records in the body): the records in
// the order asked; any missing is a batch error.
func (q *tableReq) getByKeys(ctx context.Context, w http.ResponseWriter) error {
	cols, err := q.keyColumns()
	if err != nil {
		return err
	}
	var keys [][]any
	var texts []string
	if q.opts.idsGiven {
		if keys, err = idsKeys(cols, q.opts.ids); err != nil {
			return err
		}
		for _, v := range q.opts.ids {
			texts = append(texts, v.Text)
		}
	} else {
		for i, rec := range q.opts.records {
			k, ok, err := q.recordKey(cols, rec)
			if err != nil {
				return err
			}
			if !ok {
				return apierr.BadRequest("Required id field(s) not found in record %d: %s.", i, columnNames(cols))
			}
			keys = append(keys, k)
			texts = append(texts, keyText(k))
		}
	}
	recs, err := q.fetchByKeys(ctx, q.db, cols, keys, q.opts.fields)
	if err != nil {
		return err
	}
	out := make([]byte, 0, 1024)
	out = append(out, `{"resource":[`...)
	var errs []apierr.BatchItem
	var results []any
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		obj, ok := findRecord(recs, k)
		if !ok {
			msg := "Record with identifier '" + texts[i] + "' not found."
			errs = append(errs, apierr.BatchItem{Index: i, Message: msg})
			results = append(results, errorResult(apierr.NotFound("%s", msg)))
			out = append(out, "null"...)
			continue
		}
		results = append(results, rawJSON(obj))
		out = append(out, obj...)
	}
	if len(errs) > 0 {
		if len(keys) == 1 {
			return apierr.NotFound("%s", errs[0].Message)
		}
		var res any
		if q.opts.cont {
			res = results
		}
		return apierr.Batch("Batch Error: Not all requested records could be retrieved.", errs, res)
	}
	out = append(out, "]}\n"...)
	return writeRaw(w, out)
}

// fetchByKeys reads the records with keys (honouring the grant), encoded
// with fields (and related), mapped by keyOf of their key.
func (q *tableReq) fetchByKeys(ctx context.Context, db bun.IDB, cols []*dialects.Column, keys [][]any, fields string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rels, err := q.relations(false)
	if err != nil {
		return nil, err
	}
	hidden := columnNamesList(cols)
	hidden = append(hidden, relationFields(rels)...)
	sel, err := q.selectColumns(fields, false, hidden)
	if err != nil {
		return nil, err
	}
	cond, args := q.keyCond(cols, keys)
	qu := &query{sel: sel, cond: cond, args: args}
	qu.order, qu.oargs = q.defaultOrder()
	bs := newBinds(q.kind)
	rows, cs, err := q.rows(ctx, db, q.build(db, qu, bs), bs)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	defer rows.Close()
	rr, err := newRowReader(q.kind, rows, cs, sel.visible, sel.hints)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	p, err := q.readPage(rr, 0)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	rows.Close()
	if len(rels) > 0 {
		if err := q.loadRelations(ctx, db, rels, p.rows, sel); err != nil {
			return nil, err
		}
	}
	for _, pr := range p.rows {
		kv := make([]any, len(cols))
		for i, c := range cols {
			kv[i] = pr.hidden[sel.hidden[strings.ToLower(c.Name)]-sel.visible]
		}
		k := keyOf(kv...)
		if _, dup := out[k]; dup {
			continue // id_field that is not unique: the first record wins
		}
		out[k] = appendWithRelations(nil, pr, rels)
	}
	return out, nil
}

func columnNamesList(cols []*dialects.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func columnNames(cols []*dialects.Column) string { return strings.Join(columnNamesList(cols), ", ") }

// nullsLikeOthers makes PostgreSQL order NULLs as SQLite and MySQL do
// (before every value ascending, after them descending), so that the same
// request gives the same order on every engine. Only nullable columns of
// table need it.
func (q *tableReq) nullsLikeOthers(items []filter.OrderItem, table *dialects.Table) []filter.OrderItem {
	if q.kind != dialects.Postgres {
		return items
	}
	for i, it := range items {
		if it.Nulls != filter.NullsDefault || it.Term.Agg != filter.NoAggregate || len(it.Term.Path) != 1 {
			continue
		}
		if c := table.Column(it.Term.Path[0]); c != nil && c.AllowNull {
			if it.Desc {
				items[i].Nulls = filter.NullsLast
			} else {
				items[i].Nulls = filter.NullsFirst
			}
		}
	}
	return items
}

// findRecord finds the record read for key: by its exact key text, else
// ignoring case, for keys the database matched without regard to case (a
// UUID written in capitals, MySQL's case-insensitive collations).
func findRecord(recs map[string][]byte, key []any) ([]byte, bool) {
	k := keyOf(key...)
	if r, ok := recs[k]; ok {
		return r, true
	}
	for got, r := range recs {
		if strings.EqualFold(got, k) {
			return r, true
		}
	}
	return nil, false
}

// maxPooledBuf is the largest buffer put back in bufPool: a buffer grown
// for a larger page is left to the garbage collector, so one huge page
// does not pin its memory.
const maxPooledBuf = 256 << 10

// bufPool holds the buffers responses and query texts are built in.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, flushSize+4096)
	return &b
}}

// getBuf returns an empty buffer from the pool; putBuf gives it back.
func getBuf() *[]byte {
	b := bufPool.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// putBuf returns b to the pool unless it grew beyond maxPooledBuf.
func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	bufPool.Put(b)
}

// chunkWriter writes a response in pieces of about flushSize bytes; the
// status and headers go out with the first piece.
type chunkWriter struct {
	w       http.ResponseWriter
	buf     []byte
	started bool
}

func (c *chunkWriter) maybeFlush() {
	if len(c.buf) < flushSize {
		return
	}
	if !c.started {
		c.w.Header().Set("Content-Type", "application/json")
		c.w.WriteHeader(http.StatusOK)
		c.started = true
	}
	c.w.Write(c.buf)
	c.buf = c.buf[:0]
}

// finish writes what is left (the whole response, with its length, when
// it never reached flushSize).
func (c *chunkWriter) finish() error {
	if !c.started {
		return writeRaw(c.w, c.buf)
	}
	c.w.Write(c.buf)
	return nil
}
