package rowjson

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// codec says how one result column's values are written.
type codec uint8

const (
	cAuto     codec = iota // by the value's Go type
	cBool                  // numbers and bits as true/false
	cDecimal               // exact number text
	cFloat32               // a float4 widened to float64 by the driver
	cDate                  // time.Time as DateLayout
	cTime                  // time.Time as TimeLayout; text as it is
	cDateTime              // time.Time in UTC as DateTimeLayout
	cJSON                  // raw JSON, compacted
	cBinary                // bytes as base64
	cBits                  // MySQL BIT(n): bytes as an unsigned number
)

// Options shape the output of [New].
type Options struct {
	// Table is the introspected table the query reads, if any. Its column
	// types settle what the wire type leaves open, matched by result
	// column name (case-insensitive): on MySQL, TINYINT and BIT columns
	// typed boolean become true/false, MariaDB's JSON (longtext on the
	// wire) is written as raw JSON, and binary wire types of non-binary
	// columns are written as text. SQLite and PostgreSQL need no hints.
	Table *dialects.Table
	// Only, when not nil, keeps only the named columns (case-insensitive),
	// in result order.
	Only []string
	// Omit, when set, is asked once per result column (its lowercased name)
	// and drops the column from the output when it returns true, e.g. for
	// the fields a role may not read.
	Omit func(name string) bool
	// Visible, when positive, keeps only the first Visible result columns;
	// the others are still read (see [Rows.Value]) but not written.
	Visible int
}

// column is one result column.
type column struct {
	name  string // lowercased
	key   []byte // `"name":`
	codec codec
	scale int // declared scale of a SQLite decimal column, or -1
	emit  bool
	bin   bool // SQLite: bytes are always a BLOB, written as base64
}

// cell receives one value from database/sql without a copy: as a Scanner
// it gets the driver's value itself, valid until the next call to Next.
type cell struct{ v any }

// Scan implements sql.Scanner.
func (c *cell) Scan(src any) error {
	c.v = src
	return nil
}

// Rows reads a query's rows and writes them as JSON objects. Create it with
// [New] (or [Plan.Rows]), advance it with [Rows.Next], then write the
// current row with [Rows.AppendObject] or read it with [Rows.Value] and
// [Rows.Record]; or let [Rows.WriteArray] do all of it. A Rows is not safe
// for concurrent use.
type Rows struct {
	rows  *sql.Rows
	kind  dialects.Kind
	cols  []column
	cells []cell
	dest  []any
	err   error
}

// Plan is how a query's result columns are written, worked out once from
// their types. The results of one prepared statement (the same text on the
// same schema) have the same columns, so its plan can be kept and reused
// for every later result with [Plan.Rows], which saves reading and typing
// the columns per query. A Plan never changes once made and is safe for
// concurrent use.
type Plan struct {
	kind dialects.Kind
	cols []column
}

// New prepares rows (from a query on an engine of kind) for encoding. It
// reads the column types once; every row afterwards is scanned into the
// same cells and encoded without maps or reflection.
func New(kind dialects.Kind, rows *sql.Rows, opts Options) (*Rows, error) {
	p, err := NewPlan(kind, rows, opts)
	if err != nil {
		return nil, err
	}
	return p.Rows(rows), nil
}

// NewPlan works out the plan of rows' columns (from a query on an engine
// of kind) with opts.
func NewPlan(kind dialects.Kind, rows *sql.Rows, opts Options) (*Plan, error) {
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("rowjson: column types: %w", err)
	}
	cols := make([]ResultColumn, len(types))
	for i, ct := range types {
		cols[i] = ResultColumn{Name: ct.Name(), DatabaseType: ct.DatabaseTypeName()}
	}
	return NewPlanOf(kind, cols, opts), nil
}

// ResultColumn is one result column as database/sql describes it: its
// name and its database type name (sql.ColumnType's Name and
// DatabaseTypeName).
type ResultColumn struct {
	Name, DatabaseType string
}

