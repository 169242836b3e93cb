// The HTTP verbs of a system table: list, read, create, update and
// delete, one record or many, in the shapes of the spec.

package system

import (
	"context"
	"io"
	"net/http"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// endpoint is a system resource served over HTTP.
type endpoint interface {
	model
	// collection serves /system/R.
	collection(b *Backend, w http.ResponseWriter, r *http.Request) error
	// record serves /system/R/{key}.
	record(b *Backend, w http.ResponseWriter, r *http.Request, key string) error
}

// tableOpts are the per-resource HTTP variations.
type tableHTTP[T any] struct {
	// getValue, when set, is what GET by key returns instead of the record
	// (custom settings return their value).
	getValue func(rec *T) any
	// upsertByKey lets POST /R/{key} create the record, or update it when
	// it exists (event scripts).
	upsertByKey bool
}

func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apierr.As(err)
	}
	return data, nil
}

func (t *table[T]) collection(b *Backend, w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return t.list(b, w, r)
	case http.MethodPost:
		return t.createMany(b, w, r)
	case http.MethodPut, http.MethodPatch:
		return t.updateMany(b, w, r)
	case http.MethodDelete:
		return t.deleteMany(b, w, r)
	}
	return apierr.MethodNotAllowed(r.Method)
}

func (t *table[T]) record(b *Backend, w http.ResponseWriter, r *http.Request, raw string) error {
	key, ok := t.parseKey(raw)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if !ok {
			return notFound(raw)
		}
		return t.getOne(b, w, r, key)
	case http.MethodPost:
		if t.http.upsertByKey && ok {
			return t.upsert(b, w, r, key)
		}
		return apierr.BadRequest("Create record by identifier not currently supported.")
	case http.MethodPut, http.MethodPatch:
		if !ok {
			return notFound(raw)
		}
		return t.updateOne(b, w, r, key)
	case http.MethodDelete:
		if !ok {
			return notFound(raw)
		}
		return t.deleteOne(b, w, r, key)
	}
	return apierr.MethodNotAllowed(r.Method)
}

// list serves GET /system/R.
func (t *table[T]) list(b *Backend, w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := newParams(r.URL.Query())
	sh, err := t.shapeOf(p)
	if err != nil {
		return err
	}
	ids, err := p.ids()
	if err != nil {
		return err
	}
	if ids != nil {
		recs, err := t.loadKeys(ctx, b.db, ids)
		if err != nil {
			return err
		}
		objs, err := t.render(ctx, b.db, recs, sh)
		if err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusOK, object{{"resource", objs}})
	}
	e, err := p.filterExpr()
	if err != nil {
		return err
	}
	order, err := p.order()
	if err != nil {
		return err
	}
	limit, err := p.limit()
	if err != nil {
		return err
	}
	offset, err := p.offset()
	if err != nil {
		return err
	}
	var recs []*T
	q, err := t.where(t.selectQ(b.db, &recs), e)
	if err != nil {
		return err
	}
	if p.flag("count_only") {
		n, err := q.Count(ctx)
		if err != nil {
			return dbError(err)
		}
		return apierr.WriteJSON(w, http.StatusOK, object{{"meta", object{{"count", n}}}})
	}
	var count int64
	includeCount := p.flag("include_count")
	if includeCount {
		if count, err = q.Count(ctx); err != nil {
			return dbError(err)
		}
	}
	if len(order) > 0 {
		sql, args, err := filter.CompileOrder(order, t)
		if err != nil {
			return compileErr("order", err)
		}
		q = q.OrderExpr(sql, args...)
	}
	q = q.OrderExpr("?.? ASC", bun.Ident(t.alias), bun.Ident(t.key)).Limit(limit).Offset(offset)
	if err := q.Scan(ctx); err != nil && !store.IsNoRows(err) {
		return dbError(err)
	}
	objs, err := t.render(ctx, b.db, recs, sh)
	if err != nil {
		return err
	}
	out := object{{"resource", objs}}
	if includeCount {
		out.set("meta", object{{"count", count}})
	}
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// loadKeys reads the records with the given keys, in that order; a missing
// one is a 404.
func (t *table[T]) loadKeys(ctx context.Context, db bun.IDB, raw []string) ([]*T, error) {
	keys := make([]any, 0, len(raw))
	for _, s := range raw {
		k, ok := t.parseKey(s)
		if !ok {
			return nil, notFound(s)
		}
		keys = append(keys, k)
	}
	var recs []*T
	err := t.selectQ(db, &recs).Where("?.? IN (?)", bun.Ident(t.alias), bun.Ident(t.key), bun.List(keys)).Scan(ctx)
	if err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	byKey := make(map[string]*T, len(recs))
	for _, rec := range recs {
		byKey[keyString(t.keyOf(rec))] = rec
	}
	out := make([]*T, 0, len(keys))
	for _, k := range keys {
		rec, ok := byKey[keyString(k)]
		if !ok {
			return nil, notFound(k)
		}
		out = append(out, rec)
	}
	return out, nil
}

