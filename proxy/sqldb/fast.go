package sqldb

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Fast paths for the two commonest reads: a record by its primary key
// (GET _table/{table}/{id}) and a plain page (GET _table/{table} with at
// most limit and offset). Their SQL text is built once per table and
// schema (shapeOf), the plan of their result columns once per prepared
// statement (newRowReader), every value is bound, a read by key has no
// ORDER BY and no map, and the answer is written from a pooled buffer.
// They answer exactly as the general path does (get, getByID); whenever a
// request uses anything they do not handle (fields, related, id_field,
// filters, order, counts, a role's field list or record filter) the
// general path answers instead.

// shape is the SQL of one table's fast reads, built once per schema.
type shape struct {
	// byID reads the record with a key: every column, WHERE each key
	// column = a parameter. Empty when the table has no primary key or a
	// key column is of a type fastKeyType leaves to the general path.
	byID string
	// keyAt is the index of each key column among the result columns.
	keyAt []int
	// keyCols are the key columns, in key order.
	keyCols []*dialects.Column
	// page reads a page: every column, ordered by the primary key, LIMIT
	// and OFFSET parameters.
	page string
	// pgByID is byID on PostgreSQL as pgByID runs it (pgfast.go): the
	// text of pgx's cached statement, tagged with the shape so that a
	// schema change never meets a statement prepared before it.
	pgByID string
	// pgPlan is how pgByID's results are decoded and written.
	pgPlan atomic.Pointer[pgPlan]
	// pgPage and pgPagePlan are page's twins of pgByID and pgPlan (pglist.go).
	pgPage     string
	pgPagePlan atomic.Pointer[pgPlan]
	// liteByID and litePage are byID and page as SQLite runs them on the
	// driver (litefast.go): the same, but for the columns in liteTimes,
	// read as they are stored and turned into times as the driver would
	// (liteTime); liteDecl holds those columns' declared types.
	liteByID, litePage string
	liteTimes          []int
	liteDecl           []string
	// liteCols is the column list of liteByID and litePage, liteAll the
	// one it replaces (allColumns); both empty when they are byID and
	// page themselves.
	liteCols, liteAll string
	// liteByIDPlan and litePagePlan are how liteByID's and litePage's
	// results are written.
	liteByIDPlan, litePagePlan atomic.Pointer[readPlan]
	// myByIDPlan and myPagePlan are how byID's and page's results are
	// written when MySQL runs them on the driver (myfast.go).
	myByIDPlan, myPagePlan atomic.Pointer[readPlan]
}

// shapes numbers the shapes built (pgByID's tag).
var shapes atomic.Uint64

// shapeOf returns the fast reads' SQL of q's table, cached with the schema.
func (q *tableReq) shapeOf() *shape {
	c := q.b.schema.Load()
	if c != nil && c.s == q.schema {
		if v, ok := c.shapes.Load(q.table); ok {
			return v.(*shape)
		}
	} else {
		c = nil // an older schema than the cached one: build, do not keep
	}
	sh := q.buildShape()
	if c != nil {
		c.shapes.Store(q.table, sh)
	}
	return sh
}

// buildShape builds the SQL of the fast reads with the general path's own
// builders, so that the text is the general one's without what a fast
// read does not need.
func (q *tableReq) buildShape() *shape {
	t := q.table
	sh := &shape{}
	if q.kind == dialects.SQLite {
		defer q.liteShape(sh)
	}
	all := &selection{expr: "?", args: []any{bun.Safe(q.b.allColumns(q.db, t))}, visible: len(t.Columns), hints: t}
	gen := q.db.QueryGen()
	// The page: ORDER BY the key, then bound LIMIT and OFFSET.
	qu := &query{sel: all}
	qu.order, qu.oargs = q.defaultOrder()
	text, err := q.build(q.db, qu, nil).AppendQuery(gen, nil)
	if err == nil {
		if q.kind == dialects.Postgres {
			text = append(text, " LIMIT $1 OFFSET $2"...)
		} else {
			text = append(text, limitOffset(q.kind)...)
		}
		sh.page = string(text)
		if q.kind == dialects.Postgres {
			sh.pgPage = sh.page + " /* pc:" + strconv.FormatUint(shapes.Add(1), 10) + " */"
		}
	}
	// By key.
	if len(t.PrimaryKey) == 0 {
		return sh
	}
	for _, name := range t.PrimaryKey {
		c := t.Column(name)
		if c == nil || !fastKeyType(c.Type) {
			return sh
		}
		at := -1
		for i, tc := range t.Columns {
			if tc == c {
				at = i
				break
			}
		}
		if at < 0 {
			return sh
		}
		sh.keyCols = append(sh.keyCols, c)
		sh.keyAt = append(sh.keyAt, at)
	}
	placeholders := make([]any, len(sh.keyCols))
	for i := range placeholders {
		placeholders[i] = int64(0) // any value: only its placeholder is written
	}
	cond, args := q.keyCond(sh.keyCols, [][]any{placeholders})
	bs := newBinds(q.kind)
	text, err = q.build(q.db, &query{sel: all, cond: cond, args: args}, bs).AppendQuery(gen, nil)
	if err != nil {
		sh.keyCols, sh.keyAt = nil, nil
		return sh
	}
	sh.byID = string(text)
	if q.kind == dialects.Postgres {
		sh.pgByID = sh.byID + " /* pc:" + strconv.FormatUint(shapes.Add(1), 10) + " */"
	}
	return sh
}