// NewPlanOf works out the plan of result columns cols (of a query on an
// engine of kind) with opts, for a caller that reads the rows itself
// (see [Rows.Set]).
func NewPlanOf(kind dialects.Kind, types []ResultColumn, opts Options) *Plan {
	p := &Plan{kind: kind, cols: make([]column, len(types))}
	var only map[string]bool
	if opts.Only != nil {
		only = make(map[string]bool, len(opts.Only))
		for _, n := range opts.Only {
			only[strings.ToLower(n)] = true
		}
	}
	seen := make(map[string]bool, len(types))
	for i, ct := range types {
		name := strings.ToLower(ct.Name)
		col := column{name: name, scale: -1}
		col.key = append(AppendString(nil, name), ':')
		col.emit = !seen[name] &&
			(opts.Visible <= 0 || i < opts.Visible) &&
			(only == nil || only[name]) &&
			(opts.Omit == nil || !opts.Omit(name))
		seen[name] = true
		var hint *dialects.Column
		if opts.Table != nil {
			hint = opts.Table.Column(ct.Name)
		}
		switch kind {
		case dialects.SQLite:
			sqliteCodec(&col, ct.DatabaseType)
		case dialects.Postgres:
			col.codec = pgCodec(ct.DatabaseType)
		case dialects.MySQL:
			col.codec = mysqlCodec(ct.DatabaseType, hint)
		}
		p.cols[i] = col
	}
	return p
}

// Len returns the number of result columns of the plan.
func (p *Plan) Len() int { return len(p.cols) }

// Rows returns a reader of rows, a result of the statement p was made for
// (the same columns in the same order), that encodes them by p.
func (p *Plan) Rows(rows *sql.Rows) *Rows {
	r := &Rows{}
	p.Reset(r, rows)
	return r
}

// Reset makes r a reader of rows as [Plan.Rows] does, reusing r's memory
// (a reader kept in a pool saves its three allocations per query). r must
// no longer be in use for an earlier result.
func (p *Plan) Reset(r *Rows, rows *sql.Rows) {
	n := len(p.cols)
	cells, dest := r.cells, r.dest
	if cap(cells) < n {
		cells, dest = make([]cell, n), make([]any, n)
	}
	cells, dest = cells[:n], dest[:n]
	for i := range cells {
		cells[i] = cell{}
		dest[i] = &cells[i]
	}
	*r = Rows{rows: rows, kind: p.kind, cols: p.cols, cells: cells, dest: dest}
}

func sqliteCodec(col *column, decl string) {
	col.bin = true
	if decl == "" {
		return
	}
	t := dialects.SimpleType(decl)
	switch t {
	case dialects.TypeBoolean:
		col.codec = cBool
	case dialects.TypeDecimal, dialects.TypeMoney:
		col.codec = cDecimal
		if _, p, s := dialects.TypeSize(t, decl); p > 0 {
			col.scale = s
		}
	case dialects.TypeDate:
		col.codec = cDate
	case dialects.TypeTime, dialects.TypeTimeTZ:
		col.codec = cTime
	case dialects.TypeDatetime, dialects.TypeDatetimeTZ, dialects.TypeTimestamp, dialects.TypeTimestampTZ:
		col.codec = cDateTime
	case dialects.TypeJSON, dialects.TypeJSONB:
		col.codec = cJSON
	}
}

func pgCodec(name string) codec {
	switch name {
	case "BOOL":
		return cBool
	case "NUMERIC":
		return cDecimal
	case "FLOAT4":
		return cFloat32
	case "DATE":
		return cDate
	case "TIME", "TIMETZ":
		return cTime
	case "TIMESTAMP", "TIMESTAMPTZ":
		return cDateTime
	case "JSON", "JSONB":
		return cJSON
	case "BYTEA":
		return cBinary
	}
	return cAuto
}

func mysqlCodec(name string, hint *dialects.Column) codec {
	switch name {
	case "TINYINT", "UNSIGNED TINYINT":
		if hint != nil && hint.Type == dialects.TypeBoolean {
			return cBool
		}
	case "BIT":
		if hint != nil && hint.Type == dialects.TypeBoolean {
			return cBool
		}
		return cBits
	case "DECIMAL":
		return cDecimal
	case "DATE":
		return cDate
	case "TIME":
		return cTime
	case "DATETIME", "TIMESTAMP":
		return cDateTime
	case "JSON":
		return cJSON
	case "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT":
		if hint != nil && (hint.Type == dialects.TypeJSON || hint.Type == dialects.TypeJSONB) {
			return cJSON
		}
	case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "GEOMETRY":
		if hint == nil || hint.Type == dialects.TypeBinary {
			return cBinary
		}
	}
	return cAuto
}

