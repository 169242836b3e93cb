package rws

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const minimalDoc = `{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"/ping":{"get":{"responses":{"200":{"description":"pong"}}}}}}`

func TestParseDoc(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		paths   []string // nil: no document
		wantErr string
	}{
		{name: "no key", config: `{"base_url":"http://x"}`},
		{name: "null", config: `{"base_url":"http://x","openapi":null}`},
		{name: "object", config: `{"openapi":` + minimalDoc + `}`, paths: []string{"/ping"}},
		{name: "JSON text", config: `{"openapi":` + strconvQuote(minimalDoc) + `}`, paths: []string{"/ping"}},
		{name: "YAML text", config: `{"openapi":"openapi: 3.0.0\ninfo: {title: Y, version: '1'}\npaths:\n  /a/{id}:\n    get:\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n"}`, paths: []string{"/a/{id}"}},
		{name: "swagger 2", config: `{"openapi":{"swagger":"2.0","info":{"title":"T","version":"1"},"paths":{}}}`, wantErr: "Swagger 2.0"},
		{name: "3.1", config: `{"openapi":{"openapi":"3.1.0","info":{"title":"T","version":"1"},"paths":{}}}`, wantErr: "3.0.x"},
		{name: "number", config: `{"openapi":7}`, wantErr: "must be an OpenAPI 3.0 document"},
		{name: "text that is no object", config: `{"openapi":"- a\n- b"}`, wantErr: "must be an object"},
		{name: "external reference", config: `{"openapi":{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"$ref":"https://example.com/r.json"}}}}}}}`, wantErr: "openapi"},
		{name: "file reference", config: `{"openapi":{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"$ref":"/etc/passwd"}}}}}}}`, wantErr: "openapi"},
		{name: "path without slash", config: `{"openapi":{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"a":{}}}}`, wantErr: "openapi"},
		{name: "invalid parameter", config: `{"openapi":{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"/a":{"get":{"parameters":[{"name":"p","in":"nowhere"}],"responses":{"200":{"description":"x"}}}}}}}`, wantErr: "not valid"},
		{name: "alias bomb", config: `{"openapi":` + strconvQuote(aliasBomb()) + `}`, wantErr: "aliasing"},
		{name: "too large", config: `{"openapi":"` + strings.Repeat("x", maxDocBytes) + `"}`, wantErr: "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := ParseDoc(json.RawMessage(tc.config))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.paths == nil {
				if doc != nil {
					t.Fatalf("doc = %v, want none", doc)
				}
				return
			}
			if diff := cmp.Diff(tc.paths, doc.Paths.Keys()); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			if doc.Components.SecuritySchemes["api_key"] == nil || doc.Components.Schemas["Error"] == nil {
				t.Errorf("the platform's shared components are missing")
			}
		})
	}
}

func TestParseDocAdaptsTheRemoteDocument(t *testing.T) {
	cfg := `{"openapi":{"openapi":"3.0.3","info":{"title":"T","version":"1"},
		"servers":[{"url":"https://internal.example/v1"}],
		"security":[{"k":[]}],
		"paths":{"/a":{"get":{"security":[{"k":[]}],"responses":{"404":{"description":"no","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Error"}}}}}}}},
		"components":{"schemas":{"Error":{"type":"object"},"Error_upstream":{"type":"string"}},
			"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"X-Key"}}}}}`
	doc, err := ParseDoc(json.RawMessage(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 0 {
		t.Errorf("servers kept: %v", doc.Servers)
	}
	if doc.Components.SecuritySchemes["k"] != nil {
		t.Errorf("the remote security scheme is kept")
	}
	op := doc.Paths.Value("/a").Get
	if op.Security != nil {
		t.Errorf("operation security kept: %v", op.Security)
	}
	ref := op.Responses.Value("404").Value.Content["application/json"].Schema.Ref
	if ref != "#/components/schemas/Error_upstream_" {
		t.Errorf("the remote Error is referred to as %q", ref)
	}
	if doc.Components.Schemas["Error_upstream"] == nil || doc.Components.Schemas["Error_upstream_"] == nil {
		t.Errorf("schemas = %v", doc.Components.Schemas)
	}
}

func TestDocumentedTypeServesItsDocument(t *testing.T) {
	doc, err := ParseDoc(json.RawMessage(`{"openapi":` + minimalDoc + `}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for name, d := range map[string]*documented{"configured": {Proxy: p, doc: doc}, "generic": {Proxy: p}} {
		t.Run(name, func(t *testing.T) {
			got, err := d.OpenAPI(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(got)
			if !json.Valid(raw) || got.Paths.Len() == 0 {
				t.Errorf("document = %s", raw)
			}
		})
	}
}

func FuzzParseDoc(f *testing.F) {
	f.Add(`{"openapi":` + minimalDoc + `}`)
	f.Add(`{"openapi":"openapi: 3.0.0\ninfo: {title: Y, version: '1'}\npaths: {}\n"}`)
	f.Add(`{"openapi":{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{},"components":{"schemas":{"Error":{"$ref":"#/components/schemas/Error"}}}}}`)
	f.Add(`{"openapi":"&a [*a, *a]"}`)
	f.Fuzz(func(t *testing.T, config string) {
		doc, err := ParseDoc(json.RawMessage(config))
		if err != nil || doc == nil {
			return
		}
		// Whatever it accepts can be encoded and names the platform's
		// security.
		if _, err := json.Marshal(doc); err != nil {
			t.Fatalf("accepted document does not encode: %v", err)
		}
		if doc.Components == nil || doc.Components.SecuritySchemes["api_key"] == nil {
			t.Fatalf("accepted document lacks the platform's security")
		}
	})
}

// aliasBomb is YAML whose aliases expand to 9^8 strings.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n")
		prev = n
	}
	return b.String()
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
