package system

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// writer is one write transaction: every record of a batch written in it
// and the nested records of each.
type writer struct {
	ctx context.Context
	tx  bun.IDB
	b   *Backend
	id  *caller.Identity
	now time.Time
	// after runs once the transaction has committed (counter resets).
	after []func(ctx context.Context)
	// params are the request's parameters (regenerate, …); may be nil.
	params *params
}

// flag reads a boolean request parameter.
func (w *writer) flag(name string) bool { return w.params != nil && w.params.flag(name) }

// userID is the caller's user id for the audit columns, nil without one.
func (w *writer) userID() *int64 {
	if w.id == nil || w.id.UserID == 0 {
		return nil
	}
	id := w.id.UserID
	return &id
}

// check is what a resource's validation hook is given.
type check struct {
	w *writer
	// create is true for a new record.
	create bool
	// in is the client's record.
	in fields
	// nestedFK names the parent key column when the record is written
	// nested in its parent, whose existence the hook must not check (the
	// parent may not exist yet).
	nestedFK string
}

// model is what relations need of a resource, without its Go type.
type model interface {
	resourceName() string
	keyColumn() string
	tableName() string
	column(name string) (*field, bool)
	// readWhere reads the records whose column is one of values, encoded,
	// with the value of column for grouping.
	readWhere(ctx context.Context, db bun.IDB, column string, values []any) ([]keyed, error)
	// prepareNested validates one entry of a has-many relation written in
	// its parent and returns the write to run once the parent's key is
	// known.
	prepareNested(w *writer, fk string, parentKey int64, in fields, p *problems) (func(parentKey int64) error, error)
}

// keyed is an encoded record with the value of the column it was read by.
type keyed struct {
	by  any
	obj object
}

// relation links a resource to records of another.
type relation struct {
	// name is DreamFactory's related name, {table}_by_{field}.
	name string
	// target is the related resource.
	target func() model
	// many is true for has-many (target.fk = this.key), false for
	// belongs-to (this.fk = target.key).
	many bool
	// fk is the key column: on the target for has-many, on this resource
	// for belongs-to.
	fk string
	// writable relations may be written nested in a create or update.
	writable bool
}

// table is a system resource over the store model T.
type table[T any] struct {
	name     string // resource name, e.g. "app"
	key      string // key column: "id" or "name"
	table    string // SQL table
	alias    string // bun's alias of the model
	fields   []*field
	byName   map[string]*field
	keyField *field
	// scope restricts the rows the resource reaches (admins vs users,
	// global lookups).
	scope func(q *bun.SelectQuery) *bun.SelectQuery
	// relations are the related records.
	relations []*relation
	// defaults prepares a new record before the client's values apply.
	defaults func(w *writer, rec *T)
	// validate checks and derives a record after the client's values
	// applied; old is nil on create. It adds problems to p and returns
	// only errors that are not the client's (database failures, 409s).
	validate func(c *check, rec, old *T, p *problems) error
	// beforeDelete may refuse a delete.
	beforeDelete func(w *writer, rec *T) error
	// afterWrite runs in the transaction after an insert or update.
	afterWrite func(w *writer, rec, old *T) error
	// afterDelete runs in the transaction after a delete.
	afterDelete func(w *writer, rec *T) error
	// output adjusts a record's encoding (masking private values).
	output func(ctx context.Context, rec *T, o *object)
	// created adds members to the key a create returns when no fields were
	// asked for (an app's api_key, which the spec returns on create).
	created func(rec *T) object
	// http holds the per-resource HTTP variations.
	http tableHTTP[T]
	// defaulted are the columns with an SQL default that is not their Go
	// zero value (is_active default true…): bun writes DEFAULT for a zero
	// value on insert, so a client's false must be sent explicitly.
	defaulted []*schema.Field
}

// bind finishes the definition against db's schema.
func (t *table[T]) bind(db *bun.DB) *table[T] {
	typ := reflect.TypeFor[T]()
	meta := db.Table(typ)
	t.table, t.alias = meta.Name, meta.Alias
	for _, f := range meta.Fields {
		if f.SQLDefault != "" && !f.IsPK && !f.IsPtr && !f.NullZero {
			t.defaulted = append(t.defaulted, f)
		}
	}
	bindFields(typ, t.fields)
	t.byName = make(map[string]*field, len(t.fields))
	for _, f := range t.fields {
		t.byName[f.name] = f
	}
	t.keyField = t.byName[t.key]
	if t.keyField == nil {
		panic("system: resource " + t.name + " has no key field " + t.key)
	}
	return t
}

