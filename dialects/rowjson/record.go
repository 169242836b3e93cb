package rowjson

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
)

// Field is one column of a [Record].
type Field struct {
	// Name is the lowercased column name.
	Name string
	// Value is the normalised value (see [Rows.Value]).
	Value any
}

// Record is one row with its columns in result order. It marshals to the
// same JSON object that [Rows.AppendObject] writes.
type Record []Field

// Get returns the value of the column called name (case-insensitive).
func (r Record) Get(name string) (any, bool) {
	for _, f := range r {
		if strings.EqualFold(f.Name, name) {
			return f.Value, true
		}
	}
	return nil, false
}

// Map returns the record as a map, for callers that do not need the order.
func (r Record) Map() map[string]any {
	m := make(map[string]any, len(r))
	for _, f := range r {
		m[f.Name] = f.Value
	}
	return m
}

// MarshalJSON writes the record as an object in column order.
func (r Record) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(nil)
}

// AppendJSON appends the record as a JSON object in column order.
func (r Record) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	for i, f := range r {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, f.Name)
		dst = append(dst, ':')
		var err error
		if dst, err = AppendGo(dst, f.Value); err != nil {
			return nil, fmt.Errorf("rowjson: field %q: %w", f.Name, err)
		}
	}
	return append(dst, '}'), nil
}

// AppendGo appends a Go value as JSON: the types [Rows.Value] returns
// without reflection, anything else through encoding/json.
func AppendGo(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return appendBool(dst, v), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case float64:
		return AppendFloat(dst, v, 64), nil
	case string:
		return AppendString(dst, v), nil
	case json.Number:
		if !isNumber(string(v)) {
			return nil, fmt.Errorf("invalid number %q", string(v))
		}
		return append(dst, v...), nil
	case json.RawMessage:
		if !json.Valid(v) {
			return nil, fmt.Errorf("invalid JSON")
		}
		return append(dst, v...), nil
	case Record:
		return v.AppendJSON(dst)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// ReadAll reads every row into records and closes rows. It is meant for
// small results, such as the records a write returns; stream larger ones
// with [Rows.WriteArray].
func ReadAll(kind dialects.Kind, rows *sql.Rows, opts Options) ([]Record, error) {
	defer rows.Close()
	r, err := New(kind, rows, opts)
	if err != nil {
		return nil, err
	}
	var out []Record
	for r.Next() {
		out = append(out, r.Record())
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
