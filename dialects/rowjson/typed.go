package rowjson

import (
	"strconv"
	"time"
)

// Typed rows. A caller that decodes a driver's wire values itself (sqldb
// reads PostgreSQL's through pgx) can hand each value over with its Go
// type kept instead of boxed into an any, which costs an allocation for
// most values (an integer above 255, every string, float and time): a
// page of 1000 rows of 8 columns saves about 7,000 allocations. A [Row]
// writes exactly what [Rows] writes for the same values given to
// [Rows.Set]: the common codecs are written here, the rest by Rows's own
// code with the value boxed.

// cellKind is the Go type of a typed cell's value.
type cellKind uint8

const (
	kAny   cellKind = iota // v (nil included)
	kInt                   // i as an int64
	kFloat                 // f as a float64
	kBool                  // i != 0 as a bool
	kText                  // b as a string (the text, not bytes)
	kTime                  // t as a time.Time
)

// typedCell is one value of a Row.
type typedCell struct {
	kind cellKind
	i    int64
	f    float64
	b    []byte
	t    time.Time
	v    any
}

// Row is the current row of a result whose values its caller decodes and
// sets one by one (Set, SetInt, …), written by the plan it was reset with
// ([Plan.ResetRow]). Each column must be set for every row. A Row is not
// safe for concurrent use.
type Row struct {
	cols  []column
	cells []typedCell
}

// ResetRow makes r a row of p's columns, reusing r's memory.
func (p *Plan) ResetRow(r *Row) {
	n := len(p.cols)
	if cap(r.cells) < n {
		r.cells = make([]typedCell, n)
	}
	r.cells = r.cells[:n]
	clear(r.cells)
	r.cols = p.cols
}

// Clear drops what r holds of its last row (values and the text they
// point into), keeping its memory for [Plan.ResetRow].
func (r *Row) Clear() {
	clear(r.cells)
	r.cols = nil
}

// Set makes v, the value database/sql would give (a driver.Value), the
// value of column i, as [Rows.Set] does.
func (r *Row) Set(i int, v any) { r.cells[i] = typedCell{kind: kAny, v: v} }

// SetInt sets column i to the int64 v (as Set(i, v)).
func (r *Row) SetInt(i int, v int64) { r.cells[i] = typedCell{kind: kInt, i: v} }

// SetFloat sets column i to the float64 v (as Set(i, v)).
func (r *Row) SetFloat(i int, v float64) { r.cells[i] = typedCell{kind: kFloat, f: v} }

// SetBool sets column i to the bool v (as Set(i, v)).
func (r *Row) SetBool(i int, v bool) {
	c := typedCell{kind: kBool}
	if v {
		c.i = 1
	}
	r.cells[i] = c
}

// SetText sets column i to the string whose bytes are b (as
// Set(i, string(b))) without copying them: b must stay unchanged until
// the row is written.
func (r *Row) SetText(i int, b []byte) { r.cells[i] = typedCell{kind: kText, b: b} }

// SetTime sets column i to the time.Time v (as Set(i, v)).
func (r *Row) SetTime(i int, v time.Time) { r.cells[i] = typedCell{kind: kTime, t: v} }

// AppendObject appends the row as [Rows.AppendObject] appends the same
// values.
func (r *Row) AppendObject(dst []byte) []byte {
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
		dst = appendCell(dst, c, &r.cells[i])
	}
	return append(dst, '}')
}

// appendCell writes v as appendValue writes its value boxed: the cases
// below are appendValue's for the codecs they name, and every other one
// is left to appendValue itself.
func appendCell(dst []byte, c *column, v *typedCell) []byte {
	var rows *Rows // appendValue reads nothing of its receiver
	switch v.kind {
	case kInt:
		if c.codec == cAuto {
			return strconv.AppendInt(dst, v.i, 10)
		}
		return rows.appendValue(dst, c, v.i)
	case kFloat:
		switch c.codec {
		case cAuto:
			return AppendFloat(dst, v.f, 64)
		case cFloat32:
			return AppendFloat(dst, v.f, 32)
		}
		return rows.appendValue(dst, c, v.f)
	case kBool:
		return appendBool(dst, v.i != 0)
	case kText:
		switch c.codec {
		case cAuto:
			return appendBytesString(dst, v.b)
		case cDecimal:
			if s := bytesView(v.b); isNumber(s) {
				return append(dst, s...)
			}
			return appendBytesString(dst, v.b)
		}
		return rows.appendValue(dst, c, string(v.b))
	case kTime:
		return appendTime(dst, v.t, c.codec)
	}
	return rows.appendValue(dst, c, v.v)
}

// Plain returns column i as [Rows.Plain] does for the same value: the
// value set with Set when it is an int64 or a string of a column written
// by its Go type; ok is false otherwise (typed values included).
func (r *Row) Plain(i int) (v any, ok bool) {
	c := &r.cells[i]
	if c.kind != kAny || r.cols[i].codec != cAuto {
		return nil, false
	}
	switch v := c.v.(type) {
	case int64, string:
		return v, true
	}
	return nil, false
}

// Value returns column i as [Rows.Value] returns the same value.
func (r *Row) Value(i int) any {
	var rows *Rows // goValue reads nothing of its receiver
	c := &r.cells[i]
	var v any
	switch c.kind {
	case kAny:
		v = c.v
	case kInt:
		v = c.i
	case kFloat:
		v = c.f
	case kBool:
		v = c.i != 0
	case kText:
		v = string(c.b)
	case kTime:
		v = c.t
	}
	return rows.goValue(&r.cols[i], v)
}