// getOne serves GET /system/R/{key}.
func (t *table[T]) getOne(b *Backend, w http.ResponseWriter, r *http.Request, key any) error {
	ctx := r.Context()
	p := newParams(r.URL.Query())
	sh, err := t.shapeOf(p)
	if err != nil {
		return err
	}
	rec, err := t.load(ctx, b.db, key)
	if err != nil {
		return err
	}
	if t.http.getValue != nil && sh.plain() {
		return apierr.WriteJSON(w, http.StatusOK, t.http.getValue(rec))
	}
	objs, err := t.render(ctx, b.db, []*T{rec}, sh)
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, objs[0])
}

// createResult is what a create returns for rec: result, plus the
// members the table adds to a bare key (table.created).
func (t *table[T]) createResult(w *writer, rec *T, sh shape) (object, error) {
	out, err := t.result(w, rec, sh, false)
	if err != nil || !sh.plain() || t.created == nil {
		return out, err
	}
	return append(out, t.created(rec)...), nil
}

// result is what a write returns for rec: its key alone unless fields or
// related were asked for (or full is set, for writes by key), then the
// record read back in the write's transaction.
func (t *table[T]) result(w *writer, rec *T, sh shape, full bool) (object, error) {
	if sh.plain() && !full {
		return object{{t.key, t.keyOf(rec)}}, nil
	}
	fresh, err := t.load(w.ctx, w.tx, t.keyOf(rec))
	if err != nil {
		return nil, err
	}
	objs, err := t.render(w.ctx, w.tx, []*T{fresh}, sh)
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// createMany serves POST /system/R.
func (t *table[T]) createMany(b *Backend, w http.ResponseWriter, r *http.Request) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	pl, err := decodePayload(data, false)
	if err != nil {
		return err
	}
	p := newParams(r.URL.Query()).withBody(pl.options)
	sh, err := t.shapeOf(p)
	if err != nil {
		return err
	}
	results, err := b.runBatch(withParams(r.Context(), p), batchOptsOf(p), "created", len(pl.records), func(wr *writer, i int) (object, error) {
		rec, err := t.create(wr, pl.records[i])
		if err != nil {
			return nil, err
		}
		return t.createResult(wr, rec, sh)
	})
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusCreated, object{{"resource", results}})
}

// upsert serves POST /system/R/{key} for resources that allow it: the
// record is created with that key (201) or, when it exists, updated (200).
func (t *table[T]) upsert(b *Backend, w http.ResponseWriter, r *http.Request, key any) error {
	in, p, sh, err := t.oneRecord(r, "POST", key)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	var out object
	err = b.inTx(withParams(r.Context(), p), func(wr *writer) error {
		_, err := t.load(wr.ctx, wr.tx, key)
		var rec *T
		switch {
		case err == nil:
			status = http.StatusOK
			rec, err = t.update(wr, key, in)
		case isNotFound(err):
			in = withKey(in, t.key, key)
			rec, err = t.create(wr, in)
			if err != nil {
				return err
			}
			out, err = t.createResult(wr, rec, sh)
			return err
		}
		if err != nil {
			return err
		}
		out, err = t.result(wr, rec, sh, false)
		return err
	})
	if err != nil {
		return err
	}
	b.reload(r.Context())
	return apierr.WriteJSON(w, status, out)
}

// oneRecord reads the body of a request that names one record by key: the
// record, the request's parameters (query and body options) and the shape
// of the answer. action names the call in the error for a body holding
// several records ("POST", "update").
func (t *table[T]) oneRecord(r *http.Request, action string, key any) (fields, *params, shape, error) {
	data, err := readBody(r)
	if err != nil {
		return nil, nil, shape{}, err
	}
	pl, err := decodePayload(data, false)
	if err != nil {
		return nil, nil, shape{}, err
	}
	if len(pl.records) != 1 {
		return nil, nil, shape{}, apierr.BadRequest("Send one record to %s /%s/%v.", action, t.name, key)
	}
	p := newParams(r.URL.Query()).withBody(pl.options)
	sh, err := t.shapeOf(p)
	if err != nil {
		return nil, nil, shape{}, err
	}
	return pl.records[0], p, sh, nil
}

