package sqldb

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// The fast path of a POST of one record (createRaw): the record kept as
// the body's text (body.go) is read by the table's columns, without a
// map; the INSERT of each set of columns is built once per schema
// (insertShapeOf) and prepared once per connection (stmtCache), with every
// value bound, NULLs too. It answers exactly as create does and leaves to
// it whatever it does not handle: related records, a role's field list or
// record filter, rollback, fields, related and id_field, a member that
// names a column in another case, values that are objects or arrays, and
// tables of more than 64 columns.

// maxInsertShapes bounds the INSERT shapes kept per schema (each set of
// columns a client sends is one).
const maxInsertShapes = 1024

// insertKey names an INSERT shape: the table and the set of its columns
// written (bit i: column i).
type insertKey struct {
	t    *dialects.Table
	mask uint64
}

// insertShape is the INSERT of one set of columns of a table.
type insertShape struct {
	// text is the statement, every value a parameter; it returns the key
	// columns when returning is set.
	text      string
	returning bool
	// pgText is text on PostgreSQL as pgInsert runs it, tagged with this
	// shape (as shape's pgByID is), when the shape is kept.
	pgText string
	// lite is set on SQLite when the shape is kept: liteInsert runs it
	// on a statement kept per driver connection.
	lite bool
	// keyCols are the table's key columns (nil when it has no primary
	// key), keyAt the index of each among the values (-1: not written).
	keyCols []*dialects.Column
	keyAt   []int
}

// insertShapeOf returns the INSERT shape of q's table for the columns in
// mask (in table order), cached with the schema.
func (q *tableReq) insertShapeOf(mask uint64) *insertShape {
	key := insertKey{t: q.table, mask: mask}
	c := q.b.schema.Load()
	if c != nil && c.s == q.schema {
		if v, ok := c.inserts.Load(key); ok {
			return v.(*insertShape)
		}
	} else {
		c = nil // an older schema than the cached one: build, do not keep
	}
	sh := q.buildInsertShape(mask)
	if c != nil && c.insertN.Add(1) <= maxInsertShapes {
		switch q.kind {
		case dialects.Postgres:
			sh.pgText = sh.text + " /* pc:" + strconv.FormatUint(shapes.Add(1), 10) + " */"
		case dialects.SQLite:
			sh.lite = true
		}
		c.inserts.Store(key, sh)
	}
	return sh
}