func (t *table[T]) resourceName() string { return t.name }
func (t *table[T]) keyColumn() string    { return t.key }
func (t *table[T]) tableName() string    { return t.table }

func (t *table[T]) column(name string) (*field, bool) {
	f, ok := t.byName[name]
	return f, ok
}

func (t *table[T]) relation(name string) *relation {
	for _, r := range t.relations {
		if r.name == name {
			return r
		}
	}
	return nil
}

// value returns the struct field of f in rec.
func value(rec any, f *field) reflect.Value {
	return reflect.ValueOf(rec).Elem().FieldByIndex(f.index)
}

// keyOf returns rec's key (int64 or string).
func (t *table[T]) keyOf(rec *T) any { return value(rec, t.keyField).Interface() }

// parseKey converts a key from a URL or a record; ok is false when it
// cannot be one.
func (t *table[T]) parseKey(s string) (any, bool) {
	if t.key != "id" {
		if s == "" {
			return nil, false
		}
		return s, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return nil, false
	}
	return n, true
}

// keyFromRecord reads the key member of a client record.
func (t *table[T]) keyFromRecord(in fields) (any, bool) {
	raw, ok := in[t.key]
	if !ok || isNullJSON(raw) {
		return nil, false
	}
	s, ok := scalarText(raw)
	if !ok {
		return nil, false
	}
	return t.parseKey(s)
}

func notFound(key any) error {
	return apierr.NotFound("Record with identifier '%v' not found.", key)
}

// selectQ starts a scoped select of T into dest.
func (t *table[T]) selectQ(db bun.IDB, dest any) *bun.SelectQuery {
	q := db.NewSelect().Model(dest)
	if t.scope != nil {
		q = t.scope(q)
	}
	return q
}

// load reads one record by key within the resource's scope.
func (t *table[T]) load(ctx context.Context, db bun.IDB, key any) (*T, error) {
	rec := new(T)
	err := t.selectQ(db, rec).Where("?.? = ?", bun.Ident(t.alias), bun.Ident(t.key), key).Limit(1).Scan(ctx)
	if store.IsNoRows(err) {
		return nil, notFound(key)
	}
	if err != nil {
		return nil, dbError(err)
	}
	return rec, nil
}

// encode renders rec with its readable fields.
func (t *table[T]) encode(ctx context.Context, rec *T) (object, error) {
	o := make(object, 0, len(t.fields))
	rv := reflect.ValueOf(rec).Elem()
	for _, f := range t.fields {
		if !f.readable() {
			continue
		}
		var v any
		switch {
		case f.compute != nil:
			v = f.compute(rv)
		case f.encode != nil:
			var err error
			if v, err = f.encode(rv.FieldByIndex(f.index)); err != nil {
				return nil, fmt.Errorf("encode %s.%s: %w", t.name, f.name, err)
			}
		default:
			v = rv.FieldByIndex(f.index).Interface()
		}
		o = append(o, member{f.name, v})
	}
	if t.output != nil {
		t.output(ctx, rec, &o)
	}
	return o, nil
}

// shape is how records are returned: the fields and relations asked for.
type shape struct {
	fields    []string
	relations []*relation
	// all is set by fields=*: whole records even where only keys would be
	// returned.
	all bool
}

// plain reports whether nothing beyond the default was asked for.
func (s shape) plain() bool { return s.fields == nil && !s.all && len(s.relations) == 0 }

