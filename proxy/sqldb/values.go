package sqldb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// inputValue converts a JSON value of a record into the argument bound for
// column c, checking that it fits the column's type so that every engine
// accepts and stores the same thing. nil is NULL.
func (q *tableReq) inputValue(c *dialects.Column, v any) (any, error) {
	var sc scalar
	switch n := v.(type) {
	case nil:
		return nil, nil
	case int64:
		sc = scalar{kind: scalarNumber, s: strconv.FormatInt(n, 10)}
	case uint64:
		sc = scalar{kind: scalarNumber, s: strconv.FormatUint(n, 10)}
	case float64:
		sc = scalar{kind: scalarNumber, s: strconv.FormatFloat(n, 'g', -1, 64)}
	case filter.Decimal:
		sc = scalar{kind: scalarNumber, s: string(n)}
	case json.Number:
		sc = scalar{kind: scalarNumber, s: string(n)}
	case string:
		sc = scalar{kind: scalarString, s: n}
	case bool:
		sc = scalar{kind: scalarBool, b: n}
	default:
		return q.inputComposite(c, v)
	}
	return q.inputScalar(c, sc)
}

// scalarKind is the kind of a JSON scalar.
type scalarKind uint8

const (
	scalarNull scalarKind = iota
	scalarString
	scalarNumber // s is its text, as json.Number keeps it
	scalarBool
)

// scalar is a JSON scalar of a record: null, a string, a number (its
// text) or a boolean. A record read from the body's text (body.go) gives
// its values so, without boxing them.
type scalar struct {
	kind scalarKind
	s    string
	b    bool
}

// badValue is the error of a value that does not fit column c.
func badValue(c *dialects.Column, want string) error {
	return apierr.BadRequest("Invalid value for field '%s': expected %s.", c.Name, want)
}

// inputScalar is inputValue for a scalar.
func (q *tableReq) inputScalar(c *dialects.Column, v scalar) (any, error) {
	if v.kind == scalarNull {
		return nil, nil
	}
	t := c.Type
	switch {
	case t == dialects.TypeBoolean:
		switch v.kind {
		case scalarBool:
			return v.b, nil
		case scalarNumber:
			switch v.s {
			case "1":
				return true, nil
			case "0":
				return false, nil
			}
		case scalarString:
			switch strings.ToLower(strings.TrimSpace(v.s)) {
			case "true", "1", "t", "yes", "y", "on":
				return true, nil
			case "false", "0", "f", "no", "n", "off":
				return false, nil
			}
		}
		return nil, badValue(c, "a boolean")
	case t.IsInteger():
		var s string
		switch v.kind {
		case scalarNumber:
			s = v.s
		case scalarString:
			s = strings.TrimSpace(v.s)
		case scalarBool:
			if v.b {
				return int64(1), nil
			}
			return int64(0), nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return n, nil
		}
		// 1.0 and 1e3 are integers too.
		if f, ok := new(big.Float).SetString(s); ok && f.IsInt() {
			if n, acc := f.Int64(); acc == big.Exact {
				return n, nil
			}
		}
		return nil, badValue(c, "an integer")
	case t.IsNumeric():
		var s string
		switch v.kind {
		case scalarNumber:
			s = v.s
		case scalarString:
			s = strings.TrimSpace(v.s)
		default:
			return nil, badValue(c, "a number")
		}
		if !isNumber(s) {
			return nil, badValue(c, "a number")
		}
		if strings.ContainsAny(s, "eE") || t == dialects.TypeFloat || t == dialects.TypeDouble {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, badValue(c, "a number in range")
			}
			return f, nil
		}
		return filter.Decimal(strings.TrimPrefix(s, "+")), nil
	case t.IsTemporal():
		if v.kind != scalarString {
			return nil, badValue(c, "a date or time as a string")
		}
		out, err := temporal(q.kind, t, v.s)
		if err != nil {
			return nil, badValue(c, err.Error())
		}
		return out, nil
	case t == dialects.TypeBinary:
		if v.kind != scalarString {
			return nil, badValue(c, "base64 text")
		}
		b, err := base64.StdEncoding.DecodeString(v.s)
		if err != nil {
			return nil, badValue(c, "base64 text")
		}
		return b, nil
	case t == dialects.TypeJSON || t == dialects.TypeJSONB:
		switch v.kind {
		case scalarString:
			if json.Valid([]byte(v.s)) {
				return v.s, nil
			}
			b, err := json.Marshal(v.s)
			if err != nil {
				return nil, badValue(c, "JSON")
			}
			return string(b), nil
		case scalarNumber:
			b, err := json.Marshal(json.Number(v.s))
			if err != nil {
				return nil, badValue(c, "JSON")
			}
			return string(b), nil
		}
		return strconv.FormatBool(v.b), nil
	}
	switch v.kind {
	case scalarString:
		if strings.ContainsRune(v.s, 0) {
			return nil, badValue(c, "text without NUL characters")
		}
		return v.s, nil
	case scalarNumber:
		return v.s, nil
	}
	return strconv.FormatBool(v.b), nil
}

