package sqldb

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// relLoad is one relation asked for with related.
type relLoad struct {
	rel  *dialects.Relation
	name []byte // `"name":`, lowercased
	opts *relOptions
	many bool // has_many and many_many give arrays
}

// relations reads the related parameter: a comma-separated list of
// relation names, or * for all. An unknown name is a 400; relations the
// grant does not allow are left out.
func (q *tableReq) relations(grouped bool) ([]*relLoad, error) {
	spec := strings.TrimSpace(q.opts.related)
	if spec == "" || grouped {
		return nil, nil
	}
	var picked []*dialects.Relation
	if spec == "*" {
		for i := range q.table.Relations {
			picked = append(picked, &q.table.Relations[i])
		}
	} else {
		for _, name := range strings.Split(spec, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			rel := q.table.Relation(name)
			if rel == nil {
				return nil, apierr.BadRequest("Invalid relation '%s' requested for table '%s'.", truncate(name, 64), q.table.Name)
			}
			picked = append(picked, rel)
		}
	}
	var out []*relLoad
	seen := map[string]bool{}
	for _, rel := range picked {
		key := strings.ToLower(rel.Name)
		if seen[key] || !q.grant.AllowsField(rel.Name) {
			continue
		}
		seen[key] = true
		if len(rel.Fields) != 1 || len(rel.RefFields) != 1 ||
			rel.Type == dialects.ManyMany && (len(rel.JunctionFields) != 1 || len(rel.JunctionRefFields) != 1) {
			return nil, apierr.NotImplemented("Relating records with multi-column foreign keys is not currently supported.")
		}
		if q.schema.Table(rel.RefTable) == nil || rel.Type == dialects.ManyMany && q.schema.Table(rel.JunctionTable) == nil {
			continue
		}
		name, _ := json.Marshal(key)
		out = append(out, &relLoad{rel: rel, name: append(name, ':'), opts: q.opts.rel[key],
			many: rel.Type == dialects.HasMany || rel.Type == dialects.ManyMany})
	}
	return out, nil
}

// relationFields returns the table's columns that the relations match on.
func relationFields(rels []*relLoad) []string {
	var out []string
	for _, r := range rels {
		out = append(out, r.rel.Fields...)
	}
	return out
}