// buildInsertShape builds the INSERT as insert does, with every value a
// placeholder.
func (q *tableReq) buildInsertShape(mask uint64) *insertShape {
	sh := &insertShape{keyCols: q.keyCols()}
	var names, marks []any
	for i, c := range q.table.Columns {
		if mask&(1<<i) != 0 {
			names = append(names, bun.Ident(c.Name))
			marks = append(marks, int64(0)) // any value: only its placeholder is written
		}
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO ? (")
	sb.WriteString(strings.Repeat(", ?", len(names))[2:])
	sb.WriteString(") VALUES (")
	sb.WriteString(strings.Repeat(", ?", len(names))[2:])
	sb.WriteString(")")
	args := append(append([]any{bun.Ident(q.table.Name)}, names...), marks...)
	given := len(sh.keyCols) > 0
	for _, k := range sh.keyCols {
		at, n := -1, 0
		for i, c := range q.table.Columns {
			if mask&(1<<i) == 0 {
				continue
			}
			if c == k {
				at = n
			}
			n++
		}
		sh.keyAt = append(sh.keyAt, at)
		given = given && at >= 0
	}
	if len(sh.keyCols) > 0 && !given && q.kind != dialects.MySQL {
		sb.WriteString(" RETURNING ")
		for i, c := range sh.keyCols {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("?")
			args = append(args, bun.Ident(c.Name))
		}
		sh.returning = true
	}
	sh.text, _ = q.bound(sb.String(), args)
	return sh
}

// createRaw answers POST _table/{table} of a record kept as text as
// create does; ok is false when it leaves the request to create.
func (q *tableReq) createRaw(ctx context.Context, w http.ResponseWriter) (ok bool, err error) {
	o, t := q.opts, q.table
	raw := o.raw
	if raw == nil || o.rollback || q.rowCond != "" || q.nest > 0 || q.wantRecords() ||
		strings.TrimSpace(o.idField) != "" || q.grant != nil && len(q.grant.Fields) > 0 || len(t.Columns) > 64 {
		return false, nil
	}
	// The member of each column (1-based; 0: none): the last of its name,
	// as a map keeps it.
	var at [64]int
	for fi, f := range raw.fields {
		ci := -1
		for i, c := range t.Columns {
			if c.Name == f.key {
				ci = i
				break
			}
		}
		switch {
		case ci >= 0:
			at[ci] = fi + 1
		case t.Column(f.key) != nil || t.Relation(f.key) != nil:
			return false, nil // another spelling of a column, or related records
		}
	}
	// The values, as recordValues and insert check them.
	args := make([]any, 0, len(raw.fields))
	var mask uint64
	var keyVals [4]any
	for i, c := range t.Columns {
		if at[i] == 0 || c.Generated {
			continue
		}
		val, err := q.inputScalar(c, raw.fields[at[i]-1].val)
		if err != nil {
			return true, q.b.dbError(err)
		}
		if val == nil && !c.AllowNull {
			if c.AutoIncrement || c.Default != nil {
				continue // let the database fill it in
			}
			return true, q.b.dbError(apierr.BadRequest("Field '%s' can not be NULL.", c.Name))
		}
		if c.IsPrimaryKey {
			// The key as insert answers it (before setValue), by its
			// place in the primary key.
			k := 0
			for k < len(t.PrimaryKey) && t.Column(t.PrimaryKey[k]) != c {
				k++
			}
			if k >= len(keyVals) {
				return false, nil
			}
			keyVals[k] = val
		}
		mask |= 1 << i
		args = append(args, setValue(val))
	}
	for i, c := range t.Columns {
		if c.Required() && mask&(1<<i) == 0 {
			return true, q.b.dbError(apierr.BadRequest("Required field '%s' can not be NULL.", c.Name))
		}
	}
	if len(args) == 0 {
		return true, q.b.dbError(apierr.BadRequest("No valid fields were found in record."))
	}
	sh := q.insertShapeOf(mask)
	key := make([]any, len(sh.keyCols))
	for i, a := range sh.keyAt {
		if a >= 0 {
			key[i] = keyVals[i]
		}
	}
	native := false
	switch {
	case sh.pgText != "":
		native, err = q.pgInsert(ctx, sh, args, key)
	case sh.lite && liteWrites:
		native, err = q.liteInsert(ctx, sh, args, key)
	}
	if err != nil {
		return true, q.b.dbError(err)
	}
	switch {
	case native:
		if sh.returning {
			for i := range key {
				key[i] = stringify(key[i])
			}
		}
	case sh.returning:
		st, cs, err := q.stmtFor(ctx, q.db, sh.text)
		if err != nil {
			return true, q.b.dbError(err)
		}
		defer cs.release()
		ptrs := make([]any, len(key))
		for i := range key {
			ptrs[i] = &key[i]
		}
		if err := st.QueryRowContext(ctx, args...).Scan(ptrs...); err != nil {
			return true, q.b.dbError(err)
		}
		for i := range key {
			key[i] = stringify(key[i])
		}
	default:
		st, cs, err := q.stmtFor(ctx, q.db, sh.text)
		if err != nil {
			return true, q.b.dbError(err)
		}
		defer cs.release()
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return true, q.b.dbError(err)
		}
		if q.kind == dialects.MySQL && len(key) == 1 && sh.keyAt[0] < 0 && sh.keyCols[0].AutoIncrement {
			if key[0], err = lastInsertID(res); err != nil {
				return true, q.b.dbError(err)
			}
		}
	}
	pb := getBuf()
	defer putBuf(pb)
	buf := append((*pb)[:0], `{"resource":[`...)
	if len(sh.keyCols) == 0 {
		key = nil
	}
	buf = appendKeyJSON(buf, sh.keyCols, key)
	buf = append(buf, "]}\n"...)
	*pb = buf
	return true, writeRaw(w, buf)
}

// lastInsertID is the id MySQL gave the row res inserted.
func lastInsertID(res sql.Result) (any, error) {
	id, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	return id, nil
}