// limitOffset is the bound LIMIT and OFFSET that end a page's text on
// SQLite and MySQL. SQLite's LIMIT is "+?": its planner reads the value
// bound to a bare "LIMIT ?" (sqlite3ExprIsInteger), and a statement whose
// plan read a parameter is marked to be prepared again whenever that
// parameter is bound anew — on every execution, since every read binds
// its limit. That is a parse and a plan per read (about 100k instructions
// for the item table of bench, as much as stepping its 25 rows). Behind
// the unary plus the planner does not read it (as it never reads OFFSET's)
// and the statement stays prepared; the value and the rows are the same.
func limitOffset(kind dialects.Kind) string {
	if kind == dialects.SQLite {
		return " LIMIT +? OFFSET ?"
	}
	return " LIMIT ? OFFSET ?"
}

// fastKeyType reports whether a key column of type t surely reads back as
// the general path reads it (there as a hidden column, without the
// table's type hints): integers, text and UUIDs.
func fastKeyType(t dialects.FieldType) bool {
	return t.IsInteger() || t.IsText() || t == dialects.TypeUUID
}

// plain reports whether the request reads whole records with nothing the
// fast paths leave to the general one: no field list, relations or
// id_field, and a grant without a field list or record filter.
func (q *tableReq) plain() bool {
	o := q.opts
	return (o.fields == "" || o.fields == "*") && strings.TrimSpace(o.related) == "" &&
		strings.TrimSpace(o.idField) == "" && q.rowCond == "" &&
		(q.grant == nil || len(q.grant.Fields) == 0)
}

// fastGetByID answers GET _table/{table}/{id} as getByID does; ok is false
// when the request is not one it handles.
func (q *tableReq) fastGetByID(ctx context.Context, w http.ResponseWriter, id string) (bool, error) {
	if !q.plain() {
		return false, nil
	}
	sh := q.shapeOf()
	if sh.byID == "" {
		return false, nil
	}
	key, err := pathKey(sh.keyCols, id)
	if err != nil {
		return true, err
	}
	for _, v := range key {
		if !bindable(v) {
			return false, nil // written into the text by the general path (a decimal)
		}
	}
	if sh.pgByID != "" {
		if ok, err := q.pgGetByID(ctx, w, sh, key, id); ok {
			return true, err
		}
	}
	pb := getBuf()
	defer putBuf(pb)
	var wantBuf [64]byte
	want := appendKey(wantBuf[:0], key...)
	m := keyMatch{keyAt: sh.keyAt, buf: (*pb)[:0]}
	defer func() { *pb = m.buf }()
	if q.kind == dialects.SQLite || q.kind == dialects.MySQL && nativeMy {
		read := func(rr *rowReader) error {
			for !m.exact {
				ok, err := rr.Next()
				if err != nil {
					return q.b.dbError(err)
				}
				if !ok {
					break
				}
				m.row(rr.rj, want)
			}
			return q.b.dbError(rr.Close())
		}
		text, plan := sh.byID, &sh.myByIDPlan
		if q.kind == dialects.SQLite {
			text, plan = sh.liteByID, &sh.liteByIDPlan
		}
		ok, err := q.driverRead(ctx, sh.liteTimes, sh.liteDecl, text, key, plan, false, read)
		if ok {
			if err != nil {
				return true, err
			}
			return true, m.write(w, id)
		}
	}
	rows, cs, err := q.query(ctx, q.db, sh.byID, key)
	if err != nil {
		return true, q.b.dbError(err)
	}
	rr, err := newRowReader(q.kind, rows, cs, len(q.table.Columns), q.table)
	if err != nil {
		rows.Close()
		return true, q.b.dbError(err)
	}
	defer rr.release()
	for !m.exact {
		ok, err := rr.Next()
		if err != nil {
			return true, q.b.dbError(err)
		}
		if !ok {
			break
		}
		m.row(rr.rj, want)
	}
	if err := rr.Close(); err != nil {
		return true, q.b.dbError(err)
	}
	return true, m.write(w, id)
}