// loadRelations reads the related records of rows, one query per relation
// over the keys of the whole page, and stores them encoded in each row.
func (q *tableReq) loadRelations(ctx context.Context, db bun.IDB, rels []*relLoad, rows []*pageRow, sel *selection) error {
	for _, pr := range rows {
		pr.rels = make([][]byte, len(rels))
	}
	for ri, rl := range rels {
		idx := sel.hidden[strings.ToLower(rl.rel.Fields[0])] - sel.visible
		seen := map[string]bool{}
		var keys []any
		for _, pr := range rows {
			v := pr.hidden[idx]
			if v == nil {
				continue
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			k := keyOf(v)
			if !seen[k] {
				seen[k] = true
				keys = append(keys, v)
			}
		}
		found := map[string][]byte{}
		if len(keys) > 0 {
			var err error
			if found, err = q.loadRelation(ctx, db, rl, keys); err != nil {
				return err
			}
		}
		for _, pr := range rows {
			enc, ok := found[keyOf(stringify(pr.hidden[idx]))]
			switch {
			case rl.many:
				b := make([]byte, 0, len(enc)+2)
				b = append(b, '[')
				b = append(b, enc...)
				pr.rels[ri] = append(b, ']')
			case ok && pr.hidden[idx] != nil:
				pr.rels[ri] = enc
			default:
				pr.rels[ri] = []byte("null")
			}
		}
	}
	return nil
}

func stringify(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// loadRelation runs the query of one relation for keys and returns the
// encoded records by key: one object for belongs_to and has_one, the
// comma-separated objects of the array for has_many and many_many.
func (q *tableReq) loadRelation(ctx context.Context, db bun.IDB, rl *relLoad, keys []any) (map[string][]byte, error) {
	rel := rl.rel
	rt := q.schema.Table(rel.RefTable)
	qual := rt.Name
	from := bun.SafeQuery("?", bun.Ident(rt.Name))
	keyExpr := qualified(rt.Name, rel.RefFields[0])
	if rel.Type == dialects.ManyMany {
		jt := q.schema.Table(rel.JunctionTable)
		qual = "pc_r"
		from = bun.SafeQuery("? AS ? JOIN ? AS ? ON ?.? = ?.?",
			bun.Ident(jt.Name), bun.Ident("pc_j"), bun.Ident(rt.Name), bun.Ident("pc_r"),
			bun.Ident("pc_r"), bun.Ident(rel.RefFields[0]), bun.Ident("pc_j"), bun.Ident(rel.JunctionRefFields[0]))
		keyExpr = qualified("pc_j", rel.JunctionFields[0])
	}
	res := newResolver(q.schema, rt, q.grant)
	res.qualifier = qual
	var opts relOptions
	if rl.opts != nil {
		opts = *rl.opts
	}
	// Columns: those asked for with {rel}.fields (plain names), else all
	// the grant allows; then the key, hidden.
	var parts []string
	var args []any
	fields := strings.TrimSpace(opts.fields)
	sel, err := filter.ParseFields(fields)
	if err != nil {
		return nil, badQuery(err)
	}
	if sel.All {
		for _, c := range rt.Columns {
			if q.grant.AllowsField(c.Name) {
				parts = append(parts, "?")
				args = append(args, qualified(qual, c.Name))
			}
		}
	} else {
		for _, it := range sel.Items {
			if it.Term.Agg != filter.NoAggregate || len(it.Term.Path) != 1 || it.Alias != "" {
				return nil, apierr.BadRequest("%s.fields takes plain field names.", rel.Name)
			}
			c := rt.Column(it.Term.Path[0])
			if c == nil {
				return nil, apierr.BadRequest("Invalid field '%s' in %s.fields.", truncate(it.Term.Path[0], 64), rel.Name)
			}
			if q.grant.AllowsField(c.Name) {
				parts = append(parts, "?")
				args = append(args, qualified(qual, c.Name))
			}
		}
	}
	visible := len(parts)
	parts = append(parts, "? AS ?")
	args = append(args, keyExpr, bun.Ident("pc_key"))
	sq := db.NewSelect().TableExpr("?", from).ColumnExpr(strings.Join(parts, ", "), args...).
		Where("? IN (?)", keyExpr, bun.List(keys))
	if o := strings.TrimSpace(opts.order); o != "" {
		items, err := filter.ParseOrder(o)
		if err != nil {
			return nil, badQuery(err)
		}
		ord, oargs, err := filter.CompileOrder(q.nullsLikeOthers(items, rt), res)
		if err != nil {
			return nil, badQuery(err)
		}
		sq = sq.OrderExpr(ord, oargs...)
	} else {
		for _, k := range rt.PrimaryKey {
			sq = sq.OrderExpr("? ASC", qualified(qual, k))
		}
	}
	rows, err := sq.Rows(ctx)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	defer rows.Close()
	rr, err := newRowReader(q.kind, rows, nil, visible, rt)
	if err != nil {
		return nil, q.b.dbError(err)
	}
	out := map[string][]byte{}
	counts := map[string]int{}
	for {
		ok, err := rr.Next()
		if err != nil {
			return nil, q.b.dbError(err)
		}
		if !ok {
			break
		}
		k := keyOf(stringify(rr.Value(visible)))
		if !rl.many {
			if _, dup := out[k]; !dup {
				out[k] = rr.AppendObject(nil)
			}
			continue
		}
		if opts.limit > 0 && counts[k] >= opts.limit {
			continue
		}
		counts[k]++
		b := out[k]
		if len(b) > 0 {
			b = append(b, ',')
		}
		out[k] = rr.AppendObject(b)
	}
	return out, nil
}

// appendWithRelations appends a row's object with its related records
// added as members.
func appendWithRelations(dst []byte, pr *pageRow, rels []*relLoad) []byte {
	if len(rels) == 0 || pr.rels == nil {
		return append(dst, pr.obj...)
	}
	obj := pr.obj[:len(pr.obj)-1] // without the closing brace
	dst = append(dst, obj...)
	first := len(obj) == 1
	for i, rl := range rels {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, rl.name...)
		dst = append(dst, pr.rels[i]...)
	}
	return append(dst, '}')
}

// rawJSON is an encoded record inside a batch error's context.
type rawJSON = json.RawMessage

// errorResult is a failed record's entry in a batch error's resource.
func errorResult(e *apierr.Error) map[string]any {
	code := e.Code
	if code == 0 {
		code = e.Status
	}
	return map[string]any{"error": map[string]any{"code": code, "message": e.Message, "status_code": e.Status}}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
