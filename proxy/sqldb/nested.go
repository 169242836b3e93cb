package sqldb

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Nested related writes (DreamFactory's updatePreRelations and
// updatePostRelations): a record written through the table API may carry
// its related records under the relation's name, and they are written in
// the same transaction as the record, so that the batch modes apply to a
// record and its related records together.
//
//   - belongs_to ({ref}_by_{fk}, an object): written before the record. An
//     object without the referenced table's key is created, one with a key
//     that exists is updated (merge), one with a key that does not exist is
//     created; the record's foreign key is set to the object's key.
//   - has_many ({child}_by_{fk}, an array) and has_one (an object): written
//     after the record. A child without its key is created with its foreign
//     key set to the record; a child with its key is updated (merge) and
//     adopted, or created when it does not exist; a child whose foreign key
//     is given as null is released (its foreign key set to null), or
//     deleted when allow_related_delete=true and the foreign key cannot be
//     null. has_one with null releases the current child.
//   - many_many ({ref}_by_{junction}, an array): written after the record.
//     A referenced record without its key is created, one with a key and
//     other fields is updated (or created); each is then linked through a
//     junction row if it was not already. An entry carrying
//     "{table}.{key}": null (DreamFactory's form, e.g. "customer.id": null)
//     unlinks it.
//
// Each related write needs the caller's role to allow it on that table
// (POST, PATCH or DELETE on _table/{related}) and honours that grant's
// fields and record filter, as if it were its own request.

// maxNestDepth bounds how deep related records may nest in one write.
const maxNestDepth = 4

// relMember is a relation named in a record: the member's name as sent,
// and its value.
type relMember struct {
	key string
	rel *dialects.Relation
	val any
}

// relatedMembers returns the members of rec that name a relation of the
// table rather than a column: belongs_to relations (written before the
// record) and the others (written after it), each sorted by name.
func (q *tableReq) relatedMembers(rec record) (pre, post []relMember, err error) {
	for k, v := range rec {
		if q.table.Column(k) != nil {
			continue
		}
		rel := q.table.Relation(k)
		if rel == nil {
			continue
		}
		if !q.grant.AllowsField(rel.Name) {
			return nil, nil, apierr.Forbidden("Field '%s' of table '%s' may not be written.", rel.Name, q.table.Name)
		}
		if len(rel.Fields) != 1 || len(rel.RefFields) != 1 ||
			rel.Type == dialects.ManyMany && (len(rel.JunctionFields) != 1 || len(rel.JunctionRefFields) != 1) {
			return nil, nil, apierr.NotImplemented("Relating records with multi-column foreign keys is not currently supported.")
		}
		if q.nest >= maxNestDepth {
			return nil, nil, apierr.BadRequest("Related records may be nested at most %d levels deep.", maxNestDepth)
		}
		m := relMember{key: k, rel: rel, val: v}
		if rel.Type == dialects.BelongsTo {
			pre = append(pre, m)
		} else {
			post = append(post, m)
		}
	}
	byName := func(ms []relMember) {
		sort.Slice(ms, func(i, j int) bool { return ms[i].rel.Name < ms[j].rel.Name })
	}
	byName(pre)
	byName(post)
	return pre, post, nil
}

// relTable returns a related table of the schema.
func (q *tableReq) relTable(name string) (*dialects.Table, error) {
	rt := q.schema.Table(name)
	if rt == nil {
		return nil, apierr.NotFound("Table \"%s\" does not exist in the database.", name)
	}
	return rt, nil
}

// relatedReq is a request on table t made on the caller's behalf for
// verb, under the caller's grant for that verb on that table (a refusal
// is the error).
func (q *tableReq) relatedReq(ctx context.Context, t *dialects.Table, verb string) (*tableReq, error) {
	var g *caller.Grant
	if q.b.access != nil {
		var err error
		if g, err = q.b.access.Grant(ctx, q.b.name, "_table/"+t.Name, verb); err != nil {
			return nil, err
		}
	}
	c := &tableReq{b: q.b, db: q.db, kind: q.kind, schema: q.schema, table: t, grant: g,
		opts: &options{allowRelatedDelete: q.opts.allowRelatedDelete},
		res:  newResolver(q.schema, t, g), full: newResolver(q.schema, t, nil), nest: q.nest + 1}
	if err := c.compileRowCond(); err != nil {
		return nil, err
	}
	return c, nil
}

// singleKey returns the one primary key column of t (related records are
// matched by it), or a 501 for a table with none or several.
func singleKey(t *dialects.Table) ([]*dialects.Column, error) {
	if len(t.PrimaryKey) == 1 {
		if c := t.Column(t.PrimaryKey[0]); c != nil {
			return []*dialects.Column{c}, nil
		}
	}
	return nil, apierr.NotImplemented("Relating records with multiple field primary keys is not currently supported (table '%s').", t.Name)
}

// asRecord reads a related value that must be one record.
func asRecord(rel *dialects.Relation, v any) (record, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.BadRequest("Related record '%s' must be a JSON object.", rel.Name)
	}
	return copyRecord(m), nil
}

