package sqldb

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// referenceBody is what readBody decoded before it streamed: the whole
// body read, then decoded at once.
func referenceBody(data []byte) (*options, map[string]any, error) {
	o, params := &options{}, map[string]any{}
	// Blank is JSON's blank (a vertical tab is malformed JSON, as the
	// streaming decoder says; the whole decoding used to call it empty).
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		return o, params, nil
	}
	o.hasBody = true
	var v any
	if err := apierr.Unmarshal(data, &v, false); err != nil {
		return nil, nil, err
	}
	set := func(list []any) error {
		if len(list) > maxBodyRecords {
			return apierr.BadRequest("A batch may hold at most %d records.", maxBodyRecords)
		}
		o.records = make([]record, 0, len(list))
		for i, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				return apierr.BadRequest("Record %d is not a JSON object.", i)
			}
			o.records = append(o.records, m)
		}
		return nil
	}
	switch v := v.(type) {
	case []any:
		return o, params, set(v)
	case map[string]any:
		res, wrapped := v["resource"]
		if !wrapped {
			o.object = v
			return o, params, nil
		}
		for k, val := range v {
			if k != "resource" {
				params[k] = val
			}
		}
		switch res := res.(type) {
		case []any:
			return o, params, set(res)
		case map[string]any:
			o.records = []record{res}
			return o, params, nil
		case nil:
			return o, params, nil
		}
		return nil, nil, apierr.BadRequest("The 'resource' member must be an array of records.")
	}
	return nil, nil, apierr.BadRequest("The request body must be a JSON object or an array of records.")
}

func streamed(data []byte, rawOK bool) (*options, map[string]any, error) {
	o, params := &options{}, map[string]any{}
	// One byte per read: every token boundary falls between reads.
	err := o.readBody(iotest.OneByteReader(bytes.NewReader(data)), params, rawOK)
	if err == nil && o.raw != nil {
		err = o.materialize()
	}
	return o, params, err
}

func statusOf(err error) int {
	if err == nil {
		return 0
	}
	return apierr.As(err).Status
}

// checkSame fails when the streamed decoding of data differs from the
// reference one: same records, object, options and error status.
func checkSame(t *testing.T, data []byte) {
	t.Helper()
	for _, rawOK := range []bool{false, true} {
		checkSameAs(t, data, rawOK)
	}
}

func checkSameAs(t *testing.T, data []byte, rawOK bool) {
	t.Helper()
	wo, wp, werr := referenceBody(data)
	go_, gp, gerr := streamed(data, rawOK)
	if statusOf(werr) != statusOf(gerr) {
		t.Fatalf("%q: error %v, want %v", data, gerr, werr)
	}
	if werr != nil {
		if werr.Error() != gerr.Error() && statusOf(werr) != http.StatusBadRequest {
			t.Fatalf("%q: error %q, want %q", data, gerr, werr)
		}
		return
	}
	if go_.hasBody != wo.hasBody || !reflect.DeepEqual(go_.records, wo.records) || !reflect.DeepEqual(go_.object, wo.object) || !reflect.DeepEqual(gp, wp) {
		t.Fatalf("%q:\n got %v %v %v %v\nwant %v %v %v %v", data, go_.hasBody, go_.records, go_.object, gp, wo.hasBody, wo.records, wo.object, wp)
	}
}

var bodySeeds = []string{
	``, `  `, `{}`, `[]`, `null`, `5`, `"x"`, `true`,
	`{"resource":[{"a":1},{"b":"x","c":[1,2,{"d":null}]}]}`,
	`{"resource":[{"a":1}],"fields":"*","continue":true,"related":["x"]}`,
	`{"fields":"a","resource":{"a":1.5e300}}`,
	`{"resource":null,"rollback":1}`,
	`{"resource":5}`, `{"resource":"x"}`, `{"resource":[1]}`, `{"resource":[{"a":1},2]}`,
	`[{"id":1},{"id":2}]`, `[{"id":1},"x"]`, `[[]]`,
	`{"a":1,"a":2}`, `{"resource":[{"a":1}],"resource":[{"b":2}]}`,
	`{"id":7,"name":"n"}`,
	`{"resource":[{"a":1}]} x`, `[] []`, `{"a":1`, `[{"a":1},`, `{"resource":[{"a":}]}`, `]`, `}`, `{"a" 1}`, `[1 2]`,
	`{"resource":[{"a":"\u00e9\ud83d\ude00"}]}`, "\ufeff{}",
}

func TestReadBodyMatchesWholeDecoding(t *testing.T) {
	for _, s := range bodySeeds {
		checkSame(t, []byte(s))
	}
	var big strings.Builder
	big.WriteString("[")
	for i := 0; i <= maxBodyRecords; i++ {
		if i > 0 {
			big.WriteString(",")
		}
		big.WriteString(`{"a":1}`)
	}
	big.WriteString("]")
	checkSame(t, []byte(big.String()))
}

// A body that fails while being read (a cap, a client gone) is that
// failure, not malformed JSON.
func TestReadBodyReadError(t *testing.T) {
	for _, rawOK := range []bool{false, true} {
		capped := http.MaxBytesReader(nil, nopCloser{strings.NewReader(`{"resource":[{"a":"` + strings.Repeat("x", 100) + `"}]}`)}, 20)
		err := (&options{}).readBody(capped, map[string]any{}, rawOK)
		if statusOf(err) != http.StatusRequestEntityTooLarge {
			t.Fatalf("capped body: %v (status %d), want 413", err, statusOf(err))
		}
		boom := errors.New("boom")
		err = (&options{}).readBody(iotest.ErrReader(boom), map[string]any{}, rawOK)
		if !errors.Is(err, boom) {
			t.Fatalf("read error: %v", err)
		}
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// FuzzReadBody checks the streamed decoding against the whole one on any
// body.
func FuzzReadBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSame(t, data)
	})
}

// TestRootListMatchesWriteList: the root list encoded once is the answer
// writeList gives, byte for byte and with the same headers, and a request
// with a query still goes through writeList.
func TestRootListMatchesWriteList(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    rootList
	}{{"sqlite", rootSQLite}, {"other", rootOther}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{"/", "/?as_list=true", "/?x=1"} {
				want, got := httptest.NewRecorder(), httptest.NewRecorder()
				_ = writeList(want, tc.l.names, httptest.NewRequest(http.MethodGet, target, nil))
				_ = tc.l.write(got, httptest.NewRequest(http.MethodGet, target, nil))
				if got.Code != want.Code || got.Body.String() != want.Body.String() ||
					got.Header().Get("Content-Type") != want.Header().Get("Content-Type") || len(got.Header()) != len(want.Header()) {
					t.Errorf("%s: got %d %v %q, want %d %v %q", target, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
				}
			}
		})
	}
}