// inputComposite is inputValue for anything but a scalar: an object or
// array of the body (JSON columns and text take its JSON text), or a Go
// value of another type.
func (q *tableReq) inputComposite(c *dialects.Column, v any) (any, error) {
	t := c.Type
	switch {
	case t == dialects.TypeBoolean:
		return nil, badValue(c, "a boolean")
	case t.IsInteger():
		return nil, badValue(c, "an integer")
	case t.IsNumeric():
		return nil, badValue(c, "a number")
	case t.IsTemporal():
		return nil, badValue(c, "a date or time as a string")
	case t == dialects.TypeBinary:
		return nil, badValue(c, "base64 text")
	case t == dialects.TypeJSON || t == dialects.TypeJSONB:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, badValue(c, "JSON")
		}
		return string(b), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, badValue(c, "a scalar value")
	}
	return string(b), nil
}

// isNumber reports whether s is a JSON-style number, with an optional +.
func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return false
	}
	var n json.Number = json.Number(s)
	_, err := n.Float64()
	return err == nil && !strings.ContainsAny(s, "xXpP_iInN")
}

// Accepted input forms of dates and times.
var (
	dateLayouts     = []string{"2006-01-02"}
	timeLayouts     = []string{"15:04:05.999999999", "15:04"}
	dateTimeLayouts = []string{
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02",
	}
	zonedLayouts = []string{
		"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999Z0700",
		"2006-01-02T15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07",
		"2006-01-02 15:04:05.999999999 Z07:00",
	}
)

// temporal checks a date or time given for a column of type t and returns
// it in the form every engine reads the same way: dates 2006-01-02, times
// 15:04:05, date-times 2006-01-02 15:04:05 with fractions when given. A
// value with a time zone is converted to UTC.
func temporal(kind dialects.Kind, t dialects.FieldType, s string) (string, error) {
	s = strings.TrimSpace(s)
	// A zone (Z, +hh:mm, -hh:mm) can only follow the date: without one
	// of those characters after it no zoned layout can match, and each
	// failed time.Parse allocates its error.
	zoned := len(s) > 10 && strings.ContainsAny(s[10:], "Z+-")
	parse := func(layouts []string) (time.Time, bool) {
		for _, l := range layouts {
			if tm, err := time.Parse(l, s); err == nil {
				return tm, true
			}
		}
		return time.Time{}, false
	}
	parseZoned := func() (time.Time, bool) {
		if !zoned {
			return time.Time{}, false
		}
		return parse(zonedLayouts)
	}
	frac := func(tm time.Time) string {
		if tm.Nanosecond() == 0 {
			return ""
		}
		return strings.TrimRight(fmt.Sprintf(".%09d", tm.Nanosecond()), "0")
	}
	// format is tm in layout, with fractions when it has them: s itself
	// when s is written so already (no new string).
	format := func(tm time.Time, layout string) string {
		if tm.Nanosecond() != 0 {
			return tm.Format(layout) + frac(tm)
		}
		var a [32]byte
		if b := tm.AppendFormat(a[:0], layout); string(b) != s {
			return string(b)
		}
		return s
	}
	switch t {
	case dialects.TypeDate:
		if tm, ok := parse(dateLayouts); ok {
			return format(tm, "2006-01-02"), nil
		}
		if tm, ok := parseZoned(); ok {
			return tm.UTC().Format("2006-01-02"), nil
		}
		if tm, ok := parse(dateTimeLayouts); ok {
			return tm.Format("2006-01-02"), nil
		}
		return "", fmt.Errorf("a date such as 2024-01-31")
	case dialects.TypeTime, dialects.TypeTimeTZ:
		if tm, ok := parse(timeLayouts); ok {
			return format(tm, "15:04:05"), nil
		}
		return "", fmt.Errorf("a time such as 13:45:00")
	}
	if tm, ok := parseZoned(); ok {
		tm = tm.UTC()
		out := tm.Format("2006-01-02 15:04:05") + frac(tm)
		if kind == dialects.Postgres && (t == dialects.TypeTimestampTZ || t == dialects.TypeDatetimeTZ) {
			out += "Z"
		}
		return out, nil
	}
	if tm, ok := parse(dateTimeLayouts); ok {
		return format(tm, "2006-01-02 15:04:05"), nil
	}
	return "", fmt.Errorf("a date and time such as 2024-01-31 13:45:00")
}