// asRecords reads a related value that must be a list of records (null is
// an empty list).
func asRecords(rel *dialects.Relation, v any) ([]record, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, apierr.BadRequest("Related records '%s' must be an array of JSON objects.", rel.Name)
	}
	out := make([]record, 0, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, apierr.BadRequest("Related record %d of '%s' is not a JSON object.", i, rel.Name)
		}
		out = append(out, copyRecord(m))
	}
	return out, nil
}

func copyRecord(m map[string]any) record {
	out := make(record, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// setField sets field name of rec to v, replacing any other spelling of it.
func setField(rec record, name string, v any) {
	for k := range rec {
		if k != name && strings.EqualFold(k, name) {
			delete(rec, k)
		}
	}
	rec[name] = v
}

// writeBelongsTo writes the belongs_to members of rec before the record,
// sets the record's foreign keys to them and removes the members from rec.
func (q *tableReq) writeBelongsTo(ctx context.Context, tx bun.IDB, rec record, pre []relMember) error {
	for _, m := range pre {
		delete(rec, m.key)
		if m.val == nil {
			continue // as DreamFactory: an empty parent changes nothing
		}
		parent, err := asRecord(m.rel, m.val)
		if err != nil {
			return err
		}
		pt, err := q.relTable(m.rel.RefTable)
		if err != nil {
			return err
		}
		refCol := pt.Column(m.rel.RefFields[0])
		if refCol == nil {
			return apierr.InternalMsg("Incorrect relationship configuration detected.")
		}
		cols, key, err := q.upsertRelated(ctx, tx, pt, parent)
		if err != nil {
			return err
		}
		v, err := q.fieldOf(ctx, tx, pt, cols, key, parent, refCol)
		if err != nil {
			return err
		}
		setField(rec, m.rel.Fields[0], v)
	}
	return nil
}

// upsertRelated writes one record of the related table t by its primary
// key: created when it has none or its key does not exist (POST), else
// updated (PATCH, merge). It returns the key columns and the key.
func (q *tableReq) upsertRelated(ctx context.Context, tx bun.IDB, t *dialects.Table, rec record) ([]*dialects.Column, []any, error) {
	cols, err := singleKey(t)
	if err != nil {
		return nil, nil, err
	}
	probe := &tableReq{b: q.b, kind: q.kind, table: t}
	key, ok, err := probe.recordKey(cols, rec)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		found, err := probe.existsAny(ctx, tx, cols, key)
		if err != nil {
			return nil, nil, err
		}
		if found {
			uq, err := q.relatedReq(ctx, t, http.MethodPatch)
			if err != nil {
				return nil, nil, err
			}
			k, err := uq.updateOne(ctx, tx, cols, key, rec, false)
			return cols, k, err
		}
	}
	cq, err := q.relatedReq(ctx, t, http.MethodPost)
	if err != nil {
		return nil, nil, err
	}
	k, err := cq.insert(ctx, tx, rec, cols)
	return cols, k, err
}

// existsAny reports whether a record with key exists, whatever a grant's
// record filter says (a related record outside it is then refused by the
// update, not created a second time).
func (q *tableReq) existsAny(ctx context.Context, tx bun.IDB, cols []*dialects.Column, key []any) (bool, error) {
	cond, args := q.keyCond(cols, [][]any{key})
	n, err := tx.NewSelect().TableExpr("?", bun.Ident(q.table.Name)).Where(cond, args...).Count(ctx)
	return n > 0, err
}

// fieldOf returns the value of column c of the record of table t with key
// (identified by cols): from the key, from rec, or read from the database.
func (q *tableReq) fieldOf(ctx context.Context, tx bun.IDB, t *dialects.Table, cols []*dialects.Column, key []any, rec record, c *dialects.Column) (any, error) {
	for i, k := range cols {
		if k == c && i < len(key) {
			return key[i], nil
		}
	}
	probe := &tableReq{b: q.b, kind: q.kind, table: t}
	if v, ok := lookup(rec, c.Name); ok && v != nil {
		return probe.inputValue(c, v)
	}
	if len(cols) == 0 || len(key) != len(cols) {
		return nil, nil
	}
	cond, args := probe.keyCond(cols, [][]any{key})
	var out any
	err := tx.NewSelect().TableExpr("?", bun.Ident(t.Name)).ColumnExpr("?", qualified(t.Name, c.Name)).
		Where(cond, args...).Limit(1).Scan(ctx, &out)
	if err != nil {
		return nil, err
	}
	return stringify(out), nil
}

// writeChildren writes the has_one, has_many and many_many members of a
// record after it, the record being the one with key.
func (q *tableReq) writeChildren(ctx context.Context, tx bun.IDB, cols []*dialects.Column, key []any, rec record, post []relMember) error {
	for _, m := range post {
		own := q.table.Column(m.rel.Fields[0])
		if own == nil {
			return apierr.InternalMsg("Incorrect relationship configuration detected.")
		}
		ownVal, err := q.fieldOf(ctx, tx, q.table, cols, key, rec, own)
		if err != nil {
			return err
		}
		if ownVal == nil {
			return apierr.BadRequest("The %s referencing field %s can not be empty.", q.table.Name, own.Name)
		}
		switch m.rel.Type {
		case dialects.HasMany:
			items, err := asRecords(m.rel, m.val)
			if err != nil {
				return err
			}
			for _, it := range items {
				if err := q.writeChild(ctx, tx, m.rel, ownVal, it); err != nil {
					return err
				}
			}
		case dialects.HasOne:
			if err := q.writeHasOne(ctx, tx, m.rel, ownVal, m.val); err != nil {
				return err
			}
		case dialects.ManyMany:
			items, err := asRecords(m.rel, m.val)
			if err != nil {
				return err
			}
			if err := q.writeManyMany(ctx, tx, m.rel, ownVal, items); err != nil {
				return err
			}
		}
	}
	return nil
}

// notNullMsg refuses to release a child whose foreign key cannot be null.
const notNullMsg = "Field '%s' of table '%s' can not be NULL; send allow_related_delete=true to delete the related record instead."

// writeChild writes one child of a has_many or has_one relation of the
// record whose referenced field is ownVal.
func (q *tableReq) writeChild(ctx context.Context, tx bun.IDB, rel *dialects.Relation, ownVal any, it record) error {
	ct, err := q.relTable(rel.RefTable)
	if err != nil {
		return err
	}
	fk := ct.Column(rel.RefFields[0])
	if fk == nil {
		return apierr.InternalMsg("Incorrect relationship configuration detected.")
	}
	cols, err := singleKey(ct)
	if err != nil {
		return err
	}
	probe := &tableReq{b: q.b, kind: q.kind, table: ct}
	key, hasKey, err := probe.recordKey(cols, it)
	if err != nil {
		return err
	}
	if v, given := lookup(it, fk.Name); given && v == nil && hasKey {
		// Released: deleted when it cannot stand alone and that is
		// allowed, else its foreign key set to null.
		if !fk.AllowNull {
			if !q.opts.allowRelatedDelete {
				return apierr.BadRequest(notNullMsg, fk.Name, ct.Name)
			}
			dq, err := q.relatedReq(ctx, ct, http.MethodDelete)
			if err != nil {
				return err
			}
			_, _, err = dq.deleteOne(ctx, tx, cols, key, false)
			return err
		}
		uq, err := q.relatedReq(ctx, ct, http.MethodPatch)
		if err != nil {
			return err
		}
		_, err = uq.updateOne(ctx, tx, cols, key, it, false)
		return err
	}
	setField(it, fk.Name, ownVal)
	_, _, err = q.upsertRelated(ctx, tx, ct, it)
	return err
}

// writeHasOne writes the one child of a has_one relation; null (or {})
// releases the current one, or deletes it under allow_related_delete when
// its foreign key cannot be null.
func (q *tableReq) writeHasOne(ctx context.Context, tx bun.IDB, rel *dialects.Relation, ownVal any, v any) error {
	m, isObj := v.(map[string]any)
	if v != nil && !isObj {
		return apierr.BadRequest("Related record '%s' must be a JSON object or null.", rel.Name)
	}
	if len(m) > 0 {
		return q.writeChild(ctx, tx, rel, ownVal, copyRecord(m))
	}
	ct, err := q.relTable(rel.RefTable)
	if err != nil {
		return err
	}
	fk := ct.Column(rel.RefFields[0])
	if fk == nil {
		return apierr.InternalMsg("Incorrect relationship configuration detected.")
	}
	cond, args := "? = ?", []any{qualified(ct.Name, fk.Name), ownVal}
	if !fk.AllowNull {
		if !q.opts.allowRelatedDelete {
			return apierr.BadRequest(notNullMsg, fk.Name, ct.Name)
		}
		dq, err := q.relatedReq(ctx, ct, http.MethodDelete)
		if err != nil {
			return err
		}
		return dq.execWhere(ctx, tx, "DELETE FROM ?", nil, cond, args)
	}
	uq, err := q.relatedReq(ctx, ct, http.MethodPatch)
	if err != nil {
		return err
	}
	if !uq.grant.AllowsField(fk.Name) {
		return apierr.Forbidden("Field '%s' of table '%s' may not be written.", fk.Name, ct.Name)
	}
	return uq.execWhere(ctx, tx, "UPDATE ? SET ? = NULL", []any{bun.Ident(fk.Name)}, cond, args)
}

// execWhere runs "head WHERE cond" on the table within the grant's record
// filter; head's first placeholder is the table, then headArgs.
func (q *tableReq) execWhere(ctx context.Context, tx bun.IDB, head string, headArgs []any, cond string, args []any) error {
	all := append([]any{bun.Ident(q.table.Name)}, headArgs...)
	text := head + " WHERE " + cond
	all = append(all, args...)
	if q.rowCond != "" {
		text = head + " WHERE (" + cond + ") AND (" + q.rowCond + ")"
		all = append(all, q.rowCondArgs...)
	}
	_, err := tx.ExecContext(ctx, text, all...)
	return err
}

// writeManyMany writes the records related through a junction table, and
// links or unlinks them from the record whose referenced field is ownVal.
func (q *tableReq) writeManyMany(ctx context.Context, tx bun.IDB, rel *dialects.Relation, ownVal any, items []record) error {
	if len(items) == 0 {
		return nil
	}
	rt, err := q.relTable(rel.RefTable)
	if err != nil {
		return err
	}
	jt, err := q.relTable(rel.JunctionTable)
	if err != nil {
		return err
	}
	refCol := rt.Column(rel.RefFields[0])
	jOwn := jt.Column(rel.JunctionFields[0])
	jRef := jt.Column(rel.JunctionRefFields[0])
	if refCol == nil || jOwn == nil || jRef == nil {
		return apierr.InternalMsg("Incorrect relationship configuration detected.")
	}
	cols, err := singleKey(rt)
	if err != nil {
		return err
	}
	ownPK, err := singleKey(q.table)
	if err != nil {
		return err
	}
	unlinkKey := q.table.Name + "." + ownPK[0].Name
	probe := &tableReq{b: q.b, kind: q.kind, table: rt}
	for _, it := range items {
		key, hasKey, err := probe.recordKey(cols, it)
		if err != nil {
			return err
		}
		if v, given := lookup(it, unlinkKey); given && v == nil {
			if !hasKey {
				return apierr.BadRequest("Related record of '%s' to unlink has no '%s'.", rel.Name, cols[0].Name)
			}
			refVal, err := q.fieldOf(ctx, tx, rt, cols, key, it, refCol)
			if err != nil {
				return err
			}
			dq, err := q.relatedReq(ctx, jt, http.MethodDelete)
			if err != nil {
				return err
			}
			if err := dq.execWhere(ctx, tx, "DELETE FROM ?", nil, "? = ? AND ? = ?",
				[]any{qualified(jt.Name, jOwn.Name), ownVal, qualified(jt.Name, jRef.Name), refVal}); err != nil {
				return err
			}
			continue
		}
		for k := range it {
			if strings.EqualFold(k, unlinkKey) {
				delete(it, k)
			}
		}
		if hasKey && len(it) == 1 {
			// Only the key: link a record that exists.
			found, err := probe.existsAny(ctx, tx, cols, key)
			if err != nil {
				return err
			}
			if !found {
				return apierr.NotFound("Record with identifier '%s' not found in table '%s'.", keyText(key), rt.Name)
			}
		} else if _, key, err = q.upsertRelated(ctx, tx, rt, it); err != nil {
			return err
		}
		refVal, err := q.fieldOf(ctx, tx, rt, cols, key, it, refCol)
		if err != nil {
			return err
		}
		n, err := tx.NewSelect().TableExpr("?", bun.Ident(jt.Name)).
			Where("? = ? AND ? = ?", qualified(jt.Name, jOwn.Name), ownVal, qualified(jt.Name, jRef.Name), refVal).Count(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			continue // already linked
		}
		jq, err := q.relatedReq(ctx, jt, http.MethodPost)
		if err != nil {
			return err
		}
		jcols, _ := jq.keyColumns()
		if _, err := jq.insert(ctx, tx, record{jOwn.Name: ownVal, jRef.Name: refVal}, jcols); err != nil {
			return err
		}
	}
	return nil
}
