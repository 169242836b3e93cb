package rws

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
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

// FuzzResourcePathShapes: resourcePath gives what the plain rule gives
// (the whole path's match tried first, every segment decoded and checked
// on its own), with the router's target, a target that is the whole path,
// one that matches neither and none.
func FuzzResourcePathShapes(f *testing.F) {
	for _, s := range []string{"orders/101", "a%2Fb/c/", "x/../y", "%2e/a", "a\\..\\b", "api/v2/svc/x", "", "/", "svc", "%zz/a"} {
		f.Add(s, "svc", 0)
		f.Add(s, "api", 1)
		f.Add(s, "s%20c", 2)
		f.Add(s, "svc", 3)
	}
	f.Fuzz(func(t *testing.T, s, svc string, shape int) {
		ep := "/api/v2/" + svc + "/" + s
		u, err := url.Parse(ep)
		if err != nil || u.EscapedPath() != ep {
			return
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.URL = u
		ctx := r.Context()
		name, _ := url.PathUnescape(svc)
		res, _ := url.PathUnescape(s)
		switch shape % 4 {
		case 0: // the router's
			ctx = service.WithTarget(ctx, &service.Target{Service: &store.Service{Name: name}, Resource: strings.Trim(res, "/")})
		case 1: // the whole path (rbac.FixedService)
			ctx = service.WithTarget(ctx, &service.Target{Service: &store.Service{Name: name}, Resource: strings.Trim(u.Path, "/")})
		case 2: // neither: the target's resource is escaped again
			ctx = service.WithTarget(ctx, &service.Target{Service: &store.Service{Name: name + "x"}, Resource: strings.Trim(res, "/")})
		}
		r = r.WithContext(ctx)
		got, gotErr := resourcePath(r)
		want, wantErr := resourcePathReference(r)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("resourcePath(%q) = %q, %v; the plain rule gives %q, %v", ep, got, gotErr, want, wantErr)
		}
	})
}

// resourcePathReference is resourcePath as first written, without its
// shortcuts.
func resourcePathReference(r *http.Request) (string, error) {
	ep := r.URL.EscapedPath()
	rest := strings.TrimPrefix(ep, "/")
	if t := service.TargetFrom(r.Context()); t != nil {
		matched := false
		if dec, err := url.PathUnescape(rest); err == nil && strings.Trim(dec, "/") == t.Resource {
			matched = true
		} else if seg, cand, ok := serviceSegment(ep); ok {
			svc, err1 := url.PathUnescape(seg)
			dec, err2 := url.PathUnescape(cand)
			if err1 == nil && err2 == nil && t.Service != nil && svc == t.Service.Name && strings.Trim(dec, "/") == t.Resource {
				rest, matched = cand, true
			}
		}
		if !matched {
			parts := t.Segments()
			for i, s := range parts {
				parts[i] = url.PathEscape(s)
			}
			rest = strings.Join(parts, "/")
		}
	}
	rest = strings.TrimLeft(rest, "/")
	for seg := range strings.SplitSeq(rest, "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return "", err
		}
		if hasDotPart(dec) {
			return "", errors.New("dot segment")
		}
	}
	return rest, nil
}
