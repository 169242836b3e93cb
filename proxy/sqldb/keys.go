package sqldb

import (
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// keyColumns returns the columns that identify a record: those named by
// id_field, else the primary key. A table with neither is a 400.
func (q *tableReq) keyColumns() ([]*dialects.Column, error) {
	if f := strings.TrimSpace(q.opts.idField); f != "" {
		var cols []*dialects.Column
		for _, name := range strings.Split(f, ",") {
			name = strings.TrimSpace(name)
			c := q.table.Column(name)
			if c == nil || !q.grant.AllowsField(c.Name) {
				return nil, apierr.BadRequest("Invalid id_field: '%s' is not a field of table '%s'.", name, q.table.Name)
			}
			cols = append(cols, c)
		}
		return cols, nil
	}
	if len(q.table.PrimaryKey) == 0 {
		return nil, apierr.BadRequest("Table '%s' has no primary key; name the identifying field(s) with id_field.", q.table.Name)
	}
	cols := make([]*dialects.Column, 0, len(q.table.PrimaryKey))
	for _, name := range q.table.PrimaryKey {
		if c := q.table.Column(name); c != nil {
			cols = append(cols, c)
		}
	}
	return cols, nil
}

// pathKey reads the {id} of a by-id route. For a key of several columns it
// is the values in key order separated by commas; a single value is given
// to every key column, as DreamFactory does.
func pathKey(cols []*dialects.Column, id string) ([]any, error) {
	if len(cols) == 1 && plainInteger(id) && kindOf(cols[0]) == filter.KindInteger {
		// What keyArgs makes of it (filter.Value.As: an integer that fits
		// is an int64), without the steps between.
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			return []any{n}, nil
		}
	}
	vals := []filter.Value{{Kind: filter.ValueString, Text: id}}
	if len(cols) > 1 {
		parsed, err := filter.ParseIDs(id)
		if err != nil {
			return nil, apierr.BadRequest("Invalid identifier '%s': %s.", id, err.Error())
		}
		switch len(parsed) {
		case len(cols):
			vals = parsed
		case 1:
			for range len(cols) - 1 {
				vals = append(vals, vals[0])
			}
		default:
			return nil, apierr.BadRequest("Invalid identifier '%s': the key has %d fields.", id, len(cols))
		}
	}
	return keyArgs(cols, vals, id)
}

// idsKeys reads the ids parameter: one value per key for a single-column
// key; for a composite key each id is its values separated by commas, so
// it must be quoted ('1,2','1,3').
func idsKeys(cols []*dialects.Column, ids []filter.Value) ([][]any, error) {
	out := make([][]any, 0, len(ids))
	for _, v := range ids {
		if len(cols) == 1 {
			k, err := keyArgs(cols, []filter.Value{v}, v.Text)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
			continue
		}
		k, err := pathKey(cols, v.Text)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

func keyArgs(cols []*dialects.Column, vals []filter.Value, id string) ([]any, error) {
	out := make([]any, len(cols))
	for i, c := range cols {
		v := vals[i]
		if v.Kind == filter.ValueNull || v.Kind == filter.ValueString && strings.TrimSpace(v.Text) == "" {
			return nil, apierr.BadRequest("Invalid identifier '%s'.", id)
		}
		a, err := v.As(kindOf(c))
		if err != nil {
			return nil, apierr.NotFound("Record with identifier '%s' not found.", id)
		}
		out[i] = a
	}
	return out, nil
}

// recordKey reads the key of a body record; ok is false when a key field
// is missing or null.
func (q *tableReq) recordKey(cols []*dialects.Column, rec record) ([]any, bool, error) {
	out := make([]any, len(cols))
	for i, c := range cols {
		v, ok := lookup(rec, c.Name)
		if !ok || v == nil {
			return nil, false, nil
		}
		a, err := q.inputValue(c, v)
		if err != nil {
			return nil, false, err
		}
		out[i] = a
	}
	return out, true, nil
}

// lookup finds field name in rec: exact spelling first, then ignoring case.
func lookup(rec record, name string) (any, bool) {
	if v, ok := rec[name]; ok {
		return v, true
	}
	for k, v := range rec {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// keyCond is the condition selecting the records with keys: t.c IN (…) for
// a single column, (a = ? AND b = ?) OR … otherwise.
func (q *tableReq) keyCond(cols []*dialects.Column, keys [][]any) (string, []any) {
	if len(keys) == 0 {
		return "1 = 0", nil
	}
	if len(cols) == 1 {
		vals := make([]any, len(keys))
		for i, k := range keys {
			vals[i] = k[0]
		}
		if len(vals) == 1 {
			return "? = ?", []any{qualified(q.table.Name, cols[0].Name), vals[0]}
		}
		return "? IN (?)", []any{qualified(q.table.Name, cols[0].Name), bun.List(vals)}
	}
	var b strings.Builder
	var args []any
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('(')
		for j, c := range cols {
			if j > 0 {
				b.WriteString(" AND ")
			}
			b.WriteString("? = ?")
			args = append(args, qualified(q.table.Name, c.Name), k[j])
		}
		b.WriteByte(')')
	}
	return b.String(), args
}

// keyText renders a key for messages: its values joined by commas.
func keyText(key []any) string {
	parts := make([]string, len(key))
	for i, v := range key {
		parts[i] = strings.ReplaceAll(keyOf(v), "\x00", ",")
	}
	return strings.Join(parts, ",")
}

// plainInteger reports whether s is an optional minus and decimal digits.
func plainInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
