package sqldb

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

const noRecords = `No record(s) detected in request. Please make sure record(s) are wrapped in a 'resource' tag. Example: {"resource":[{"name":"value"}]}`

// writeOp writes record i inside tx and returns its key and, for deletes
// that must answer with the record, the record as it was.
type writeOp func(ctx context.Context, tx bun.IDB, i int) (key []any, before []byte, err error)

// batchOutcome is what a batch wrote.
type batchOutcome struct {
	keys   [][]any
	before [][]byte
}

// batch runs op for n records with the contract's batch modes: by default
// it stops at the first failure and keeps what was written before it;
// continue=true goes on past failures; rollback=true undoes everything on
// a failure. All run in one transaction, with a savepoint per record
// except under rollback.
// A single record's failure is its own error; a batch's is a 400 with code
// 1000 listing the failed records.
func (q *tableReq) batch(ctx context.Context, n int, what string, op writeOp) (*batchOutcome, error) {
	out := &batchOutcome{keys: make([][]any, n), before: make([][]byte, n)}
	results := make([]any, 0, n)
	var errs []apierr.BatchItem
	var first *apierr.Error
	fail := func(i int, err error) {
		e := apierr.As(q.b.dbError(err))
		if first == nil {
			first = e
		}
		errs = append(errs, apierr.BatchItem{Index: i, Message: e.Message})
		results = append(results, errorResult(e))
	}
	if q.opts.rollback {
		tx, err := q.db.BeginTx(ctx, nil)
		if err != nil {
			return nil, q.b.dbError(err)
		}
		for i := range n {
			k, before, err := op(ctx, tx, i)
			if err != nil {
				_ = tx.Rollback()
				fail(i, err)
				if n == 1 {
					return nil, first
				}
				return nil, apierr.Batch("Batch Error: Not all requested records could be "+what+". All changes rolled back.", errs, nil)
			}
			out.keys[i], out.before[i] = k, before
		}
		if err := tx.Commit(); err != nil {
			return nil, q.b.dbError(err)
		}
		return out, nil
	}
	if n == 1 {
		err := q.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			out.keys[0], out.before[0], err = op(ctx, tx, 0)
			return err
		})
		if err != nil {
			return nil, q.b.dbError(err)
		}
		return out, nil
	}
	// One transaction with a savepoint per record: a failed record is
	// undone alone, the others are committed together at the end (nothing
	// has been acknowledged before that).
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	defer tx.Rollback()
	for i := range n {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT pc_record"); err != nil {
			return nil, q.b.dbError(err)
		}
		k, before, err := op(ctx, tx, i)
		if err != nil {
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT pc_record"); rerr != nil {
				return nil, q.b.dbError(rerr)
			}
			fail(i, err)
			if !q.opts.cont {
				break
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT pc_record"); err != nil {
			return nil, q.b.dbError(err)
		}
		out.keys[i], out.before[i] = k, before
		results = append(results, keyJSON(q.keyCols(), k))
	}
	if err := tx.Commit(); err != nil {
		return nil, q.b.dbError(err)
	}
	if first == nil {
		return out, nil
	}
	return nil, apierr.Batch("Batch Error: Not all requested records could be "+what+".", errs, results)
}

// keyCols returns the identifying columns, or nil when the table has none.
func (q *tableReq) keyCols() []*dialects.Column {
	cols, err := q.keyColumns()
	if err != nil {
		return nil
	}
	return cols
}

// keyJSON is a record's key as a JSON object, {"id":5}.
func keyJSON(cols []*dialects.Column, key []any) json.RawMessage {
	return appendKeyJSON(nil, cols, key)
}

