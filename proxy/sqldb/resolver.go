package sqldb

import (
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// resolver maps the field names of a request onto the introspected schema
// for the filter compiler. Columns of the table are qualified with the
// table's own name, so that the same condition works in SELECT, UPDATE and
// DELETE; related tables get aliases that cannot collide with it.
type resolver struct {
	schema *dialects.Schema
	table  *dialects.Table
	// grant, when not nil, hides the fields it does not allow: they resolve
	// as unknown.
	grant *caller.Grant
	// qualifier is what columns of the table are qualified with: the
	// table's name, or an alias given in FROM.
	qualifier string
}

func newResolver(s *dialects.Schema, t *dialects.Table, g *caller.Grant) *resolver {
	return &resolver{schema: s, table: t, grant: g, qualifier: t.Name}
}

// column returns the table's column called name if the grant allows it.
func (r *resolver) column(name string) *dialects.Column {
	c := r.table.Column(name)
	if c == nil || !r.grant.AllowsField(c.Name) {
		return nil
	}
	return c
}

// Field implements filter.Resolver.
func (r *resolver) Field(path []string) (filter.Field, error) {
	switch len(path) {
	case 1:
		c := r.column(path[0])
		if c == nil {
			return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, path[0])
		}
		return filter.Field{Expr: qualified(r.qualifier, c.Name), Kind: kindOf(c)}, nil
	case 2:
		return r.relatedField(path[0], path[1])
	}
	return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, strings.Join(path, "."))
}

func (r *resolver) relatedField(relName, field string) (filter.Field, error) {
	unknown := fmt.Errorf("%w: %s.%s", filter.ErrUnknownField, relName, field)
	rel := r.table.Relation(relName)
	if rel == nil || !r.grant.AllowsField(rel.Name) {
		return filter.Field{}, unknown
	}
	rt := r.schema.Table(rel.RefTable)
	if rt == nil {
		return filter.Field{}, unknown
	}
	c := rt.Column(field)
	if c == nil || !r.grant.AllowsField(c.Name) {
		return filter.Field{}, unknown
	}
	ra := alias("pc_r", r.qualifier)
	f := filter.Field{Expr: qualified(ra, c.Name), Kind: kindOf(c)}
	if rel.Type == dialects.ManyMany {
		jt := r.schema.Table(rel.JunctionTable)
		if jt == nil {
			return filter.Field{}, unknown
		}
		ja := alias("pc_j", r.qualifier)
		f.Related = &filter.Related{
			From: bun.SafeQuery("? AS ? JOIN ? AS ? ON ?", bun.Ident(jt.Name), bun.Ident(ja), bun.Ident(rt.Name), bun.Ident(ra),
				equalities(ra, rel.RefFields, ja, rel.JunctionRefFields)),
			On: equalities(ja, rel.JunctionFields, r.qualifier, rel.Fields),
		}
		return f, nil
	}
	f.Related = &filter.Related{
		From: bun.SafeQuery("? AS ?", bun.Ident(rt.Name), bun.Ident(ra)),
		On:   equalities(ra, rel.RefFields, r.qualifier, rel.Fields),
	}
	return f, nil
}

// alias returns base, changed if it would equal avoid (case-insensitively).
func alias(base, avoid string) string {
	for strings.EqualFold(base, avoid) {
		base += "_"
	}
	return base
}

// qualified is table.column, both quoted.
func qualified(table, column string) schema.QueryAppender {
	return &qualifiedName{table: table, column: column}
}

// qualifiedName writes table.column as bun.SafeQuery("?.?", bun.Ident(table),
// bun.Ident(column)) does, in one allocation instead of four.
type qualifiedName struct{ table, column string }

// AppendQuery implements schema.QueryAppender.
func (n *qualifiedName) AppendQuery(gen schema.QueryGen, b []byte) ([]byte, error) {
	b = gen.AppendIdent(b, n.table)
	b = append(b, '.')
	return gen.AppendIdent(b, n.column), nil
}

// equalities is a.x1 = b.y1 AND a.x2 = b.y2 …
func equalities(a string, as []string, b string, bs []string) schema.QueryAppender {
	var parts []string
	var args []any
	for i := range as {
		if i >= len(bs) {
			break
		}
		parts = append(parts, "?.? = ?.?")
		args = append(args, bun.Ident(a), bun.Ident(as[i]), bun.Ident(b), bun.Ident(bs[i]))
	}
	if len(parts) == 0 {
		return bun.Safe("1 = 0")
	}
	return bun.SafeQuery(strings.Join(parts, " AND "), args...)
}

// kindOf is the filter kind of a column.
func kindOf(c *dialects.Column) filter.Kind {
	t := c.Type
	switch {
	case t == dialects.TypeBoolean:
		return filter.KindBoolean
	case t.IsInteger():
		return filter.KindInteger
	case t.IsNumeric():
		return filter.KindFloat
	case t.IsTemporal():
		return filter.KindTime
	case t == dialects.TypeUUID:
		return filter.KindOther
	case t.IsText():
		return filter.KindString
	}
	return filter.KindOther
}
