package sqldb

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// tableReq is one request on a table.
type tableReq struct {
	b      *Backend
	db     *bun.DB
	kind   dialects.Kind
	schema *dialects.Schema
	table  *dialects.Table
	grant  *caller.Grant
	opts   *options
	// res resolves the client's field names (hiding what the grant does
	// not allow); full resolves the role's own filters.
	res  *resolver
	full *resolver
	// rowCond is the grant's row condition, compiled; empty for none.
	rowCond     string
	rowCondArgs []any
	// nest is how deep in a nested related write this request is (0 for
	// the client's own request).
	nest int
	// resolvers holds res and full of a client's request, so that they
	// come in the request's one allocation.
	resolvers [2]resolver
}

// serveTable handles _table, _table/{table} and _table/{table}/{id}.
func (b *Backend) serveTable(w http.ResponseWriter, r *http.Request, verb string, rest []string) error {
	ctx := r.Context()
	if len(rest) > 2 {
		return apierr.NotFound("Resource '_table/%s' not found for service '%s'.", strings.Join(rest, "/"), b.name)
	}
	db, err := b.pool(ctx)
	if err != nil {
		return err
	}
	s, err := b.loadSchema(ctx, db, anyAge)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		if verb != http.MethodGet {
			return apierr.BadRequest("%s requests for resource '_table' are not currently supported by the '%s' service.", verb, b.name)
		}
		return b.listTables(w, r, s)
	}
	opts, err := parseOptions(r, b.cfg.MaxRecords, verb == http.MethodPost && len(rest) == 1)
	if err != nil {
		return err
	}
	g := caller.GrantFrom(ctx)
	for attempt := 0; ; attempt++ {
		t := s.Table(rest[0])
		if t == nil {
			// A table created since we last looked: read the schema again,
			// at most once per schemaRetryAge.
			if s, err = b.loadSchema(ctx, db, schemaRetryAge); err != nil {
				return err
			}
			if t = s.Table(rest[0]); t == nil {
				return apierr.NotFound("Table \"%s\" does not exist in the database.", rest[0])
			}
		}
		q := &tableReq{b: b, db: db, kind: b.kind, schema: s, table: t, grant: g, opts: opts,
			resolvers: [2]resolver{*newResolver(s, t, g), *newResolver(s, t, nil)}}
		q.res, q.full = &q.resolvers[0], &q.resolvers[1]
		err = q.dispatch(ctx, w, verb, rest)
		// A read that met a table or column that is gone runs once more on
		// the schema read anew (writes do not: part of a batch may have
		// been written).
		if attempt > 0 || verb != http.MethodGet || !errors.Is(err, errSchemaChanged) {
			return err
		}
		if s, err = b.loadSchema(ctx, db, anyAge); err != nil {
			return err
		}
	}
}

// dispatch runs the request on the table.
func (q *tableReq) dispatch(ctx context.Context, w http.ResponseWriter, verb string, rest []string) error {
	if err := q.compileRowCond(); err != nil {
		return err
	}
	if len(rest) == 2 {
		id := rest[1]
		switch verb {
		case http.MethodGet:
			if ok, err := q.fastGetByID(ctx, w, id); ok {
				return err
			}
			return q.getByID(ctx, w, id)
		case http.MethodPost:
			return apierr.BadRequest("Create record by identifier not currently supported.")
		case http.MethodPut:
			return q.updateByID(ctx, w, id, true)
		case http.MethodPatch:
			return q.updateByID(ctx, w, id, false)
		case http.MethodDelete:
			return q.deleteByID(ctx, w, id)
		}
		return apierr.MethodNotAllowed(verb)
	}
	switch verb {
	case http.MethodGet:
		if ok, err := q.fastPage(ctx, w); ok {
			return err
		}
		return q.get(ctx, w)
	case http.MethodPost:
		return q.create(ctx, w)
	case http.MethodPut:
		return q.update(ctx, w, true)
	case http.MethodPatch:
		return q.update(ctx, w, false)
	case http.MethodDelete:
		return q.delete(ctx, w)
	}
	return apierr.MethodNotAllowed(verb)
}

// listTables answers GET _table: the names, or with fields=* (or a field
// list) objects with name, label and is_view.
func (b *Backend) listTables(w http.ResponseWriter, r *http.Request, s *dialects.Schema) error {
	q := r.URL.Query()
	fields := q.Get("fields")
	if fields == "" {
		fields = q.Get("select")
	}
	names := s.Names()
	if strings.TrimSpace(fields) == "" {
		return writeList(w, names, r)
	}
	want := map[string]bool{}
	for _, f := range strings.Split(fields, ",") {
		want[strings.ToLower(strings.TrimSpace(f))] = true
	}
	all := want["*"]
	out := make([]map[string]any, 0, len(s.Tables))
	for _, t := range s.Tables {
		m := map[string]any{}
		if all || want["name"] {
			m["name"] = t.Name
		}
		if all || want["label"] {
			m["label"] = label(t.Name)
		}
		if all || want["plural"] {
			m["plural"] = label(t.Name)
		}
		if all || want["is_view"] {
			m["is_view"] = t.IsView
		}
		if all || want["description"] {
			m["description"] = t.Comment
		}
		out = append(out, m)
	}
	return writeJSON(w, map[string]any{"resource": out})
}

// label turns a table name into DreamFactory's label: words split on
// underscores, each capitalised.
func label(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '_' })
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, " ")
}

// compileRowCond compiles the grant's row filters.
func (q *tableReq) compileRowCond() error {
	e, err := grantExpr(q.grant)
	if err != nil || e == nil {
		return err
	}
	sqlText, args, err := filter.Compile(e, q.full)
	if err != nil {
		return apierr.Forbidden("The role's record filter cannot be applied to table '%s': %s", q.table.Name, err.Error()).WithCause(err)
	}
	q.rowCond, q.rowCondArgs = sqlText, args
	return nil
}

// where adds the client's condition (may be "") and the grant's to sel.
func (q *tableReq) where(sel *bun.SelectQuery, cond string, args []any) *bun.SelectQuery {
	return q.whereBound(sel, cond, args, nil)
}

// whereBound is where with the values bound through bs (nil: in the text).
func (q *tableReq) whereBound(sel *bun.SelectQuery, cond string, args []any, bs *binds) *bun.SelectQuery {
	if cond != "" {
		sel = sel.Where(cond, bs.wrap(args)...)
	}
	if q.rowCond != "" {
		sel = sel.Where(q.rowCond, bs.wrap(q.rowCondArgs)...)
	}
	return sel
}

// compileFilter parses and compiles a filter with the client's resolver.
func (q *tableReq) compileFilter(src string) (string, []any, error) {
	e, err := filter.Parse(src)
	if err != nil {
		return "", nil, badQuery(err)
	}
	s, args, err := filter.Compile(e, q.res)
	if err != nil {
		return "", nil, badQuery(err)
	}
	return s, args, nil
}

// badQuery turns a parse or compile error of a query parameter into a 400.
func badQuery(err error) error {
	var se *filter.SyntaxError
	var ce *filter.CompileError
	switch {
	case errors.As(err, &se):
		return apierr.BadRequest("Invalid request: %s.", se.Error()).WithCause(err)
	case errors.As(err, &ce):
		if errors.Is(err, filter.ErrUnknownField) {
			return apierr.BadRequest("Invalid or unparsable field in request: %s.", ce.Error()).WithCause(err)
		}
		return apierr.BadRequest("Invalid request: %s.", ce.Error()).WithCause(err)
	}
	return apierr.BadRequest("Invalid request: %s.", err.Error()).WithCause(err)
}
