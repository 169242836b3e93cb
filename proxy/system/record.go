package system

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// member is one key of an object.
type member struct {
	Key   string
	Value any
}

// object is a JSON object that keeps its keys in the order they were set,
// so records read like their tables.
type object []member

// set replaces key's value or appends it.
func (o *object) set(key string, v any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, member{key, v})
}

// get returns key's value.
func (o object) get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// only returns the members named in keys, in that order; keys o lacks are
// skipped.
func (o object) only(keys []string) object {
	out := make(object, 0, len(keys))
	for _, k := range keys {
		if v, ok := o.get(k); ok {
			out = append(out, member{k, v})
		}
	}
	return out
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", m.Key, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes v without escaping HTML characters.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// fields is a decoded input record: its members as raw JSON.
type fields map[string]json.RawMessage

// has reports whether the record carries key.
func (f fields) has(key string) bool {
	_, ok := f[key]
	return ok
}

// isNull reports whether the record carries key with the value null.
func (f fields) isNull(key string) bool {
	raw, ok := f[key]
	return ok && isNullJSON(raw)
}

func isNullJSON(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// payload is a decoded request body: the records and the options a client
// may send beside them.
type payload struct {
	records []fields
	// single is true when the body held one bare object rather than a list.
	single bool
	// options are the top-level members other than "resource" of a wrapped
	// body (fields, related, rollback, continue…), which DreamFactory also
	// reads from the body.
	options map[string]string
}

// decodePayload reads a body that is {"resource":[…]}, a bare array, or a
// bare object (one record). An empty body is a 400 unless allowEmpty.
func decodePayload(data []byte, allowEmpty bool) (*payload, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		if allowEmpty {
			return &payload{}, nil
		}
		return nil, errNoRecords()
	}
	p := &payload{}
	switch trimmed[0] {
	case '[':
		var list []json.RawMessage
		if err := apierr.Unmarshal(trimmed, &list, false); err != nil {
			return nil, err
		}
		recs, err := decodeRecords(list)
		if err != nil {
			return nil, err
		}
		p.records = recs
	case '{':
		var obj map[string]json.RawMessage
		if err := apierr.Unmarshal(trimmed, &obj, false); err != nil {
			return nil, err
		}
		res, wrapped := obj["resource"]
		if !wrapped {
			p.records, p.single = []fields{fields(obj)}, true
			break
		}
		var list []json.RawMessage
		if err := json.Unmarshal(res, &list); err != nil {
			return nil, apierr.BadRequest("The 'resource' member must be an array of records.")
		}
		recs, err := decodeRecords(list)
		if err != nil {
			return nil, err
		}
		p.records = recs
		p.options = map[string]string{}
		for k, v := range obj {
			if k == "resource" {
				continue
			}
			if s, ok := scalarText(v); ok {
				p.options[k] = s
			}
		}
	default:
		return nil, apierr.InvalidJSON(fmt.Errorf("expected an object or an array"))
	}
	if len(p.records) == 0 && !allowEmpty {
		return nil, errNoRecords()
	}
	return p, nil
}

func decodeRecords(list []json.RawMessage) ([]fields, error) {
	out := make([]fields, 0, len(list))
	for i, raw := range list {
		var f map[string]json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil || f == nil {
			return nil, apierr.BadRequest("Record %d of the request is not a JSON object.", i)
		}
		out = append(out, fields(f))
	}
	return out, nil
}

// scalarText returns the text of a JSON string, number or boolean.
func scalarText(raw json.RawMessage) (string, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

func errNoRecords() *apierr.Error {
	return apierr.BadRequest("No record(s) detected in request. Please make sure record(s) are wrapped in a 'resource' tag. Example: {\"resource\":[{\"name\":\"value\"}]}")
}

// decodeValue stores raw into v (a settable field of a model), accepting
// what DreamFactory clients send: numbers or numeric strings for integers,
// true/false, 1/0 or their strings for booleans, and any scalar for a
// string. null sets the zero value (nil for pointers).
func decodeValue(raw json.RawMessage, v reflect.Value) error {
	if isNullJSON(raw) {
		v.Set(reflect.Zero(v.Type()))
		return nil
	}
	if v.Kind() == reflect.Pointer {
		n := reflect.New(v.Type().Elem())
		if err := decodeValue(raw, n.Elem()); err != nil {
			return err
		}
		v.Set(n)
		return nil
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return fmt.Errorf("is not valid JSON")
	}
	switch v.Kind() {
	case reflect.String:
		s, ok := scalarText(raw)
		if !ok {
			return fmt.Errorf("must be a string")
		}
		v.SetString(s)
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := toInt(x)
		if err != nil {
			return err
		}
		if v.OverflowInt(n) {
			return fmt.Errorf("is out of range")
		}
		v.SetInt(n)
		return nil
	case reflect.Bool:
		b, err := toBool(x)
		if err != nil {
			return err
		}
		v.SetBool(b)
		return nil
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		s, ok := x.(string)
		if !ok {
			return fmt.Errorf("must be a date and time")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return fmt.Errorf("must be a date and time such as 2024-01-31T13:45:00Z")
		}
		v.Set(reflect.ValueOf(t))
		return nil
	}
	return fmt.Errorf("cannot be set")
}

// toInt converts a decoded JSON value to an integer.
func toInt(x any) (int64, error) {
	switch t := x.(type) {
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n, nil
		}
		if f, err := t.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return 0, fmt.Errorf("must be an integer")
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("must be an integer")
		}
		return n, nil
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("must be an integer")
}

// toBool converts a decoded JSON value to a boolean.
func toBool(x any) (bool, error) {
	switch t := x.(type) {
	case bool:
		return t, nil
	case json.Number:
		switch t.String() {
		case "1":
			return true, nil
		case "0":
			return false, nil
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "1", "yes", "y", "on", "t":
			return true, nil
		case "false", "0", "no", "n", "off", "f", "":
			return false, nil
		}
	}
	return false, fmt.Errorf("must be true or false")
}

// boolParam reads a boolean query or body option: true, 1, yes or on.
func boolParam(s string) bool {
	b, err := toBool(s)
	return err == nil && b
}
