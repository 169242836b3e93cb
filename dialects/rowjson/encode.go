package rowjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// The time layouts of the documented JSON formats. Fractional seconds are
// written only when not zero, without trailing zeros.
const (
	DateLayout     = "2006-01-02"
	TimeLayout     = "15:04:05.999999999"
	DateTimeLayout = "2006-01-02 15:04:05.999999999"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. It escapes '"', '\\', the
// control characters below U+0020 (as \n, \r, \t, \b, \f or \u00XX) and
// U+2028/U+2029, escapes <, > and & as \u003c, \u003e and \u0026 (so the
// output is safe inside HTML), and replaces each byte of invalid UTF-8 with
// \ufffd: byte for byte what encoding/json writes.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendBytesString appends b as a JSON string without copying it first.
func appendBytesString(dst, b []byte) []byte {
	return AppendString(dst, bytesView(b))
}

// bytesView is b seen as a string, for reading only while b is unchanged.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// AppendFloat appends f as encoding/json writes a float of the given bit
// size (32 or 64): the shortest text that reads back as the same value,
// in exponent form below 1e-6 and from 1e21. NaN and the infinities, which
// JSON cannot hold, are written as the strings "NaN", "Infinity" and
// "-Infinity".
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// isNumber reports whether s is a number in JSON's grammar.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// appendScaled appends a SQLite number stored in a decimal column with a
// declared scale, written with exactly that many fraction digits when this
// does not change its value (12 and 12.5 in DECIMAL(10,2) give 12.00 and
// 12.50, as PostgreSQL and MySQL write them), otherwise as it is.
func appendScaled(dst []byte, f float64, scale int) []byte {
	if scale < 0 || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1e15 {
		return AppendFloat(dst, f, 64)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', scale, 64)
	if back, err := strconv.ParseFloat(bytesView(dst[n:]), 64); err != nil || back != f {
		return AppendFloat(dst[:n], f, 64)
	}
	return dst
}

// appendJSON appends raw JSON compacted, or as a string when it is not
// valid JSON.
func appendJSON(dst, raw []byte) []byte {
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return appendBytesString(dst, raw)
	}
	return buf.Bytes()
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

func appendTime(dst []byte, t time.Time, c codec) []byte {
	dst = append(dst, '"')
	switch c {
	case cDate:
		dst = appendDate(dst, t)
	case cTime:
		dst = appendClock(dst, t)
	default:
		t = t.UTC()
		dst = appendDate(dst, t)
		dst = append(dst, ' ')
		dst = appendClock(dst, t)
	}
	return append(dst, '"')
}

// appendDate writes t's date as DateLayout does, faster.
func appendDate(dst []byte, t time.Time) []byte {
	y, m, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(dst, DateLayout)
	}
	dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	dst = append2(dst, int(m))
	dst = append(dst, '-')
	return append2(dst, d)
}

// appendClock writes t's clock as TimeLayout does, faster.
func appendClock(dst []byte, t time.Time) []byte {
	h, m, s := t.Clock()
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [9]byte
		for i := 8; i >= 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, '.')
		dst = append(dst, frac[:n]...)
	}
	return dst
}

func append2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}