// keyMatch picks, among the rows a read by key returns, the record whose
// key reads back as the one asked (as findRecord matches): exactly, else
// ignoring case.
type keyMatch struct {
	keyAt []int  // the key columns among the result columns
	buf   []byte // the JSON of the record picked so far
	found bool
	exact bool
}

// keyRow is a row as keyMatch reads it: *rowjson.Rows (the current row
// of a database/sql or driver result) or *rowjson.Row (a row read on
// pgx).
type keyRow interface {
	Plain(i int) (any, bool)
	Value(i int) any
	AppendObject(dst []byte) []byte
}

// row considers rj, the current row, for the key asked, want (appendKey
// of it).
func (m *keyMatch) row(rj keyRow, want []byte) {
	var gotBuf [64]byte
	got := gotBuf[:0]
	for i, at := range m.keyAt {
		if i > 0 {
			got = append(got, 0) // as appendKey separates values
		}
		v, plain := rj.Plain(at) // the driver's own value: no copy
		if !plain {
			v = rj.Value(at)
		}
		got = appendKey(got, v)
	}
	switch {
	case bytes.Equal(got, want):
		m.exact = true
	case !m.found && bytes.EqualFold(got, want):
	default:
		return
	}
	m.buf = rj.AppendObject(m.buf[:0])
	m.found = true
}

// write answers with the record picked, or that there is none for id.
func (m *keyMatch) write(w http.ResponseWriter, id string) error {
	if !m.found {
		return apierr.NotFound("Record with identifier '%s' not found.", id)
	}
	m.buf = append(m.buf, '\n')
	return writeRaw(w, m.buf)
}

// bindable reports whether v is a value binds.wrap binds (not one bun
// writes into the query text).
func bindable(v any) bool {
	switch v.(type) {
	case nil, schema.QueryAppender, bun.Ident, bun.Safe:
		return false
	}
	return true
}

// fastPage answers GET _table/{table} as get does when it asks for at most
// a limit and an offset; ok is false when the request is not one it
// handles.
func (q *tableReq) fastPage(ctx context.Context, w http.ResponseWriter) (bool, error) {
	o := q.opts
	if !q.plain() || o.idsGiven || len(o.records) > 0 || o.filter != "" || o.order != "" ||
		o.group != "" || o.having != "" || o.countOnly || o.includeCount || o.limit < 1 {
		return false, nil
	}
	sh := q.shapeOf()
	if sh.page == "" {
		return false, nil
	}
	if sh.pgPage != "" {
		if ok, err := q.pgList(ctx, w, sh.pgPage, &sh.pgPagePlan, nil, len(q.table.Columns), q.table, -1); ok {
			return true, err
		}
	}
	args := []any{int64(o.limit) + 1, int64(o.offset)}
	if q.kind == dialects.SQLite || q.kind == dialects.MySQL && nativeMy {
		var end streamEnd
		read := func(rr *rowReader) error {
			end = q.streamRows(w, rr, o.limit, o.offset, -1)
			return nil
		}
		text, plan := sh.page, &sh.myPagePlan
		if q.kind == dialects.SQLite {
			text, plan = sh.litePage, &sh.litePagePlan
		}
		ok, err := q.driverRead(ctx, sh.liteTimes, sh.liteDecl, text, args, plan, false, read)
		if ok {
			if err != nil {
				return true, err // before any row was read
			}
			return true, end.finish(w) // the connection is back in the pool
		}
	}
	rows, cs, err := q.query(ctx, q.db, sh.page, args)
	if err != nil {
		return true, q.b.dbError(err)
	}
	rr, err := newRowReader(q.kind, rows, cs, len(q.table.Columns), q.table)
	if err != nil {
		rows.Close()
		return true, q.b.dbError(err)
	}
	defer rr.release()
	return true, q.stream(w, rr, o.limit, o.offset, -1)
}
