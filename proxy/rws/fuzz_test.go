package rws

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// FuzzParseConfig: any input either fails with an error or yields a config
// that New accepts; it never panics.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"base_url":"https://x.example/v1?a=1"}`,
		`{"base_url":"http://x","headers":[{"name":"X-A","value":"{user.email}","action":31}],"parameters":{"p":1}}`,
		`{"base_url":"http://x","headers":{"A":"{urlencode(trim(tenant))}"},"cache_enabled":"1","cache_ttl":"60","timeout":0}`,
		`{"base_url":"http://x","parameters":[{"name":"_","exclude":true,"outbound":false,"cache_key":false,"action":["GET"]}]}`,
		`{"base_url":5}`, `[]`, `null`, `{"headers":[null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(json.RawMessage(data))
		if err != nil {
			return
		}
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("ParseConfig accepted %s but New refused: %v", data, err)
		}
		p.Close()
	})
}

// FuzzSubstitute: substitution never panics, and a value without lookup
// tokens comes back unchanged.
func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{"{user.email}", "a{b}c", "{urlencode(trim(x))}", "{((}", "{a)}", "{}", "{x|y}", `{"json":1}`} {
		f.Add(s)
	}
	values := map[string]string{"user.email": "a@b.c", "x": " y ", "b": "B"}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := substitute(s, values)
		if len(caller.FindLookups(s)) == 0 && (!ok || out != s) {
			t.Fatalf("substitute(%q) = %q, %v; want it unchanged", s, out, ok)
		}
		_ = checkLookups(s)
	})
}

// FuzzResourcePath: no accepted path has a "." or ".." segment once
// decoded, whatever the encoding.
func FuzzResourcePath(f *testing.F) {
	for _, s := range []string{"a/b", "a/../b", "%2e%2e/x", "..%2f..%2fx", "a%5c..%5cb", "./a", "a//b/", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.Path = "/" + s
		r.URL.RawPath = ""
		if u, err := url.Parse("/" + s); err == nil {
			r.URL = u
		}
		rest, err := resourcePath(r)
		if err != nil {
			return
		}
		dec, err := url.PathUnescape(rest)
		if err != nil {
			t.Fatalf("accepted an invalid escape %q", rest)
		}
		for _, part := range strings.FieldsFunc(dec, func(c rune) bool { return c == '/' || c == '\\' }) {
			if part == "." || part == ".." {
				t.Fatalf("accepted %q (decoded %q)", rest, dec)
			}
		}
	})
}

// FuzzPathHelpers: the allocation-free path helpers agree with the
// parsing they stand for.
func FuzzPathHelpers(f *testing.F) {
	for _, s := range []string{"/api/v2/svc/a/b?x=1", "/api/v2/svc", "/a%2Fb/c", "*", "http://h/p", "/a b", "/é", "/a?\x01", "//x", "/a/./b", `a\..\b`, "/api/v2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := requestPath(s)
		want, wantOK := "", false
		if s != "" {
			if u, err := url.ParseRequestURI(s); err == nil {
				want, wantOK = u.EscapedPath(), true
			}
		}
		if got != want || ok != wantOK {
			t.Fatalf("requestPath(%q) = %q, %v; ParseRequestURI gives %q, %v", s, got, ok, want, wantOK)
		}

		seg, rest, ok := serviceSegment(s)
		segs := strings.Split(s, "/")
		if ok != (len(segs) >= 4) || ok && (seg != segs[3] || rest != strings.Join(segs[4:], "/")) {
			t.Fatalf("serviceSegment(%q) = %q, %q, %v", s, seg, rest, ok)
		}

		dot := false
		for _, part := range strings.FieldsFunc(s, func(c rune) bool { return c == '/' || c == '\\' }) {
			dot = dot || part == "." || part == ".."
		}
		if hasDotPart(s) != dot {
			t.Fatalf("hasDotPart(%q) = %v", s, !dot)
		}
	})
}
