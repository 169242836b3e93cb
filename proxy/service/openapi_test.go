package service_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

func TestNewDocumentValidates(t *testing.T) {
	tests := []struct {
		name  string
		build func(doc *openapi3.T)
	}{
		{name: "empty paths", build: func(*openapi3.T) {}},
		{name: "an operation with every shared error", build: func(doc *openapi3.T) {
			op := service.NewOperation("getThing", "things", "Read a thing", "One thing.")
			op.AddParameter(service.PathParam("id", "The thing's id.", openapi3.NewInt64Schema()).Value)
			op.AddParameter(service.QueryParam("fields", "Fields.", openapi3.NewStringSchema()).Value)
			service.AddResponse(op, http.StatusOK, "The thing.", service.SchemaRef(service.SchemaResourceList))
			service.AddErrors(op, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict,
				http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
			service.AddOperation(doc, "things/{id}", http.MethodGet, op)
			post := service.NewOperation("createThing", "things", "Create things", "")
			post.RequestBody = service.JSONBody("Things.", true, service.SchemaRef(service.SchemaSuccess))
			service.AddResponse(post, http.StatusCreated, "Created.", nil)
			service.AddOperation(doc, "/things", http.MethodPost, post)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := service.NewDocument("A test service.")
			tc.build(doc)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := openapi3.NewLoader().LoadFromData(data)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if err := loaded.Validate(t.Context()); err != nil {
				t.Fatalf("validate: %v\n%s", err, data)
			}
			env := loaded.Components.Schemas[service.SchemaError].Value.Properties["error"].Value
			for _, f := range []string{"code", "message", "context", "status_code"} {
				if env.Properties[f] == nil {
					t.Errorf("error envelope lacks %s", f)
				}
			}
			if !service.SharedComponent("NotFound") || service.SharedComponent("contact") {
				t.Errorf("SharedComponent is wrong")
			}
		})
	}
}

func TestAddErrorsRefusesAnUnknownStatus(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AddErrors(418) did not panic")
		}
	}()
	service.AddErrors(service.NewOperation("x", "", "", ""), http.StatusTeapot)
}