// shapeOf reads fields and related from p and checks them against t.
func (t *table[T]) shapeOf(p *params) (shape, error) {
	var s shape
	fs, err := p.fields()
	if err != nil {
		return s, err
	}
	for _, name := range fs {
		f, ok := t.byName[name]
		if (!ok || !f.readable()) && t.relation(name) == nil {
			return s, apierr.BadRequest("Invalid field '%s' requested for resource '%s'.", name, t.name)
		}
	}
	s.fields = fs
	s.all = fs == nil && p.has("fields", "select")
	names, all := p.related()
	if all {
		s.relations = t.relations
	}
	for _, n := range names {
		r := t.relation(n)
		if r == nil {
			return s, apierr.BadRequest("Invalid relationship '%s' requested for resource '%s'.", n, t.name)
		}
		s.relations = append(s.relations, r)
	}
	if s.fields != nil {
		for _, r := range s.relations {
			s.fields = appendUnique(s.fields, r.name)
		}
	}
	return s, nil
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// render encodes records with the relations of s, projected on s.fields.
func (t *table[T]) render(ctx context.Context, db bun.IDB, recs []*T, s shape) ([]object, error) {
	out := make([]object, len(recs))
	for i, rec := range recs {
		o, err := t.encode(ctx, rec)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	for _, r := range s.relations {
		if err := t.attach(ctx, db, recs, out, r); err != nil {
			return nil, err
		}
	}
	if s.fields != nil {
		for i := range out {
			out[i] = out[i].only(s.fields)
		}
	}
	return out, nil
}

// attach adds relation r to each encoded record.
func (t *table[T]) attach(ctx context.Context, db bun.IDB, recs []*T, out []object, r *relation) error {
	target := r.target()
	if r.many {
		keys := make([]any, 0, len(recs))
		for _, rec := range recs {
			keys = append(keys, t.keyOf(rec))
		}
		rows, err := target.readWhere(ctx, db, r.fk, keys)
		if err != nil {
			return err
		}
		groups := map[string][]object{}
		for _, row := range rows {
			k := keyString(row.by)
			groups[k] = append(groups[k], row.obj)
		}
		for i, rec := range recs {
			list := groups[keyString(t.keyOf(rec))]
			if list == nil {
				list = []object{}
			}
			out[i].set(r.name, list)
		}
		return nil
	}
	fk := t.byName[r.fk]
	var vals []any
	for _, rec := range recs {
		if v, ok := fkValue(value(rec, fk)); ok {
			vals = append(vals, v)
		}
	}
	byKey := map[string]object{}
	if len(vals) > 0 {
		rows, err := target.readWhere(ctx, db, target.keyColumn(), vals)
		if err != nil {
			return err
		}
		for _, row := range rows {
			byKey[keyString(row.by)] = row.obj
		}
	}
	for i, rec := range recs {
		var v any
		if k, ok := fkValue(value(rec, fk)); ok {
			if o, ok := byKey[keyString(k)]; ok {
				v = o
			}
		}
		out[i].set(r.name, v)
	}
	return nil
}

// fkValue returns the value of an integer key field, false when null or 0.
func fkValue(v reflect.Value) (int64, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	if n := v.Int(); n != 0 {
		return n, true
	}
	return 0, false
}

// setFK stores n into an integer key field (plain or pointer).
func setFK(v reflect.Value, n int64) {
	if v.Kind() == reflect.Pointer {
		x := reflect.New(v.Type().Elem())
		x.Elem().SetInt(n)
		v.Set(x)
		return
	}
	v.SetInt(n)
}

func keyString(v any) string {
	switch t := v.(type) {
	case *int64:
		if t == nil {
			return ""
		}
		return strconv.FormatInt(*t, 10)
	}
	return fmt.Sprint(v)
}

// readWhere implements model.
func (t *table[T]) readWhere(ctx context.Context, db bun.IDB, column string, values []any) ([]keyed, error) {
	if len(values) == 0 {
		return nil, nil
	}
	f, ok := t.byName[column]
	if !ok {
		return nil, fmt.Errorf("system: %s has no column %s", t.name, column)
	}
	var recs []*T
	err := t.selectQ(db, &recs).Where("?.? IN (?)", bun.Ident(t.alias), bun.Ident(column), bun.List(values)).
		OrderExpr("?.? ASC", bun.Ident(t.alias), bun.Ident(t.key)).Scan(ctx)
	if err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	out := make([]keyed, 0, len(recs))
	for _, rec := range recs {
		o, err := t.encode(ctx, rec)
		if err != nil {
			return nil, err
		}
		by := value(rec, f).Interface()
		if p, ok := by.(*int64); ok && p != nil {
			by = *p
		}
		out = append(out, keyed{by: by, obj: o})
	}
	return out, nil
}

// Field implements filter.Resolver over the readable columns of the
// resource, and over those of its relations with dotted names
// ("role_service_access_by_role_id.service_id").
func (t *table[T]) Field(path []string) (filter.Field, error) {
	switch len(path) {
	case 1:
		f, ok := t.byName[path[0]]
		if !ok || !f.filterable() {
			return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, path[0])
		}
		return filter.Field{Expr: bun.SafeQuery("?.?", bun.Ident(t.alias), bun.Ident(f.column)), Kind: f.kind}, nil
	case 2:
		r := t.relation(path[0])
		if r == nil {
			break
		}
		target := r.target()
		f, ok := target.column(path[1])
		if !ok || !f.filterable() {
			return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, strings.Join(path, "."))
		}
		const alias = "rel"
		var on schema.QueryAppender
		if r.many {
			on = bun.SafeQuery("?.? = ?.?", bun.Ident(alias), bun.Ident(r.fk), bun.Ident(t.alias), bun.Ident(t.key))
		} else {
			on = bun.SafeQuery("?.? = ?.?", bun.Ident(alias), bun.Ident(target.keyColumn()), bun.Ident(t.alias), bun.Ident(r.fk))
		}
		return filter.Field{
			Expr: bun.SafeQuery("?.?", bun.Ident(alias), bun.Ident(f.column)),
			Kind: f.kind,
			Related: &filter.Related{
				From: bun.SafeQuery("? AS ?", bun.Ident(target.tableName()), bun.Ident(alias)),
				On:   on,
			},
		}, nil
	}
	return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, strings.Join(path, "."))
}