// Columns returns the lowercased names of all result columns, written or
// not, in result order; [Rows.Value] takes an index into it.
func (r *Rows) Columns() []string {
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = c.name
	}
	return names
}

// Fields returns the lowercased names of the columns that are written, in
// result order (after Only, Omit, Visible and duplicate names: when two
// result columns share a name, the first is written).
func (r *Rows) Fields() []string {
	var names []string
	for _, c := range r.cols {
		if c.emit {
			names = append(names, c.name)
		}
	}
	return names
}

// Next advances to the next row and reads it. It returns false at the end
// or on an error, which [Rows.Err] then reports.
func (r *Rows) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	if err := r.rows.Scan(r.dest...); err != nil {
		r.err = fmt.Errorf("rowjson: scan: %w", err)
		return false
	}
	return true
}

// Err returns the error that stopped Next, if any.
func (r *Rows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.rows.Err()
}

// Close closes the underlying rows.
func (r *Rows) Close() error { return r.rows.Close() }

// AppendObject appends the current row as a JSON object: the written
// columns, in result order, under their lowercased names.
func (r *Rows) AppendObject(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	for i := range r.cols {
		c := &r.cols[i]
		if !c.emit {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, c.key...)
		dst = r.appendValue(dst, c, r.cells[i].v)
	}
	return append(dst, '}')
}

// flushSize is how much WriteArray buffers before writing.
const flushSize = 32 << 10

// WriteArray writes the rows as a JSON array to w, at most max rows when
// max is positive, and returns how many it wrote. It advances the rows
// itself, starting with the next one; after it returns with n == max, Next
// tells whether more rows remain. Output is buffered in 32 KiB pieces.
func (r *Rows) WriteArray(w io.Writer, max int) (n int, err error) {
	buf := make([]byte, 0, flushSize+4096)
	buf = append(buf, '[')
	for (max <= 0 || n < max) && r.Next() {
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = r.AppendObject(buf)
		n++
		if len(buf) >= flushSize {
			if _, err := w.Write(buf); err != nil {
				return n, fmt.Errorf("rowjson: write: %w", err)
			}
			buf = buf[:0]
		}
	}
	if err := r.Err(); err != nil {
		return n, err
	}
	buf = append(buf, ']')
	if _, err := w.Write(buf); err != nil {
		return n, fmt.Errorf("rowjson: write: %w", err)
	}
	return n, nil
}

// Value returns column i of the current row as a Go value that
// encoding/json writes exactly as AppendObject does: nil, bool, int64,
// uint64, float64, string, json.Number (decimals and float4) or
// json.RawMessage (JSON columns). It holds no driver memory, so it stays
// valid after Next.
func (r *Rows) Value(i int) any {
	return r.goValue(&r.cols[i], r.cells[i].v)
}

// Set makes v the value of column i of the current row, for a reader made
// with [Plan.Reset] on nil rows whose caller reads the rows itself: v must
// be the value database/sql would have given for it (the driver's
// driver.Value), so that the row is written as from database/sql.
func (r *Rows) Set(i int, v any) { r.cells[i].v = v }

// Clear drops what r holds of its last result (the driver's values and
// the rows), keeping its memory for [Plan.Reset].
func (r *Rows) Clear() {
	clear(r.cells)
	*r = Rows{cells: r.cells, dest: r.dest}
}

// Plain returns column i of the current row as the driver gave it, when
// that is what [Rows.Value] returns too (an int64 or a string of a column
// written by its Go type), without copying or boxing it again; ok is
// false otherwise. Like the row, it is valid until the next call to Next.
func (r *Rows) Plain(i int) (v any, ok bool) {
	if r.cols[i].codec != cAuto {
		return nil, false
	}
	switch v := r.cells[i].v.(type) {
	case int64, string:
		return v, true
	}
	return nil, false
}

// Record returns the current row's written columns as an ordered record.
func (r *Rows) Record() Record {
	rec := make(Record, 0, len(r.cols))
	for i := range r.cols {
		if c := &r.cols[i]; c.emit {
			rec = append(rec, Field{Name: c.name, Value: r.goValue(c, r.cells[i].v)})
		}
	}
	return rec
}

