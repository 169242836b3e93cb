package sqldb

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
)

// rowReader reads the rows of a query and encodes them as JSON objects with
// dialects/rowjson. The first visible columns are written; the columns
// after them are read for the backend's own use (keys of related records).
type rowReader struct {
	rj      *rowjson.Rows
	rows    *sql.Rows
	visible int
	ncols   int
	// own is rj's memory: a reader from the pool (release) reuses it.
	own rowjson.Rows
	// drows, when not nil, are the rows read from the driver itself
	// instead of rows (litefast.go), into vals; dclosed tells that they
	// are closed.
	drows   driver.Rows
	vals    []driver.Value
	dclosed bool
	// times are the columns of drows whose text is a time (liteTime);
	// decl holds the declared types of drows' columns (for times).
	times []int
	decl  []string
}

// readers keeps the readers the fast paths release, with their cells.
var readers = sync.Pool{New: func() any { return new(rowReader) }}

// readPlan is the encoding of a prepared statement's results for one
// reader: the first visible columns written, with the types of hints.
type readPlan struct {
	visible int
	hints   *dialects.Table
	p       *rowjson.Plan
}

// newRowReader wraps rows of a query on table (nil when not one table).
// When rows come from cs, a prepared statement, the plan of its columns is
// worked out on its first read and reused afterwards: the statement's text
// fixes its columns, and the statement lives no longer than the schema it
// was built from (InvalidateSchema drops both).
func newRowReader(kind dialects.Kind, rows *sql.Rows, cs *cachedStmt, visible int, table *dialects.Table) (*rowReader, error) {
	var p *rowjson.Plan
	if cs != nil {
		if rp := cs.plan.Load(); rp != nil && rp.visible == visible && rp.hints == table {
			p = rp.p
		}
	}
	if p == nil {
		var err error
		if p, err = rowjson.NewPlan(kind, rows, rowjson.Options{Table: table, Visible: visible}); err != nil {
			return nil, err
		}
		if cs != nil {
			cs.plan.Store(&readPlan{visible: visible, hints: table, p: p})
		}
	}
	n := p.Len()
	if visible < 0 || visible > n {
		visible = n
	}
	r := readers.Get().(*rowReader)
	p.Reset(&r.own, rows)
	r.rj, r.rows, r.visible, r.ncols = &r.own, rows, visible, n
	return r, nil
}

// release closes the rows and returns r to the pool: neither r nor what
// it returned (Value, Plain) may be used afterwards. Readers that are not
// released are left to the collector.
func (r *rowReader) release() {
	r.Close()
	r.own.Clear()
	clear(r.vals)
	r.rj, r.rows, r.drows, r.dclosed, r.times, r.decl = nil, nil, nil, false, nil, nil
	readers.Put(r)
}

// Close releases the rows and their database connection; it may be called
// more than once.
func (r *rowReader) Close() error {
	if r.drows != nil {
		return r.closeDriver()
	}
	return r.rows.Close()
}

// Next advances to the next row and reads it.
func (r *rowReader) Next() (bool, error) {
	if r.drows != nil {
		return r.nextDriver()
	}
	if !r.rj.Next() {
		return false, r.rj.Err()
	}
	return true, nil
}

// AppendObject appends the visible columns of the current row as a JSON
// object.
func (r *rowReader) AppendObject(dst []byte) []byte { return r.rj.AppendObject(dst) }

// Value returns column i of the current row, normalised by rowjson (it
// stays valid after Next).
func (r *rowReader) Value(i int) any { return r.rj.Value(i) }

// keyOf returns a canonical text for values, equal for equal keys whatever
// Go type the driver used.
func keyOf(vals ...any) string { return string(appendKey(nil, vals...)) }

// appendKey appends keyOf's text of vals to b.
func appendKey(b []byte, vals ...any) []byte {
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
		case json.Number:
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
	return b
}
