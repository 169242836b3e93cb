package sqldb

import (
	"encoding/json"
	"strings"
	"testing"
)

var rawSeeds = []string{
	`{"resource":[{"name":"a","price":12.07,"qty":7,"active":true,"off":false,"notes":null}]}`,
	` [ { "a" : 1 , "b" : "x" } ] `,
	"{\n\"resource\" :\t[{}]}",
	`[{"a":1,"a":"two"}]`,
	`{"resource":[{"a":"\u00e9\ud83d\ude00","b":"q\"uote\\","c":"\/"}]}`,
	"[{\"bad\":\"\xff\xfe\"}]",
	`[{"n":-0.5e+10,"m":1E3,"z":0}]`,
	`[{"a\u0062":1}]`, `[{"a\"b":1}]`, "{\"resource\":[{\"\x93\":null}]}",
	`{"resource":[{"a":{"b":1}}]}`, `{"resource":[{"a":[1]}]}`,
	`{"resource":[{"a":1}],"fields":"*"}`, `{"fields":"*","resource":[{"a":1}]}`,
	`{"resource":[{"a":1},{"a":2}]}`, `{"resource":{"a":1}}`, `{"resource":[]}`, `[]`, `{}`,
	`{"resourc\u0065":[{"a":1}]}`, `{"a":1}`, `[1]`, `"x"`, `null`,
}

// scalarOf is what a decoded value is as a scalar; ok is false for an
// object or array.
func scalarOf(v any) (scalar, bool) {
	switch v := v.(type) {
	case nil:
		return scalar{}, true
	case string:
		return scalar{kind: scalarString, s: v}, true
	case json.Number:
		return scalar{kind: scalarNumber, s: string(v)}, true
	case bool:
		return scalar{kind: scalarBool, b: v}, true
	}
	return scalar{}, false
}

// checkRaw fails when the record parseRawRecord reads from data differs
// from the one readBody decodes: each key's last member must be its
// decoded value.
func checkRaw(t *testing.T, data string) {
	t.Helper()
	if !json.Valid([]byte(data)) {
		return
	}
	rec := parseRawRecord(data)
	if rec == nil {
		return
	}
	var o options
	params := map[string]any{}
	if err := o.readBody(strings.NewReader(data), params, false); err != nil {
		t.Fatalf("%q: kept as a record but decoding fails: %v", data, err)
	}
	if len(o.records) != 1 || o.object != nil || len(params) != 0 {
		t.Fatalf("%q: kept as a record but decodes to %v %v %v", data, o.records, o.object, params)
	}
	m := o.records[0]
	last := map[string]scalar{}
	for _, f := range rec.fields {
		last[f.key] = f.val
	}
	if len(last) != len(m) {
		t.Fatalf("%q: keys %v, decoded %v", data, last, m)
	}
	for k, v := range m {
		want, ok := scalarOf(v)
		if !ok {
			t.Fatalf("%q: kept a record with %s = %v", data, k, v)
		}
		if got, ok := last[k]; !ok || got != want {
			t.Fatalf("%q: %s = %+v, decoded %+v", data, k, got, want)
		}
	}
}

func TestRawRecordMatchesDecoding(t *testing.T) {
	for _, s := range append(rawSeeds, bodySeeds...) {
		checkRaw(t, s)
	}
	for _, s := range []string{rawSeeds[0], rawSeeds[1], rawSeeds[2], rawSeeds[3], rawSeeds[4], rawSeeds[5], rawSeeds[6]} {
		if parseRawRecord(s) == nil {
			t.Errorf("%q is not kept as a record", s)
		}
	}
	for _, s := range []string{`[{"a\u0062":1}]`, `{"resource":[{"a":{"b":1}}]}`, `{"resource":[{"a":1}],"fields":"*"}`, `{"resource":[{"a":1},{"a":2}]}`, `{"resourc\u0065":[{"a":1}]}`} {
		if parseRawRecord(s) != nil {
			t.Errorf("%q is kept as a record", s)
		}
	}
}

func FuzzRawRecord(f *testing.F) {
	for _, s := range append(rawSeeds, bodySeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkRaw(t, data)
	})
}
