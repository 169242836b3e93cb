package rowjson

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestRowMatchesRows writes every kind of typed value under every codec
// (and a SQLite decimal with a scale) and checks that a Row writes the
// same bytes as Rows given the same value boxed.
func TestRowMatchesRows(t *testing.T) {
	codecs := []codec{cAuto, cBool, cDecimal, cFloat32, cDate, cTime, cDateTime, cJSON, cBinary, cBits}
	var cols []column
	for _, c := range codecs {
		cols = append(cols, column{name: "c", key: []byte(`"c":`), codec: c, scale: -1, emit: true})
	}
	cols = append(cols,
		column{name: "s", key: []byte(`"s":`), codec: cDecimal, scale: 2, emit: true},
		column{name: "b", key: []byte(`"b":`), codec: cAuto, scale: -1, emit: true, bin: true})
	p := &Plan{cols: cols}
	loc := time.FixedZone("x", 5*3600+1800)
	type value struct {
		set func(r *Row, i int)
		v   any
	}
	text := func(s string) value {
		return value{func(r *Row, i int) { r.SetText(i, []byte(s)) }, s}
	}
	var values []value
	for _, n := range []int64{0, 1, -1, 255, 256, 1234567, math.MaxInt64, math.MinInt64, 1e15, -1e15 + 1} {
		values = append(values, value{func(r *Row, i int) { r.SetInt(i, n) }, n})
	}
	for _, f := range []float64{0, 0.1, -2.5, 1e21, 1e-7, 12.345, float64(float32(2.1)), math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64} {
		values = append(values, value{func(r *Row, i int) { r.SetFloat(i, f) }, f})
	}
	for _, b := range []bool{true, false} {
		values = append(values, value{func(r *Row, i int) { r.SetBool(i, b) }, b})
	}
	for _, s := range []string{"", "plain", "12.50", "-3", "1e5", "NaN", "infinity", `{"a": [1, 2]}`, "not json {", "<&>\"\\\n\t\x01", "\xff\xfe", "é\u2028", "00:00:01"} {
		values = append(values, text(s))
	}
	for _, tm := range []time.Time{
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2024, 1, 2, 3, 4, 5, 500000000, loc),
		time.Date(-44, 3, 15, 0, 0, 0, 1, time.UTC), time.Date(12000, 12, 31, 23, 59, 59, 999999999, time.UTC),
	} {
		values = append(values, value{func(r *Row, i int) { r.SetTime(i, tm) }, tm})
	}
	for _, v := range []any{nil, []byte("bytes"), []byte{0, 1}, uint64(7), float32(1.5), struct{ A int }{1}} {
		values = append(values, value{func(r *Row, i int) { r.Set(i, v) }, v})
	}
	var row Row
	rows := &Rows{}
	for _, v := range values {
		p.ResetRow(&row)
		p.Reset(rows, nil)
		for i := range cols {
			v.set(&row, i)
			rows.Set(i, v.v)
		}
		for i := range cols {
			got := appendCell(nil, &cols[i], &row.cells[i])
			want := rows.appendValue(nil, &cols[i], v.v)
			if string(got) != string(want) {
				t.Errorf("%#v under codec %d (scale %d, bin %v): Row writes %s, Rows %s", v.v, cols[i].codec, cols[i].scale, cols[i].bin, got, want)
			}
			if got, want := fmt.Sprintf("%#v", row.Value(i)), fmt.Sprintf("%#v", rows.Value(i)); got != want {
				t.Errorf("%#v under codec %d: Row.Value %s, Rows.Value %s", v.v, cols[i].codec, got, want)
			}
			gp, gok := row.Plain(i)
			wp, wok := rows.Plain(i)
			if gok && (!wok || fmt.Sprintf("%#v", gp) != fmt.Sprintf("%#v", wp)) {
				t.Errorf("%#v under codec %d: Row.Plain %#v %v, Rows.Plain %#v %v", v.v, cols[i].codec, gp, gok, wp, wok)
			}
		}
		if got, want := row.AppendObject(nil), rows.AppendObject(nil); string(got) != string(want) {
			t.Errorf("%#v: Row object %s, Rows object %s", v.v, got, want)
		}
	}
	row.Clear()
	if row.cols != nil || row.cells[0].b != nil {
		t.Error("Clear kept the last row")
	}
}
