package sqldb

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// rowReader reads the rows of a query and encodes them as JSON objects. The
// first visible columns are written; the columns after them are read for
// the backend's own use (keys of related records).
type rowReader struct {
	rows    *sql.Rows
	types   []*sql.ColumnType
	names   [][]byte // `"name":` with the lowercased column name
	visible int
	vals    []any
	ptrs    []any
}

func newRowReader(rows *sql.Rows, visible int) (*rowReader, error) {
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	if visible < 0 || visible > len(types) {
		visible = len(types)
	}
	r := &rowReader{rows: rows, types: types, visible: visible,
		vals: make([]any, len(types)), ptrs: make([]any, len(types)), names: make([][]byte, len(types))}
	for i, t := range types {
		r.ptrs[i] = &r.vals[i]
		n, _ := json.Marshal(strings.ToLower(t.Name()))
		r.names[i] = append(n, ':')
	}
	return r, nil
}

// Next advances to the next row and scans it.
func (r *rowReader) Next() (bool, error) {
	if !r.rows.Next() {
		return false, r.rows.Err()
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return false, err
	}
	return true, nil
}

// AppendObject appends the visible columns of the current row as a JSON
// object.
func (r *rowReader) AppendObject(dst []byte) []byte {
	dst = append(dst, '{')
	for i := 0; i < r.visible; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, r.names[i]...)
		dst = appendValue(dst, r.types[i], r.vals[i])
	}
	return append(dst, '}')
}

// Value returns column i of the current row as the driver gave it.
func (r *rowReader) Value(i int) any { return r.vals[i] }

// keyOf returns a canonical text for values, equal for equal keys whatever
// Go type the driver used.
func keyOf(vals ...any) string {
	var b []byte
	for i, v := range vals {
		if i > 0 {
			b = append(b, 0)
		}
		switch v := v.(type) {
		case nil:
			b = append(b, "\x01null"...)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case int32:
			b = strconv.AppendInt(b, int64(v), 10)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case uint64:
			b = strconv.AppendUint(b, v, 10)
		case float64:
			if v == float64(int64(v)) {
				b = strconv.AppendInt(b, int64(v), 10)
			} else {
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
		case []byte:
			b = append(b, v...)
		case string:
			b = append(b, v...)
		case bool:
			if v {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		case time.Time:
			b = v.UTC().AppendFormat(b, time.RFC3339Nano)
		default:
			j, _ := json.Marshal(v)
			b = append(b, j...)
		}
	}
	return string(b)
}

// appendValue is a stand-in for dialects/rowjson until it lands.
func appendValue(dst []byte, t *sql.ColumnType, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case []byte:
		j, _ := json.Marshal(string(v))
		return append(dst, j...)
	case time.Time:
		j, _ := json.Marshal(v.UTC().Format("2006-01-02 15:04:05"))
		return append(dst, j...)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, j...)
}