// withKey returns in with its key member set to key.
func withKey(in fields, name string, key any) fields {
	out := make(fields, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	raw, _ := marshal(key)
	out[name] = raw
	return out
}

// updateOne serves PATCH and PUT /system/R/{key}: the record, merged, is
// returned whole (or as fields and related ask).
func (t *table[T]) updateOne(b *Backend, w http.ResponseWriter, r *http.Request, key any) error {
	in, p, sh, err := t.oneRecord(r, "update", key)
	if err != nil {
		return err
	}
	var out object
	err = b.inTx(withParams(r.Context(), p), func(wr *writer) error {
		rec, err := t.update(wr, key, in)
		if err != nil {
			return err
		}
		out, err = t.result(wr, rec, sh, true)
		return err
	})
	if err != nil {
		return err
	}
	b.reload(r.Context())
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// updateMany serves PATCH and PUT /system/R: records carrying their keys,
// or one record applied to the ids or filter given.
func (t *table[T]) updateMany(b *Backend, w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	data, err := readBody(r)
	if err != nil {
		return err
	}
	pl, err := decodePayload(data, false)
	if err != nil {
		return err
	}
	p := newParams(r.URL.Query()).withBody(pl.options)
	sh, err := t.shapeOf(p)
	if err != nil {
		return err
	}
	var keys []any
	var body func(i int) fields
	ids, err := p.ids()
	if err != nil {
		return err
	}
	switch {
	case ids != nil || p.has("filter", "where"):
		if len(pl.records) != 1 {
			return apierr.BadRequest("Send exactly one record to apply to the records selected by ids or filter.")
		}
		if ids != nil {
			for _, s := range ids {
				k, ok := t.parseKey(s)
				if !ok {
					return notFound(s)
				}
				keys = append(keys, k)
			}
		} else if keys, err = t.matchingKeys(ctx, b.db, p); err != nil {
			return err
		}
		body = func(int) fields { return pl.records[0] }
	default:
		keys = make([]any, len(pl.records))
		for i, rec := range pl.records {
			if k, ok := t.keyFromRecord(rec); ok {
				keys[i] = k
			}
		}
		body = func(i int) fields { return pl.records[i] }
	}
	results, err := b.runBatch(withParams(ctx, p), batchOptsOf(p), "updated", len(keys), func(wr *writer, i int) (object, error) {
		if keys[i] == nil {
			return nil, apierr.BadRequest("Record %d has no '%s' identifier to update.", i, t.key)
		}
		rec, err := t.update(wr, keys[i], body(i))
		if err != nil {
			return nil, err
		}
		return t.result(wr, rec, sh, false)
	})
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", results}})
}

// matchingKeys returns the keys of the records the filter parameter
// selects, in key order.
func (t *table[T]) matchingKeys(ctx context.Context, db bun.IDB, p *params) ([]any, error) {
	e, err := p.filterExpr()
	if err != nil {
		return nil, err
	}
	var recs []*T
	q, err := t.where(t.selectQ(db, &recs), e)
	if err != nil {
		return nil, err
	}
	if err := q.OrderExpr("?.? ASC", bun.Ident(t.alias), bun.Ident(t.key)).Scan(ctx); err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	keys := make([]any, len(recs))
	for i, rec := range recs {
		keys[i] = t.keyOf(rec)
	}
	return keys, nil
}

// deleteOne serves DELETE /system/R/{key} and returns the deleted record.
func (t *table[T]) deleteOne(b *Backend, w http.ResponseWriter, r *http.Request, key any) error {
	p := newParams(r.URL.Query())
	sh, err := t.shapeOf(p)
	if err != nil {
		return err
	}
	var out object
	err = b.inTx(withParams(r.Context(), p), func(wr *writer) error {
		var err error
		out, err = t.removeAndRender(wr, key, sh, true)
		return err
	})
	if err != nil {
		return err
	}
	b.reload(r.Context())
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// removeAndRender deletes the record with key and returns what result
// would have returned for it, rendered before it went.
func (t *table[T]) removeAndRender(w *writer, key any, sh shape, full bool) (object, error) {
	rec, err := t.load(w.ctx, w.tx, key)
	if err != nil {
		return nil, err
	}
	out := object{{t.key, key}}
	if !sh.plain() || full {
		objs, err := t.render(w.ctx, w.tx, []*T{rec}, sh)
		if err != nil {
			return nil, err
		}
		out = objs[0]
	}
	if err := t.delete(w, rec); err != nil {
		return nil, err
	}
	return out, nil
}

// deleteMany serves DELETE /system/R by ids, by records carrying their
// keys, by filter, or everything with force=true.
func (t *table[T]) deleteMany(b *Backend, w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	data, err := readBody(r)
	if err != nil {
		return err
	}
	pl, err := decodePayload(data, true)
	if err != nil {
		return err
	}
	p := newParams(r.URL.Query()).withBody(pl.options)
	sh, err := t.shapeOf(p)
	if err != nil {
		return err
	}
	ids, err := p.ids()
	if err != nil {
		return err
	}
	var keys []any
	switch {
	case ids != nil:
		for _, s := range ids {
			k, ok := t.parseKey(s)
			if !ok {
				return notFound(s)
			}
			keys = append(keys, k)
		}
	case len(pl.records) > 0:
		for i, rec := range pl.records {
			k, ok := t.keyFromRecord(rec)
			if !ok {
				return apierr.BadRequest("Record %d has no '%s' identifier to delete.", i, t.key)
			}
			keys = append(keys, k)
		}
	case p.has("filter", "where") || p.flag("force"):
		if keys, err = t.matchingKeys(ctx, b.db, p); err != nil {
			return err
		}
	default:
		return apierr.BadRequest("No filter or records given for delete request. Use ids, filter, records, or force=true to delete everything.")
	}
	results, err := b.runBatch(withParams(ctx, p), batchOptsOf(p), "deleted", len(keys), func(wr *writer, i int) (object, error) {
		return t.removeAndRender(wr, keys[i], sh, false)
	})
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", results}})
}
