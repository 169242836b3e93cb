package apidocs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TypeName is the service type's name (DreamFactory's "swagger").
const TypeName = "swagger"

// Type is the `swagger` service type, the built-in api_docs service.
type Type struct{}

var _ service.Type = Type{}

// Info describes the type (a singleton of group API Doc).
func (Type) Info() service.Info {
	for _, info := range service.Generic {
		if info.Name == TypeName {
			return info
		}
	}
	return service.Info{Name: TypeName, Label: "API Docs", Group: service.GroupAPIDoc, Singleton: true}
}

// ValidateConfig accepts an empty configuration or a JSON object: the
// service has no settings.
func (Type) ValidateConfig(config json.RawMessage) error {
	s := strings.TrimSpace(string(config))
	if s == "" || s == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(config, &m); err != nil || m == nil {
		return errors.New("config must be a JSON object")
	}
	return nil
}

// New builds the backend; it needs the registry whose services it
// documents.
func (Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	if deps.Registry == nil {
		return nil, errors.New("the api_docs service needs the service registry")
	}
	return &Backend{name: svc.Name, builder: &Builder{Registry: deps.Registry, Access: deps.Access,
		Version: deps.Version, Logger: deps.Logger}}, nil
}

// Backend serves GET /api/v2/{api_docs}/ (the combined document) and
// GET /api/v2/{api_docs}/{service} (one service's document).
type Backend struct {
	name    string
	builder *Builder
}

var (
	_ service.Backend    = (*Backend)(nil)
	_ service.Documenter = (*Backend)(nil)
)

// ServeHTTP routes a request below the service.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := ""
	if t := service.TargetFrom(r.Context()); t != nil {
		res = t.Resource
	} else {
		res = strings.Trim(r.URL.Path, "/")
	}
	switch segs := strings.Split(res, "/"); {
	case res == "":
		b.builder.ServeCombined(w, r)
	case len(segs) == 1:
		b.builder.ServeService(w, r, segs[0])
	default:
		apierr.Write(w, apierr.NotFound("Resource '%s' not found for service '%s'.", res, b.name))
	}
}

// Close releases nothing.
func (b *Backend) Close() error { return nil }

// OpenAPI documents the service's two resources.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) {
	doc := service.NewDocument("OpenAPI 3 documents of the services the caller's role reaches.")
	docSchema := openapi3.NewObjectSchema().WithAnyAdditionalProperties()
	docSchema.Required = []string{"openapi", "info", "paths"}
	docSchema.Description = "An OpenAPI 3.0 document."
	doc.Components.Schemas["OpenAPIDocument"] = openapi3.NewSchemaRef("", docSchema)

	all := service.NewOperation("getCombinedDocument", "api_docs", "The combined document of every service",
		"One OpenAPI 3 document with the paths of every active service the caller's role reaches, below /{service}; components other than the shared ones are named {service}.{component}.")
	service.AddResponse(all, http.StatusOK, "The combined document.", service.SchemaRef("OpenAPIDocument"))
	service.AddErrors(all, service.CommonErrors...)
	service.AddOperation(doc, "/", http.MethodGet, all)

	one := service.NewOperation("getServiceDocument", "api_docs", "The document of one service",
		"The OpenAPI 3 document of a service, showing only the paths and verbs the caller's role reaches; also at /api/v2/{service}/_spec. 403 when the role grants nothing on the service.")
	one.AddParameter(service.PathParam("service_name", "The service's name.", nil).Value)
	service.AddResponse(one, http.StatusOK, "The service's document.", service.SchemaRef("OpenAPIDocument"))
	service.AddErrors(one, append(service.CommonErrors, http.StatusNotFound)...)
	service.AddOperation(doc, "/{service_name}", http.MethodGet, one)
	return doc, nil
}