// appendValue writes one value according to its column's codec. The rules
// are listed in the package documentation.
func (r *Rows) appendValue(dst []byte, c *column, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case int64:
		switch c.codec {
		case cBool:
			return appendBool(dst, v != 0)
		case cDecimal:
			if c.scale > 0 && v > -1e15 && v < 1e15 {
				return appendScaled(dst, float64(v), c.scale)
			}
		}
		return strconv.AppendInt(dst, v, 10)
	case uint64:
		if c.codec == cBool {
			return appendBool(dst, v != 0)
		}
		return strconv.AppendUint(dst, v, 10)
	case float64:
		switch c.codec {
		case cBool:
			return appendBool(dst, v != 0)
		case cDecimal:
			return appendScaled(dst, v, c.scale)
		case cFloat32:
			return AppendFloat(dst, v, 32)
		}
		return AppendFloat(dst, v, 64)
	case float32:
		return AppendFloat(dst, float64(v), 32)
	case bool:
		return appendBool(dst, v)
	case string:
		switch c.codec {
		case cDecimal:
			if isNumber(v) {
				return append(dst, v...)
			}
		case cJSON:
			return appendJSON(dst, []byte(v))
		}
		return AppendString(dst, v)
	case []byte:
		if c.bin { // a SQLite BLOB, whatever the column's declared type
			return appendBase64(dst, v)
		}
		switch c.codec {
		case cBinary:
			return appendBase64(dst, v)
		case cJSON:
			return appendJSON(dst, v)
		case cDecimal:
			if isNumber(bytesView(v)) {
				return append(dst, v...)
			}
		case cBool:
			return appendBool(dst, anyBit(v))
		case cBits:
			if len(v) <= 8 {
				return strconv.AppendUint(dst, bitsValue(v), 10)
			}
		}
		return appendBytesString(dst, v)
	case time.Time:
		return appendTime(dst, v, c.codec)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return AppendString(dst, fmt.Sprint(v))
	}
	return append(dst, b...)
}

// goValue is appendValue's twin for Go values.
func (r *Rows) goValue(c *column, v any) any {
	switch v := v.(type) {
	case nil:
		return nil
	case bool:
		return v
	case uint64:
		if c.codec == cBool {
			return v != 0
		}
		return v
	case int64:
		switch c.codec {
		case cBool:
			return v != 0
		case cDecimal:
			if c.scale > 0 && v > -1e15 && v < 1e15 {
				return json.Number(appendScaled(nil, float64(v), c.scale))
			}
		}
		return v
	case float64:
		switch c.codec {
		case cBool:
			return v != 0
		case cDecimal, cFloat32:
			return numberOrString(r.appendValue(nil, c, v))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return numberOrString(AppendFloat(nil, v, 64))
		}
		return v
	case float32:
		return numberOrString(AppendFloat(nil, float64(v), 32))
	case string:
		switch c.codec {
		case cDecimal:
			if isNumber(v) {
				return json.Number(v)
			}
		case cJSON:
			return json.RawMessage(appendJSON(nil, []byte(v)))
		}
		return v
	case []byte:
		if c.bin {
			return base64.StdEncoding.EncodeToString(v)
		}
		switch c.codec {
		case cBinary:
			return base64.StdEncoding.EncodeToString(v)
		case cJSON:
			return json.RawMessage(appendJSON(nil, v))
		case cDecimal:
			if isNumber(bytesView(v)) {
				return json.Number(v)
			}
		case cBool:
			return anyBit(v)
		case cBits:
			if len(v) <= 8 {
				return bitsValue(v)
			}
		}
		return strings.ToValidUTF8(string(v), "\uFFFD")
	case time.Time:
		b := appendTime(nil, v, c.codec)
		return string(b[1 : len(b)-1])
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return json.RawMessage(b)
}

// numberOrString turns AppendFloat's output into a json.Number, or a
// string for NaN and the infinities (which it writes quoted).
func numberOrString(b []byte) any {
	if len(b) > 0 && b[0] == '"' {
		return string(b[1 : len(b)-1])
	}
	return json.Number(b)
}

func anyBit(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return true
		}
	}
	return false
}

func bitsValue(b []byte) uint64 {
	var n uint64
	for _, x := range b {
		n = n<<8 | uint64(x)
	}
	return n
}