// where applies the filter parameter to q.
func (t *table[T]) where(q *bun.SelectQuery, e filter.Expr) (*bun.SelectQuery, error) {
	if e == nil {
		return q, nil
	}
	sql, args, err := filter.Compile(e, t)
	if err != nil {
		return nil, compileErr("filter", err)
	}
	if sql != "" {
		q = q.Where(sql, args...)
	}
	return q, nil
}

// decode applies the client's writable members to rec, adding a problem
// for each value of the wrong type. Unknown and read-only members are
// ignored, as DreamFactory ignores what it cannot fill (clients send back
// whole records, ids and dates included).
func (t *table[T]) decode(rec *T, in fields, create bool, p *problems) {
	rv := reflect.ValueOf(rec).Elem()
	for _, f := range t.fields {
		raw, ok := in[f.name]
		if !ok || f.column == "" || !f.writable(create) {
			continue
		}
		v := rv.FieldByIndex(f.index)
		var err error
		if f.decode != nil {
			err = f.decode(raw, v)
		} else {
			err = decodeValue(raw, v)
		}
		if err != nil {
			p.add(f.name, "%s", err.Error())
		}
	}
}

// stamp fills the audit columns.
func stamp(w *writer, rec any, create bool) {
	rv := reflect.ValueOf(rec).Elem()
	a := rv.FieldByName("Audit")
	if !a.IsValid() {
		return
	}
	audit := a.Addr().Interface().(*store.Audit)
	if create {
		audit.CreatedDate = w.now
		audit.CreatedByID = w.userID()
	}
	audit.LastModifiedDate = w.now
	audit.LastModifiedByID = w.userID()
}

// nestedWrites prepares the has-many entries of in for the writable
// relations of t.
func (t *table[T]) nestedWrites(w *writer, in fields, parentKey int64, p *problems) ([]func(int64) error, error) {
	var ops []func(int64) error
	for _, r := range t.relations {
		raw, ok := in[r.name]
		if !ok || !r.many {
			continue
		}
		if !r.writable {
			p.add(r.name, "related records '%s' cannot be written through this resource", r.name)
			continue
		}
		if isNullJSON(raw) {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			p.add(r.name, "must be an array of records")
			continue
		}
		target := r.target()
		for i, item := range list {
			var entry map[string]json.RawMessage
			sub := p.nested(fmt.Sprintf("%s[%d].", r.name, i))
			if err := json.Unmarshal(item, &entry); err != nil || entry == nil {
				sub.add("", "must be a JSON object")
				p.merge(sub)
				continue
			}
			op, err := target.prepareNested(w, r.fk, parentKey, fields(entry), sub)
			p.merge(sub)
			if err != nil {
				return nil, err
			}
			if op != nil {
				ops = append(ops, op)
			}
		}
	}
	return ops, nil
}

// intKey returns an int64 key, 0 for name-keyed records.
func intKey(k any) int64 {
	n, _ := k.(int64)
	return n
}

