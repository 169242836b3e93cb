package system

import (
	"context"
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/julienschmidt/httprouter"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// limitEngine builds a limiter engine over every stored limit and the
// shared counter store, for reading and resetting counters.
func (b *Backend) limitEngine(ctx context.Context) (*limiter.Engine, []*store.Limit, error) {
	if b.opts.LimitStore == nil {
		return nil, nil, apierr.NotImplemented("Limit counters are not available: this instance runs without a rate-limit counter store.")
	}
	var recs []*store.Limit
	if err := b.db.NewSelect().Model(&recs).Order("id").Scan(ctx); err != nil && !store.IsNoRows(err) {
		return nil, nil, dbError(err)
	}
	ls := make([]limiter.Limit, len(recs))
	for i, l := range recs {
		ls[i] = toLimiter(l)
	}
	e, err := limiter.New(ls, b.opts.LimitStore)
	if err != nil {
		return nil, nil, apierr.InternalMsg("The stored limits are invalid: %v", err).WithCause(err)
	}
	return e, recs, nil
}

// serveLimitCache serves /limit_cache: GET lists every limit's counter
// (each_user limits one per active non-admin user; user_id= picks one),
// GET /{id} one limit's, DELETE /{id} or ?ids= resets limits' counters,
// and DELETE with force=true (or allow_delete=true) resets them all.
func (b *Backend) serveLimitCache(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ctx := r.Context()
	e, recs, err := b.limitEngine(ctx)
	if err != nil {
		return err
	}
	p := newParams(r.URL.Query())
	byID := make(map[int64]*store.Limit, len(recs))
	for _, l := range recs {
		byID[l.ID] = l
	}
	var ids []int64
	parse := func(s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || byID[n] == nil {
			return 0, notFound(s)
		}
		return n, nil
	}
	if one := ps.ByName("id"); one != "" {
		n, err := parse(one)
		if err != nil {
			return err
		}
		ids = []int64{n}
	} else if raw, err := p.ids(); err != nil {
		return err
	} else {
		for _, s := range raw {
			n, err := parse(s)
			if err != nil {
				return err
			}
			ids = append(ids, n)
		}
	}
	if r.Method == http.MethodDelete {
		switch {
		case len(ids) > 0:
			out := make([]object, 0, len(ids))
			for _, id := range ids {
				if err := e.ResetLimit(ctx, id); err != nil {
					return apierr.Unavailable("Resetting the limit counters failed.").WithCause(err)
				}
				out = append(out, object{{"id", id}})
			}
			if ps.ByName("id") != "" {
				return apierr.WriteJSON(w, http.StatusOK, out[0])
			}
			return apierr.WriteJSON(w, http.StatusOK, object{{"resource", out}})
		case p.flag("force") || p.flag("allow_delete"):
			if err := e.ResetAll(ctx); err != nil {
				return apierr.Unavailable("Resetting the limit counters failed.").WithCause(err)
			}
			return apierr.WriteJSON(w, http.StatusOK, object{{"success", true}})
		}
		return apierr.BadRequest("No record(s) detected in request. Give ids, or force=true to reset every counter.")
	}
	users, err := b.counterUsers(ctx, p)
	if err != nil {
		return err
	}
	counters, err := e.Counters(ctx, users)
	if err != nil {
		return apierr.Unavailable("Reading the limit counters failed.").WithCause(err)
	}
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	list := []object{}
	for _, c := range counters {
		if len(want) > 0 && !want[c.LimitID] {
			continue
		}
		list = append(list, counterObject(byID[c.LimitID], c))
	}
	if ps.ByName("id") != "" {
		if len(list) == 0 {
			l := byID[ids[0]]
			return apierr.WriteJSON(w, http.StatusOK, object{{"id", l.ID}, {"name", l.Name}, {"key", l.KeyText},
				{"max", l.Rate}, {"attempts", 0}, {"remaining", l.Rate}})
		}
		return apierr.WriteJSON(w, http.StatusOK, list[0])
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", list}})
}

// counterUsers are the users whose each_user counters are listed: the one
// named by user_id=, or every active non-admin user (DreamFactory's list).
func (b *Backend) counterUsers(ctx context.Context, p *params) ([]int64, error) {
	if s := p.get("user_id"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, apierr.BadRequest("Invalid user_id '%s'.", s)
		}
		return []int64{n}, nil
	}
	var ids []int64
	err := b.db.NewSelect().Model((*store.User)(nil)).Column("id").
		Where("is_sys_admin = ? AND is_active = ?", false, true).Order("id").Limit(maxRecords).Scan(ctx, &ids)
	if err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	return ids, nil
}

// counterObject is one counter as limit_cache shows it.
func counterObject(l *store.Limit, c limiter.Counter) object {
	o := object{{"id", c.LimitID}, {"name", l.Name}, {"key", l.KeyText}, {"max", c.Max},
		{"attempts", c.Attempts}, {"remaining", c.Remaining}, {"reset", c.Reset}}
	if limiter.Type(l.Type).EachUser() {
		o.set("user_id", c.UserID)
	}
	return o
}

// limitCacheModel is limit_cache as the target of a limit's relation
// limit_cache_by_limit_id (DreamFactory's name): each limit's counters, as
// GET /limit_cache lists them. It is read-only.
type limitCacheModel struct{ b *Backend }

var _ documented = limitCacheModel{}

func (limitCacheModel) resourceName() string         { return "limit_cache" }
func (limitCacheModel) keyColumn() string            { return "id" }
func (limitCacheModel) tableName() string            { return "" }
func (limitCacheModel) column(string) (*field, bool) { return nil, false }
func (limitCacheModel) upserts() bool                { return false }
func (limitCacheModel) prepareNested(*writer, string, int64, fields, *problems) (func(int64) error, error) {
	return nil, apierr.BadRequest("Limit counters cannot be written through a limit; reset them with DELETE /system/limit_cache.")
}

// readWhere reads the counters of the limits whose ids are values.
func (m limitCacheModel) readWhere(ctx context.Context, _ bun.IDB, _ string, values []any) ([]keyed, error) {
	e, recs, err := m.b.limitEngine(ctx)
	if err != nil {
		return nil, err
	}
	want := map[int64]bool{}
	for _, v := range values {
		switch n := v.(type) {
		case int64:
			want[n] = true
		case *int64:
			if n != nil {
				want[*n] = true
			}
		}
	}
	byID := make(map[int64]*store.Limit, len(recs))
	for _, l := range recs {
		byID[l.ID] = l
	}
	users, err := m.b.counterUsers(ctx, newParams(nil))
	if err != nil {
		return nil, err
	}
	counters, err := e.Counters(ctx, users)
	if err != nil {
		return nil, apierr.Unavailable("Reading the limit counters failed.").WithCause(err)
	}
	var out []keyed
	for _, c := range counters {
		if want[c.LimitID] && byID[c.LimitID] != nil {
			out = append(out, keyed{by: c.LimitID, obj: counterObject(byID[c.LimitID], c)})
		}
	}
	return out, nil
}

// docSchema describes one counter.
func (limitCacheModel) docSchema(func(string) *openapi3.SchemaRef) *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("id", openapi3.NewInt64Schema()).
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("key", openapi3.NewStringSchema()).
		WithProperty("max", openapi3.NewInt64Schema()).
		WithProperty("attempts", openapi3.NewInt64Schema()).
		WithProperty("remaining", openapi3.NewInt64Schema()).
		WithProperty("reset", openapi3.NewInt64Schema()).
		WithProperty("user_id", openapi3.NewInt64Schema())
	s.Description = "A limit's counter in the current window (each_user limits: one per user, with user_id)."
	return s
}
