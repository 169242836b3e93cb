package sqldb

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Field extras: what a _schema field object carries that the database
// does not hold (label, validation, picklist), kept in the system store
// (store.FieldExtra, DreamFactory's db_field_extras) and returned with the
// field from then on. A key sent as null clears it; keys left out keep
// their value. Without a system store (an embedded backend) they are
// accepted and not kept, as before.

// extraInput is the extras a field object sent: nil members were not sent.
type extraInput struct {
	field                       string
	label, validation, picklist *string
}

// extras reads the extras keys of f; nil when it sent none.
func (f *fieldInput) extras() *extraInput {
	e := &extraInput{field: f.name}
	text := func(key string) *string {
		v, ok := f.keys[key]
		if !ok {
			return nil
		}
		s := ""
		switch v := v.(type) {
		case nil:
		case string:
			if key == "label" {
				s = strings.TrimSpace(v)
			} else if v != "" {
				b, _ := json.Marshal(v)
				s = string(b)
			}
		default:
			b, err := json.Marshal(v)
			if err == nil {
				s = string(b)
			}
		}
		return &s
	}
	e.label, e.validation, e.picklist = text("label"), text("validation"), text("picklist")
	if e.label == nil && e.validation == nil && e.picklist == nil {
		return nil
	}
	return e
}

// extrasOf collects the extras of fields.
func extrasOf(fields []*fieldInput) []*extraInput {
	var out []*extraInput
	for _, f := range fields {
		if e := f.extras(); e != nil {
			out = append(out, e)
		}
	}
	return out
}

func extraKey(s string) string { return strings.ToLower(s) }

// saveExtras keeps the extras of ops after their changes were made, and
// forgets those of dropped tables and fields. Failures are logged: the
// schema change itself is done.
func (b *Backend) saveExtras(ctx context.Context, ops []*schemaOp) {
	st, id := b.sync.st, b.sync.serviceID
	if st == nil || id == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var cur map[string]map[string]*store.FieldExtra
	var save []*store.FieldExtra
	for _, op := range ops {
		table := extraKey(op.table)
		switch {
		case op.drop:
			if err := st.DeleteFieldExtras(ctx, id, table); err != nil {
				b.log.Warn("field extras of a dropped table not deleted", "table", op.table, "error", err)
			}
			continue
		case len(op.alter.Drop) > 0:
			names := make([]string, len(op.alter.Drop))
			for i, n := range op.alter.Drop {
				names[i] = extraKey(n)
			}
			if err := st.DeleteFieldExtras(ctx, id, table, names...); err != nil {
				b.log.Warn("field extras of dropped fields not deleted", "table", op.table, "error", err)
			}
		}
		if len(op.extras) == 0 {
			continue
		}
		if cur == nil {
			var err error
			if cur, err = st.FieldExtras(ctx, id); err != nil {
				b.log.Warn("field extras not kept", "table", op.table, "error", err)
				return
			}
		}
		for _, in := range op.extras {
			e := &store.FieldExtra{ServiceID: id, TableName: table, FieldName: extraKey(in.field)}
			if old := cur[table][e.FieldName]; old != nil && op.create == nil {
				e.Label, e.Validation, e.Picklist = old.Label, old.Validation, old.Picklist
			}
			for _, set := range []struct {
				src *string
				dst *string
			}{{in.label, &e.Label}, {in.validation, &e.Validation}, {in.picklist, &e.Picklist}} {
				if set.src != nil {
					*set.dst = *set.src
				}
			}
			save = append(save, e)
		}
	}
	if err := st.SaveFieldExtras(ctx, save); err != nil {
		b.log.Warn("field extras not kept", "error", err)
	}
}

// fieldExtras returns the kept extras of the service's fields, read once
// per request; nil without a system store.
func (q *schemaReq) fieldExtras(ctx context.Context) map[string]map[string]*store.FieldExtra {
	if q.extrasRead {
		return q.extras
	}
	q.extrasRead = true
	st, id := q.b.sync.st, q.serviceID()
	if st == nil || id == 0 {
		return nil
	}
	m, err := st.FieldExtras(ctx, id)
	if err != nil {
		q.b.log.Warn("field extras not read", "error", err)
		return nil
	}
	q.extras = m
	return m
}

// withExtras puts the kept extras of table's field c on o.
func withExtras(o *fieldObject, extras map[string]map[string]*store.FieldExtra, table string) *fieldObject {
	e := extras[extraKey(table)][extraKey(o.Name)]
	if e == nil {
		return o
	}
	if e.Label != "" {
		o.Label = e.Label
	}
	if e.Validation != "" {
		o.Validation = json.RawMessage(e.Validation)
	}
	if e.Picklist != "" {
		o.Picklist = json.RawMessage(e.Picklist)
	}
	return o
}

// describeTable is describeTable with the fields' kept extras.
func (q *schemaReq) describeTable(ctx context.Context, t *dialects.Table) *tableObject {
	o := describeTable(t, q.serviceID())
	if ex := q.fieldExtras(ctx); ex != nil {
		for _, f := range o.Field {
			withExtras(f, ex, t.Name)
		}
	}
	return o
}

// describeField is describeField with the field's kept extras.
func (q *schemaReq) describeField(ctx context.Context, table string, c *dialects.Column) *fieldObject {
	return withExtras(describeField(c), q.fieldExtras(ctx), table)
}