// create validates and inserts one record with its nested records.
func (t *table[T]) create(w *writer, in fields) (*T, error) {
	rec := new(T)
	if t.defaults != nil {
		t.defaults(w, rec)
	}
	p := &problems{}
	t.decode(rec, in, true, p)
	if t.validate != nil {
		if err := t.validate(&check{w: w, create: true, in: in}, rec, nil, p); err != nil {
			return nil, err
		}
	}
	ops, err := t.nestedWrites(w, in, 0, p)
	if err != nil {
		return nil, err
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if err := t.insert(w, rec); err != nil {
		return nil, err
	}
	key := intKey(t.keyOf(rec))
	for _, op := range ops {
		if err := op(key); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

func (t *table[T]) insert(w *writer, rec *T) error {
	stamp(w, rec, true)
	rv := reflect.ValueOf(rec).Elem()
	var zero []*schema.Field
	for _, f := range t.defaulted {
		if rv.FieldByIndex(f.Index).IsZero() {
			zero = append(zero, f)
		}
	}
	if _, err := w.tx.NewInsert().Model(rec).Exec(w.ctx); err != nil {
		return dbError(err)
	}
	if len(zero) > 0 {
		// bun inserted DEFAULT (or left the column out) for these zero
		// values and read the defaults back: write the zeros the client
		// asked for.
		cols := make([]string, len(zero))
		for i, f := range zero {
			rv.FieldByIndex(f.Index).SetZero()
			cols[i] = f.Name
		}
		if _, err := w.tx.NewUpdate().Model(rec).Column(cols...).WherePK().Exec(w.ctx); err != nil {
			return dbError(err)
		}
	}
	if t.afterWrite != nil {
		return t.afterWrite(w, rec, nil)
	}
	return nil
}

// update merges in into the record with key and writes it with its nested
// records.
func (t *table[T]) update(w *writer, key any, in fields) (*T, error) {
	old, err := t.load(w.ctx, w.tx, key)
	if err != nil {
		return nil, err
	}
	rec := new(T)
	*rec = *old
	p := &problems{}
	t.decode(rec, in, false, p)
	if t.validate != nil {
		if err := t.validate(&check{w: w, in: in}, rec, old, p); err != nil {
			return nil, err
		}
	}
	ops, err := t.nestedWrites(w, in, intKey(key), p)
	if err != nil {
		return nil, err
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if err := t.save(w, rec, old); err != nil {
		return nil, err
	}
	for _, op := range ops {
		if err := op(intKey(key)); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

func (t *table[T]) save(w *writer, rec, old *T) error {
	stamp(w, rec, false)
	if _, err := w.tx.NewUpdate().Model(rec).WherePK().Exec(w.ctx); err != nil {
		return dbError(err)
	}
	if t.afterWrite != nil {
		return t.afterWrite(w, rec, old)
	}
	return nil
}

func (t *table[T]) delete(w *writer, rec *T) error {
	if t.beforeDelete != nil {
		if err := t.beforeDelete(w, rec); err != nil {
			return err
		}
	}
	if _, err := w.tx.NewDelete().Model(rec).WherePK().Exec(w.ctx); err != nil {
		return dbError(err)
	}
	if t.afterDelete != nil {
		return t.afterDelete(w, rec)
	}
	return nil
}

// prepareNested implements model for has-many children: an entry with an
// id updates (or, with the parent key null, deletes) that record, one
// without creates a record under the parent.
func (t *table[T]) prepareNested(w *writer, fk string, parentKey int64, in fields, p *problems) (func(int64) error, error) {
	fkField := t.byName[fk]
	if key, ok := t.keyFromRecord(in); ok {
		old, err := t.load(w.ctx, w.tx, key)
		if err != nil {
			if isNotFound(err) {
				p.add(t.key, "related record '%v' not found", key)
				return nil, nil
			}
			return nil, err
		}
		current, _ := fkValue(value(old, fkField))
		if in.isNull(fk) {
			if parentKey == 0 || current != parentKey {
				p.add(fk, "record '%v' does not belong to this record, so it cannot be removed from it", key)
				return nil, nil
			}
			return func(int64) error { return t.delete(w, old) }, nil
		}
		rec := new(T)
		*rec = *old
		t.decode(rec, in, false, p)
		reparent := in.has(fk)
		nested := fk
		if target, ok := fkValue(value(rec, fkField)); reparent && ok && target != parentKey {
			nested = "" // moved to another parent: that parent must exist
		} else {
			reparent = false
		}
		if t.validate != nil {
			if err := t.validate(&check{w: w, in: in, nestedFK: nested}, rec, old, p); err != nil {
				return nil, err
			}
		}
		return func(parent int64) error {
			if !reparent {
				setFK(value(rec, fkField), parent)
			}
			return t.save(w, rec, old)
		}, nil
	}
	if in.isNull(fk) {
		p.add(fk, "a new related record cannot have a null %s", fk)
		return nil, nil
	}
	rec := new(T)
	if t.defaults != nil {
		t.defaults(w, rec)
	}
	t.decode(rec, in, true, p)
	setFK(value(rec, fkField), parentKey)
	if t.validate != nil {
		if err := t.validate(&check{w: w, create: true, in: in, nestedFK: fk}, rec, nil, p); err != nil {
			return nil, err
		}
	}
	return func(parent int64) error {
		setFK(value(rec, fkField), parent)
		return t.insert(w, rec)
	}, nil
}

func isNotFound(err error) bool {
	ae, ok := err.(*apierr.Error)
	return ok && ae.Status == 404
}
