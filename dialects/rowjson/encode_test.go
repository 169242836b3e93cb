package rowjson

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	tests := []string{
		"", "plain", `quote " and \ backslash`, "\n\r\t\b\f", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "é ✓ 😀", "\u2028\u2029", "bad \xff\xfe utf8", "\xe2\x82", "trailing \xc3",
	}
	for _, s := range tests {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028", "<>&", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e20, 1e21, 1e-6, 1e-7, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64, 3}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, math.Float64frombits(r.Uint64()))
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		want, _ := json.Marshal(v)
		if got := AppendFloat(nil, v, 64); string(got) != string(want) {
			t.Errorf("AppendFloat(%v, 64) = %s, want %s", v, got, want)
		}
		f32 := float32(v)
		if math.IsInf(float64(f32), 0) {
			continue
		}
		want, _ = json.Marshal(f32)
		if got := AppendFloat(nil, float64(f32), 32); string(got) != string(want) {
			t.Errorf("AppendFloat(%v, 32) = %s, want %s", f32, got, want)
		}
	}
	for v, want := range map[float64]string{math.NaN(): `"NaN"`, math.Inf(1): `"Infinity"`, math.Inf(-1): `"-Infinity"`} {
		if got := AppendFloat(nil, v, 64); string(got) != want {
			t.Errorf("AppendFloat(%v) = %s", v, got)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12.50": true, "-0.5": true, "1e10": true, "1E+2": true, "123456789012345678901234567890.5": true,
		"": false, "-": false, "01": false, ".5": false, "5.": false, "+1": false, "NaN": false, "Infinity": false, "1e": false, "1.2.3": false, " 1": false,
	} {
		if got := isNumber(s); got != want {
			t.Errorf("isNumber(%q) = %v", s, got)
		}
	}
}

func TestAppendScaled(t *testing.T) {
	tests := []struct {
		f     float64
		scale int
		want  string
	}{
		{12, 2, "12.00"}, {12.5, 2, "12.50"}, {-0.5, 2, "-0.50"}, {0.1, 2, "0.10"},
		{12.345, 2, "12.345"}, // more digits than declared: kept, not rounded
		{12.5, -1, "12.5"}, {1e20, 2, "100000000000000000000"}, {0, 0, "0"},
	}
	for _, tt := range tests {
		if got := string(appendScaled(nil, tt.f, tt.scale)); got != tt.want {
			t.Errorf("appendScaled(%v, %d) = %s, want %s", tt.f, tt.scale, got, tt.want)
		}
	}
}

// BenchmarkAppendObject measures the encoder alone on one row of the
// eight benchmark columns, as the SQLite driver hands them over.
func BenchmarkAppendObject(b *testing.B) {
	names := []string{"id", "title", "code", "active", "price", "ratio", "day", "updated"}
	codecs := []codec{cAuto, cAuto, cAuto, cBool, cDecimal, cAuto, cDate, cDateTime}
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	vals := []any{int64(417), `Item number 417 with "quotes"`, "C-00417", int64(1), 521.25, 59.57142857142857, day, day.Add(8 * time.Hour)}
	r := &Rows{cols: make([]column, len(names)), cells: make([]cell, len(names))}
	for i, n := range names {
		r.cols[i] = column{name: n, key: append(AppendString(nil, n), ':'), codec: codecs[i], scale: -1, emit: true, bin: true}
		r.cells[i].v = vals[i]
	}
	r.cols[4].scale = 2
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendObject(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

func TestAppendTimeMatchesLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	times := []time.Time{
		{}, time.Date(2024, 1, 15, 10, 30, 0, 500000000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 1, time.FixedZone("x", 5400)),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for range 1000 {
		times = append(times, time.Unix(r.Int64N(1<<35)-1<<34, r.Int64N(1e9)).In(time.FixedZone("z", r.IntN(50000)-25000)))
	}
	for _, tm := range times {
		for c, layout := range map[codec]string{cDate: DateLayout, cTime: TimeLayout, cDateTime: DateTimeLayout} {
			want := `"` + tm.Format(layout) + `"`
			if c == cDateTime {
				want = `"` + tm.UTC().Format(layout) + `"`
			}
			if got := string(appendTime(nil, tm, c)); got != want {
				t.Errorf("appendTime(%v, %d) = %s, want %s", tm, c, got, want)
			}
		}
	}
}
