package soap_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/soap"
)

// document generates a service's document, checks it with kin-openapi
// (after a JSON round trip, as the api_docs service serves it) and
// returns it.
func document(t *testing.T, b *soap.Backend) *openapi3.T {
	t.Helper()
	doc, err := b.OpenAPI(t.Context())
	if err != nil {
		t.Fatalf("OpenAPI: %v", err)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := loaded.Validate(t.Context()); err != nil {
		t.Fatalf("invalid document: %v\n%s", err, data)
	}
	return loaded
}

func TestOpenAPI(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl"}, soap.Settings{})
	doc := document(t, b)
	for _, p := range []string{"/", "/add", "/divide", "/echoperson", "/slow"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("path %s missing; have %v", p, doc.Paths.Keys())
		}
	}
	add := doc.Paths.Find("/add").Post
	req := add.RequestBody.Value.Content.Get("application/json").Schema.Value
	if a := req.Properties["a"].Value; !a.Type.Is("integer") || a.Format != "int32" {
		t.Errorf("Add.a: %+v", a)
	}
	if strings.Join(req.Required, ",") != "a,b" {
		t.Errorf("Add required %v", req.Required)
	}
	res := add.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	if r := res.Properties["AddResult"]; r == nil || !r.Value.Type.Is("integer") {
		t.Errorf("AddResult: %+v", res.Properties)
	}
	if len(doc.Paths.Find("/add").Get.Parameters) != 2 {
		t.Errorf("GET /add takes a and b in the query")
	}
	person := doc.Components.Schemas["soap.Person"]
	if person == nil {
		t.Fatalf("no soap.Person component: %v", doc.Components.Schemas)
	}
	props := person.Value.Properties
	if !props["friends"].Value.Type.Is("array") || !props["score"].Value.Type.Is("number") ||
		!props["active"].Value.Type.Is("boolean") || !props["nickname"].Value.Nullable || props["name"] == nil {
		t.Errorf("Person properties: %+v", props)
	}

	rpc := document(t, backend(t, map[string]any{"wsdl": srv.URL + "/rpc.wsdl"}, soap.Settings{}))
	res = rpc.Paths.Find("/multiply").Post.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	if r := res.Properties["multiplyResult"]; r == nil || r.Value.Format != "double" {
		t.Errorf("multiply result: %+v", res.Properties)
	}
}

// TestRealWSDL loads a public project's WSDL (testdata/usda-awdb.wsdl, see
// its header for the origin) from storage, lists and documents it.
func TestRealWSDL(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "storage", "wsdl")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/usda-awdb.wsdl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "awdb.wsdl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	b := backend(t, map[string]any{"wsdl": "awdb.wsdl"}, soap.Settings{DataDir: dir, Name: "awdb"})
	got := call(t, b, "GET", "", "")
	var list struct {
		Resource []struct{ Name string } `json:"resource"`
	}
	if err := json.Unmarshal([]byte(got.body), &list); err != nil || got.status != 200 {
		t.Fatalf("list: %d %s", got.status, got.body)
	}
	if len(list.Resource) != 35 || list.Resource[0].Name == "" {
		t.Errorf("%d operations: %v", len(list.Resource), list.Resource)
	}
	doc := document(t, b)
	op := doc.Paths.Find("/getdata")
	if op == nil || op.Post == nil {
		t.Fatalf("no /getdata: %v", doc.Paths.Keys())
	}
	props := op.Post.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties
	if props["stationTriplets"] == nil || !props["stationTriplets"].Value.Type.Is("array") || props["beginDate"] == nil {
		t.Errorf("getData request: %v", keys(props))
	}
}

func keys(m openapi3.Schemas) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
