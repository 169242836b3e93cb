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
	switch n := v.(type) {
	case nil:
		return nil, nil
	case int64:
		v = json.Number(strconv.FormatInt(n, 10))
	case uint64:
		v = json.Number(strconv.FormatUint(n, 10))
	case float64:
		v = json.Number(strconv.FormatFloat(n, 'g', -1, 64))
	case filter.Decimal:
		v = json.Number(n)
	}
	bad := func(want string) error {
		return apierr.BadRequest("Invalid value for field '%s': expected %s.", c.Name, want)
	}
	t := c.Type
	switch {
	case t == dialects.TypeBoolean:
		switch v := v.(type) {
		case bool:
			return v, nil
		case json.Number:
			switch v.String() {
			case "1":
				return true, nil
			case "0":
				return false, nil
			}
		case string:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true", "1", "t", "yes", "y", "on":
				return true, nil
			case "false", "0", "f", "no", "n", "off":
				return false, nil
			}
		}
		return nil, bad("a boolean")
	case t.IsInteger():
		var s string
		switch v := v.(type) {
		case json.Number:
			s = v.String()
		case string:
			s = strings.TrimSpace(v)
		case bool:
			if v {
				return int64(1), nil
			}
			return int64(0), nil
		default:
			return nil, bad("an integer")
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
		return nil, bad("an integer")
	case t.IsNumeric():
		var s string
		switch v := v.(type) {
		case json.Number:
			s = v.String()
		case string:
			s = strings.TrimSpace(v)
		default:
			return nil, bad("a number")
		}
		if !isNumber(s) {
			return nil, bad("a number")
		}
		if strings.ContainsAny(s, "eE") || t == dialects.TypeFloat || t == dialects.TypeDouble {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, bad("a number in range")
			}
			return f, nil
		}
		return filter.Decimal(strings.TrimPrefix(s, "+")), nil
	case t.IsTemporal():
		s, ok := v.(string)
		if !ok {
			return nil, bad("a date or time as a string")
		}
		out, err := temporal(q.kind, t, s)
		if err != nil {
			return nil, bad(err.Error())
		}
		return out, nil
	case t == dialects.TypeBinary:
		s, ok := v.(string)
		if !ok {
			return nil, bad("base64 text")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, bad("base64 text")
		}
		return b, nil
	case t == dialects.TypeJSON || t == dialects.TypeJSONB:
		if s, ok := v.(string); ok && json.Valid([]byte(s)) {
			return s, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, bad("JSON")
		}
		return string(b), nil
	}
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return nil, bad("text without NUL characters")
		}
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, bad("a scalar value")
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
	switch t {
	case dialects.TypeDate:
		if tm, ok := parse(dateLayouts); ok {
			return tm.Format("2006-01-02"), nil
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
			return tm.Format("15:04:05") + frac(tm), nil
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
		return tm.Format("2006-01-02 15:04:05") + frac(tm), nil
	}
	return "", fmt.Errorf("a date and time such as 2024-01-31 13:45:00")
}