// appendKeyJSON appends keyJSON(cols, key) to b.
func appendKeyJSON(b []byte, cols []*dialects.Column, key []any) []byte {
	b = append(b, '{')
	for i, c := range cols {
		if i >= len(key) {
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = rowjson.AppendString(b, strings.ToLower(c.Name))
		b = append(b, ':')
		b = appendGo(b, key[i])
	}
	return append(b, '}')
}

// appendGo appends a Go value bound or read for a key as JSON.
func appendGo(b []byte, v any) []byte {
	switch v := v.(type) {
	case int64:
		return strconv.AppendInt(b, v, 10)
	case filter.Decimal:
		return append(b, v...)
	case []byte:
		j, _ := json.Marshal(string(v))
		return append(b, j...)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

// wantRecords reports whether a write must answer with records rather
// than keys: fields or related were asked for.
func (q *tableReq) wantRecords() bool {
	return q.opts.fieldsGiven && strings.TrimSpace(q.opts.fields) != "" || strings.TrimSpace(q.opts.related) != ""
}

// writeKeys answers a collection write: the keys, or the records when
// fields or related were asked for (read after the write; records of a
// delete were read before it).
func (q *tableReq) writeKeys(ctx context.Context, w http.ResponseWriter, res *batchOutcome, deleted bool) error {
	cols := q.keyCols()
	buf := []byte(`{"resource":[`)
	var recs map[string][]byte
	if q.wantRecords() && !deleted && len(cols) > 0 {
		var err error
		if recs, err = q.fetchByKeys(ctx, q.db, cols, res.keys, q.opts.fields); err != nil {
			return err
		}
	}
	for i, k := range res.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		switch {
		case deleted && res.before[i] != nil:
			buf = append(buf, res.before[i]...)
		case recs != nil:
			if r, ok := findRecord(recs, k); ok {
				buf = append(buf, r...)
			} else {
				buf = append(buf, keyJSON(cols, k)...)
			}
		default:
			buf = append(buf, keyJSON(cols, k)...)
		}
	}
	buf = append(buf, "]}\n"...)
	return writeRaw(w, buf)
}

// writable is a column and the value a record gives it.
type writable struct {
	col *dialects.Column
	val any
}

// recordValues reads the fields of rec that are columns of the table, in
// column order. Unknown fields are ignored; a field the grant does not
// allow is a 403; generated columns are skipped. skipKeys leaves out the
// key columns (they identify the record in an update).
func (q *tableReq) recordValues(rec record, insert bool, skip []*dialects.Column) ([]writable, error) {
	var out []writable
	for _, c := range q.table.Columns {
		v, ok := lookup(rec, c.Name)
		if !ok {
			continue
		}
		if !q.grant.AllowsField(c.Name) {
			return nil, apierr.Forbidden("Field '%s' of table '%s' may not be written.", c.Name, q.table.Name)
		}
		if c.Generated || isIn(c, skip) || !insert && c.AutoIncrement {
			continue
		}
		val, err := q.inputValue(c, v)
		if err != nil {
			return nil, err
		}
		if val == nil && !c.AllowNull {
			if insert && (c.AutoIncrement || c.Default != nil) {
				continue // let the database fill it in
			}
			return nil, apierr.BadRequest("Field '%s' can not be NULL.", c.Name)
		}
		out = append(out, writable{col: c, val: val})
	}
	// Fields that name no column are dropped, but a field the grant hides
	// is refused even when it does not exist, so that probing for hidden
	// columns tells nothing.
	for k := range rec {
		if q.table.Column(k) == nil && !q.grant.AllowsField(k) && q.table.Relation(k) == nil {
			return nil, apierr.Forbidden("Field '%s' of table '%s' may not be written.", k, q.table.Name)
		}
	}
	return out, nil
}

func isIn(c *dialects.Column, cols []*dialects.Column) bool {
	for _, k := range cols {
		if k == c {
			return true
		}
	}
	return false
}

func has(ws []writable, c *dialects.Column) bool {
	for _, w := range ws {
		if w.col == c {
			return true
		}
	}
	return false
}

// create answers POST _table/{table}.
func (q *tableReq) create(ctx context.Context, w http.ResponseWriter) error {
	if ok, err := q.createRaw(ctx, w); ok {
		return err
	}
	if err := q.opts.materialize(); err != nil {
		return err
	}
	recs := q.opts.records
	if len(recs) == 0 {
		return apierr.BadRequest(noRecords)
	}
	cols := q.keyCols()
	if q.singleStatement(recs) {
		// One INSERT is atomic alone: no transaction round trips.
		k, err := q.insert(ctx, q.db, recs[0], cols)
		if err != nil {
			return q.b.dbError(err)
		}
		return q.writeKeys(ctx, w, &batchOutcome{keys: [][]any{k}, before: [][]byte{nil}}, false)
	}
	res, err := q.batch(ctx, len(recs), "created", func(ctx context.Context, tx bun.IDB, i int) ([]any, []byte, error) {
		k, err := q.insert(ctx, tx, recs[i], cols)
		return k, nil, err
	})
	if err != nil {
		return err
	}
	return q.writeKeys(ctx, w, res, false)
}

// singleStatement reports whether writing recs is one INSERT or UPDATE: a
// single record with no related records to write and no row filter to
// check afterwards (which would need a transaction to undo it).
func (q *tableReq) singleStatement(recs []record) bool {
	if len(recs) != 1 || q.rowCond != "" || q.opts.rollback {
		return false
	}
	pre, post, err := q.relatedMembers(recs[0])
	return err == nil && len(pre) == 0 && len(post) == 0
}

// insert writes one record and returns its key. Related records the
// record carries are written with it (nested.go).
func (q *tableReq) insert(ctx context.Context, tx bun.IDB, rec record, cols []*dialects.Column) ([]any, error) {
	pre, post, err := q.relatedMembers(rec)
	if err != nil {
		return nil, err
	}
	if len(pre) > 0 {
		rec = copyRecord(rec)
		if err := q.writeBelongsTo(ctx, tx, rec, pre); err != nil {
			return nil, err
		}
	}
	vals, err := q.recordValues(rec, true, nil)
	if err != nil {
		return nil, err
	}
	for _, c := range q.table.Columns {
		if c.Required() && !has(vals, c) {
			return nil, apierr.BadRequest("Required field '%s' can not be NULL.", c.Name)
		}
	}
	if len(vals) == 0 {
		return nil, apierr.BadRequest("No valid fields were found in record.")
	}
	var sb strings.Builder
	args := make([]any, 0, 2*len(vals)+len(cols)+1)
	sb.WriteString("INSERT INTO ? (")
	args = append(args, bun.Ident(q.table.Name))
	for i, v := range vals {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("?")
		args = append(args, bun.Ident(v.col.Name))
	}
	sb.WriteString(") VALUES (")
	for i, v := range vals {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("?")
		args = append(args, setValue(v.val))
	}
	sb.WriteString(")")
	// The key: given in the record, else returned by the database.
	key := make([]any, len(cols))
	given := len(cols) > 0
	for i, c := range cols {
		found := false
		for _, v := range vals {
			if v.col == c {
				key[i], found = v.val, true
			}
		}
		given = given && found
	}
	switch {
	case len(cols) == 0 || given:
		if _, err := q.exec(ctx, tx, sb.String(), args); err != nil {
			return nil, err
		}
	case q.kind == dialects.MySQL:
		res, err := q.exec(ctx, tx, sb.String(), args)
		if err != nil {
			return nil, err
		}
		if len(cols) == 1 && cols[0].AutoIncrement {
			id, err := res.LastInsertId()
			if err != nil {
				return nil, err
			}
			key[0] = id
		}
	default:
		sb.WriteString(" RETURNING ")
		for i, c := range cols {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("?")
			args = append(args, bun.Ident(c.Name))
		}
		ptrs := make([]any, len(cols))
		for i := range key {
			ptrs[i] = &key[i]
		}
		if err := q.queryRow(ctx, tx, sb.String(), args, ptrs...); err != nil {
			return nil, err
		}
		for i := range key {
			key[i] = stringify(key[i])
		}
	}
	if q.rowCond != "" {
		if err := q.checkRowCond(ctx, tx, cols, key); err != nil {
			return nil, err
		}
	}
	if len(post) > 0 {
		if err := q.writeChildren(ctx, tx, cols, key, rec, post); err != nil {
			return nil, err
		}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	return key, nil
}

// setValue is v as the argument of a column assignment (INSERT, UPDATE
// SET). A decimal is bound as its text, which every engine converts
// exactly when it assigns it to the column, so that a write's text, and
// its prepared statement, is the same whatever the number; comparisons
// keep decimals in the text (MySQL compares text with a decimal as
// floating point).
func setValue(v any) any {
	if d, ok := v.(filter.Decimal); ok {
		return string(d)
	}
	return v
}

// checkRowCond fails with 403 unless the record with key satisfies the
// grant's row filters (after it was written, inside the transaction, which
// the failure then undoes).
func (q *tableReq) checkRowCond(ctx context.Context, tx bun.IDB, cols []*dialects.Column, key []any) error {
	if len(cols) == 0 {
		return apierr.Forbidden("Records of table '%s' cannot be checked against the role's record filter.", q.table.Name)
	}
	cond, args := q.keyCond(cols, [][]any{key})
	n, err := q.countWhere(ctx, tx, cond, args)
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.Forbidden("The record does not satisfy the role's record filter for table '%s'.", q.table.Name)
	}
	return nil
}

// exists reports whether a record with key is visible to the caller.
func (q *tableReq) exists(ctx context.Context, tx bun.IDB, cols []*dialects.Column, key []any) (bool, error) {
	cond, args := q.keyCond(cols, [][]any{key})
	n, err := q.countWhere(ctx, tx, cond, args)
	return n > 0, err
}

// defaultValue is what PUT writes to a column the record leaves out: the
// column's default, or NULL.
func (q *tableReq) defaultValue(c *dialects.Column) any {
	if q.kind != dialects.SQLite {
		return bun.Safe("DEFAULT")
	}
	if c.Default == nil {
		return nil
	}
	d := *c.Default
	if c.DefaultIsExpr {
		// The text comes from the database's own schema, never from a request.
		switch strings.ToUpper(d) {
		case "CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME":
			return bun.Safe(strings.ToUpper(d))
		}
		return bun.Safe("(" + d + ")")
	}
	switch {
	case c.Type == dialects.TypeBoolean:
		return d == "true"
	case c.Type.IsNumeric() && isNumber(d):
		return filter.Decimal(strings.TrimPrefix(d, "+"))
	}
	return d
}

// updateOne changes the record with key: the record's fields (merge), or
// every writable field, left-out ones reset to their defaults (replace).
func (q *tableReq) updateOne(ctx context.Context, tx bun.IDB, cols []*dialects.Column, key []any, rec record, replace bool) ([]any, error) {
	pre, post, err := q.relatedMembers(rec)
	if err != nil {
		return nil, err
	}
	if len(pre) > 0 {
		rec = copyRecord(rec)
		if err := q.writeBelongsTo(ctx, tx, rec, pre); err != nil {
			return nil, err
		}
	}
	vals, err := q.recordValues(rec, false, cols)
	if err != nil {
		return nil, err
	}
	if replace {
		for _, c := range q.table.Columns {
			if has(vals, c) || isIn(c, cols) || c.AutoIncrement || c.Generated || c.IsPrimaryKey || !q.grant.AllowsField(c.Name) {
				continue
			}
			if c.Required() {
				return nil, apierr.BadRequest("Required field '%s' can not be NULL.", c.Name)
			}
			vals = append(vals, writable{col: c, val: q.defaultValue(c)})
		}
	}
	cond, cargs := q.keyCond(cols, [][]any{key})
	if q.rowCond != "" {
		cond = "(" + cond + ") AND (" + q.rowCond + ")"
		cargs = append(cargs, q.rowCondArgs...)
	}
	affected := int64(0)
	if len(vals) > 0 {
		var sb strings.Builder
		args := []any{bun.Ident(q.table.Name)}
		sb.WriteString("UPDATE ? SET ")
		for i, v := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("? = ?")
			args = append(args, bun.Ident(v.col.Name), setValue(v.val))
		}
		sb.WriteString(" WHERE ")
		sb.WriteString(cond)
		args = append(args, cargs...)
		res, err := q.exec(ctx, tx, sb.String(), args)
		if err != nil {
			return nil, err
		}
		affected, _ = res.RowsAffected()
	}
	if affected == 0 {
		// MySQL counts changed rows only: look before saying 404.
		ok, err := q.exists(ctx, tx, cols, key)
		if err != nil {
			return nil, err
		}
		if !ok {
			if q.b.cfg.AllowUpsert {
				full := record{}
				for k, v := range rec {
					full[k] = v
				}
				for i, c := range cols {
					full[c.Name] = key[i]
				}
				return q.insert(ctx, tx, full, cols) // writes the children too
			}
			return nil, apierr.NotFound("Record with identifier '%s' not found.", keyText(key))
		}
	}
	if q.rowCond != "" {
		if err := q.checkRowCond(ctx, tx, cols, key); err != nil {
			return nil, err
		}
	}
	if len(post) > 0 {
		if err := q.writeChildren(ctx, tx, cols, key, rec, post); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// bodyRecord is the one record of a write by id, ids or filter: a bare
// object, or a resource list of one.
func (q *tableReq) bodyRecord() (record, error) {
	switch {
	case q.opts.object != nil:
		return q.opts.object, nil
	case len(q.opts.records) == 1:
		return q.opts.records[0], nil
	case len(q.opts.records) > 1:
		return nil, apierr.BadRequest("Only one record may be given for an update by identifier, ids or filter.")
	}
	return nil, apierr.BadRequest("No record detected in request.")
}

// selectKeys returns the keys of the records matching the client's filter
// and the grant.
func (q *tableReq) selectKeys(ctx context.Context, db bun.IDB, cols []*dialects.Column, src string) ([][]any, error) {
	cond, args, err := q.compileFilter(src)
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(cols))
	cargs := make([]any, len(cols))
	for i, c := range cols {
		parts[i] = "?"
		cargs[i] = qualified(q.table.Name, c.Name)
	}
	sq := q.where(db.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).ColumnExpr(strings.Join(parts, ", "), cargs...), cond, args)
	ord, oargs := q.defaultOrder()
	if ord != "" {
		sq = sq.OrderExpr(ord, oargs...)
	}
	rows, err := sq.Rows(ctx)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		k := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range k {
			ptrs[i] = &k[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, q.b.dbError(err)
		}
		for i := range k {
			k[i] = stringify(k[i])
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, q.b.dbError(err)
	}
	return out, nil
}

// targets works out which records a collection update or delete is for:
// ids, a filter, or the records of the body (each carrying its key).
func (q *tableReq) targets(ctx context.Context, cols []*dialects.Column, needBody bool) (keys [][]any, recs []record, err error) {
	o := q.opts
	switch {
	case o.idsGiven:
		if keys, err = idsKeys(cols, o.ids); err != nil {
			return nil, nil, err
		}
	case strings.TrimSpace(o.filter) != "":
		if keys, err = q.selectKeys(ctx, q.db, cols, o.filter); err != nil {
			return nil, nil, err
		}
	default:
		if len(o.records) == 0 {
			return nil, nil, nil
		}
		for i, rec := range o.records {
			k, ok, err := q.recordKey(cols, rec)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return nil, nil, apierr.BadRequest("Required id field(s) not found in record %d: %s.", i, columnNames(cols))
			}
			keys = append(keys, k)
		}
		return keys, o.records, nil
	}
	if needBody {
		rec, err := q.bodyRecord()
		if err != nil {
			return nil, nil, err
		}
		recs = make([]record, len(keys))
		for i := range recs {
			recs[i] = rec
		}
	}
	return keys, recs, nil
}

// update answers PUT (replace) and PATCH (merge) on the collection.
func (q *tableReq) update(ctx context.Context, w http.ResponseWriter, replace bool) error {
	cols, err := q.keyColumns()
	if err != nil {
		return err
	}
	keys, recs, err := q.targets(ctx, cols, true)
	if err != nil {
		return err
	}
	if keys == nil && !q.opts.idsGiven && strings.TrimSpace(q.opts.filter) == "" {
		return apierr.BadRequest(noRecords)
	}
	res, err := q.batch(ctx, len(keys), "updated", func(ctx context.Context, tx bun.IDB, i int) ([]any, []byte, error) {
		k, err := q.updateOne(ctx, tx, cols, keys[i], recs[i], replace)
		return k, nil, err
	})
	if err != nil {
		return err
	}
	return q.writeKeys(ctx, w, res, false)
}

// updateByID answers PUT and PATCH on _table/{table}/{id}: the record after
// the change.
func (q *tableReq) updateByID(ctx context.Context, w http.ResponseWriter, id string, replace bool) error {
	cols, err := q.keyColumns()
	if err != nil {
		return err
	}
	key, err := pathKey(cols, id)
	if err != nil {
		return err
	}
	rec, err := q.bodyRecord()
	if err != nil {
		return err
	}
	if q.singleStatement([]record{rec}) {
		// The UPDATE is atomic alone (the look for a record it did not
		// change, and the INSERT of an upsert, change nothing or are
		// atomic alone too): no transaction round trips.
		if _, err := q.updateOne(ctx, q.db, cols, key, rec, replace); err != nil {
			return q.b.dbError(err)
		}
	} else if _, err := q.batch(ctx, 1, "updated", func(ctx context.Context, tx bun.IDB, _ int) ([]any, []byte, error) {
		k, err := q.updateOne(ctx, tx, cols, key, rec, replace)
		return k, nil, err
	}); err != nil {
		return err
	}
	if ok, err := q.fastGetByID(ctx, w, id); ok {
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

// deleteOne deletes the record with key, returning it as it was when
// withRecord is set.
func (q *tableReq) deleteOne(ctx context.Context, tx bun.IDB, cols []*dialects.Column, key []any, withRecord bool) ([]any, []byte, error) {
	var before []byte
	if withRecord {
		recs, err := q.fetchByKeys(ctx, tx, cols, [][]any{key}, q.opts.fields)
		if err != nil {
			return nil, nil, err
		}
		before, _ = findRecord(recs, key)
	}
	cond, cargs := q.keyCond(cols, [][]any{key})
	args := append([]any{bun.Ident(q.table.Name)}, cargs...)
	text := "DELETE FROM ? WHERE " + cond
	if q.rowCond != "" {
		text = "DELETE FROM ? WHERE (" + cond + ") AND (" + q.rowCond + ")"
		args = append(args, q.rowCondArgs...)
	}
	res, err := q.exec(ctx, tx, text, args)
	if err != nil {
		return nil, nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, nil, apierr.NotFound("Record with identifier '%s' not found.", keyText(key))
	}
	return key, before, nil
}

// delete answers DELETE on the collection: by ids, filter or body records;
// force=true with none of them deletes every record the caller may.
func (q *tableReq) delete(ctx context.Context, w http.ResponseWriter) error {
	o := q.opts
	if o.force && !o.idsGiven && strings.TrimSpace(o.filter) == "" && len(o.records) == 0 {
		sq := "DELETE FROM ?"
		args := []any{bun.Ident(q.table.Name)}
		if q.rowCond != "" {
			sq += " WHERE " + q.rowCond
			args = append(args, q.rowCondArgs...)
		}
		if _, err := q.db.ExecContext(ctx, sq, args...); err != nil {
			return q.b.dbError(err)
		}
		return writeJSON(w, map[string]any{"success": true})
	}
	cols, err := q.keyColumns()
	if err != nil {
		return err
	}
	keys, _, err := q.targets(ctx, cols, false)
	if err != nil {
		return err
	}
	if keys == nil && !o.idsGiven && strings.TrimSpace(o.filter) == "" {
		return apierr.BadRequest("No filter or records given for delete request.")
	}
	want := q.wantRecords()
	res, err := q.batch(ctx, len(keys), "deleted", func(ctx context.Context, tx bun.IDB, i int) ([]any, []byte, error) {
		return q.deleteOne(ctx, tx, cols, keys[i], want)
	})
	if err != nil {
		return err
	}
	return q.writeKeys(ctx, w, res, true)
}

// deleteByID answers DELETE _table/{table}/{id}: the record as it was.
func (q *tableReq) deleteByID(ctx context.Context, w http.ResponseWriter, id string) error {
	cols, err := q.keyColumns()
	if err != nil {
		return err
	}
	key, err := pathKey(cols, id)
	if err != nil {
		return err
	}
	res, err := q.batch(ctx, 1, "deleted", func(ctx context.Context, tx bun.IDB, _ int) ([]any, []byte, error) {
		return q.deleteOne(ctx, tx, cols, key, true)
	})
	if err != nil {
		return err
	}
	if res.before[0] == nil {
		return apierr.NotFound("Record with identifier '%s' not found.", id)
	}
	return writeRaw(w, append(res.before[0], '\n'))
}
