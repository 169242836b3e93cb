package contract

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

func TestShaperBody(t *testing.T) {
	orders := base()
	customer := &Table{Name: "customer", Fields: []Field{{Name: "id"}, {Name: "name"}}}
	s := &Shaper{Lookup: func(name string) *Table {
		if name == "customer" {
			return customer
		}
		return nil
	}}
	tests := []struct {
		name, in, want string
		changed        bool
	}{
		{"wrapped list with meta",
			`{"resource":[{"id":1,"title":"a","secret":1},{"ID":2,"extra":true}],"meta":{"count":2}}`,
			`{"resource":[{"id":1,"title":"a"},{"ID":2}],"meta":{"count":2}}`, true},
		{"bare record", `{"id":1,"new_col":"x"}`, `{"id":1}`, true},
		{"bare list", `[{"id":1,"new_col":"x"}]`, `[{"id":1}]`, true},
		{"nothing to drop", `{"resource":[{"id":1,"title":"a"}]}`, `{"resource":[{"id":1,"title":"a"}]}`, false},
		{"count only", `{"meta":{"count":3}}`, `{"meta":{"count":3}}`, false},
		{"related records shaped by their contract",
			`{"id":1,"customer_by_customer_id":{"id":5,"name":"n","vip":true}}`,
			`{"id":1,"customer_by_customer_id":{"id":5,"name":"n"}}`, true},
		{"related list one level deep",
			`{"id":1,"customer_by_customer_id":[{"id":5,"vip":true,"orders_by_customer_id":[]}]}`,
			`{"id":1,"customer_by_customer_id":[{"id":5}]}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if err := json.Unmarshal([]byte(tc.in), &body); err != nil {
				t.Fatal(err)
			}
			if got := s.Body(body, orders); got != tc.changed {
				t.Errorf("changed = %v", got)
			}
			var want any
			json.Unmarshal([]byte(tc.want), &want)
			if diff := cmp.Diff(want, body); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAPISchemaValidates(t *testing.T) {
	tb := base()
	tb.Fields = append(tb.Fields,
		Field{Name: "at", Type: TypeDatetime, Default: "CURRENT_TIMESTAMP"},
		Field{Name: "flag", Type: TypeBoolean, Default: true},
		Field{Name: "n", Type: TypeInteger, Default: json.Number("3"), Required: false},
		Field{Name: "tags", Type: TypeArray, ElementType: strp("integer"), AllowNull: true},
		Field{Name: "meta", Type: TypeJSON, AllowNull: true},
		Field{Name: "calc", Type: TypeNumber, ReadOnly: true, Required: true},
	)
	s := tb.OpenAPISchema()
	if err := s.Validate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"state"}, s.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	title := s.Properties["title"].Value
	if title.MaxLength == nil || *title.MaxLength != 64 || !title.Nullable || title.Default != "x" {
		t.Errorf("title: %+v", title)
	}
	if at := s.Properties["at"].Value; at.Format != "date-time" || at.Default != nil {
		t.Errorf("at: %+v", at)
	}
	if id := s.Properties["id"].Value; !id.ReadOnly || id.Type.Permits(openapi3.TypeInteger) == false {
		t.Errorf("id: %+v", id)
	}
	if st := s.Properties["state"].Value; len(st.Enum) != 2 {
		t.Errorf("state: %+v", st)
	}
	if n := s.Properties["n"].Value; n.Default != int64(3) {
		t.Errorf("n default %#v", n.Default)
	}
	doc := &openapi3.T{OpenAPI: "3.0.3", Info: &openapi3.Info{Title: "t", Version: "1"}, Paths: openapi3.NewPaths(),
		Components: &openapi3.Components{Schemas: openapi3.Schemas{SchemaName("my table"): openapi3.NewSchemaRef("", s)}}}
	data, _ := json.Marshal(doc)
	loaded, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Validate(t.Context()); err != nil {
		t.Fatalf("document: %v", err)
	}
}
