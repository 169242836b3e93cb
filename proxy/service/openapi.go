package service

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Documenter is implemented by backends that describe their API as an
// OpenAPI 3 document (GET /api/v2/api_docs/{service} and
// /api/v2/{service}/_spec). Backends that do not implement it are
// documented with an empty paths object: no routable endpoints.
type Documenter interface {
	// OpenAPI returns the document of the service's whole API as an
	// administrator sees it, built on [NewDocument]: paths are relative to
	// the service root ("/_table/contact"), components name the shared
	// error envelope and responses by the names below. The api_docs
	// service adds the servers, keeps only what the caller's role reaches
	// and validates the result; a backend never filters by caller.
	OpenAPI(ctx context.Context) (*openapi3.T, error)
}

// AccessChecker answers, for the caller in a request's context, the
// questions of role-based access that API documents need. The proxy root
// implements it over the policy in force and passes it in [Deps.Access].
type AccessChecker interface {
	// Allowed reports whether the caller may call verb on component of
	// service. component is a resource path below the service ("" for the
	// root) and may be a path template ("_table/{table_name}"), which is
	// allowed when some path of that shape is.
	Allowed(ctx context.Context, service, component, verb string) bool
	// Reaches reports whether the caller may call service with some verb
	// on some component.
	Reaches(ctx context.Context, service string) bool
	// Grant decides whether the caller may call verb on component of
	// service as the RBAC stage would, and returns the grant that applies
	// (nil: unrestricted) or the refusal (an *apierr.Error, 403 or 401).
	// Backends ask it for writes beyond the request's own target.
	Grant(ctx context.Context, service, component, verb string) (*caller.Grant, error)
}

// OpenAPIVersion is the OpenAPI version of every generated document.
const OpenAPIVersion = "3.0.3"

// Names of the components every document shares. [NewDocument] defines
// them; the combined document keeps them once, unprefixed.
const (
	// SchemaError is the error envelope
	// {"error":{"code","message","context","status_code"}}.
	SchemaError = "Error"
	// SchemaResourceList is {"resource":[{"name":…}]}, what a service root
	// or a list of names answers.
	SchemaResourceList = "ResourceList"
	// SchemaSuccess is {"success":true}.
	SchemaSuccess = "Success"
	// SecurityAPIKey is the X-Platform-API-Key header.
	SecurityAPIKey = "api_key"
	// SecuritySessionToken is the X-Platform-Session-Token header.
	SecuritySessionToken = "session_token"
)

// errorResponses names the shared error responses by status; status 0 is
// the "default" response.
var errorResponses = map[int]struct{ name, desc string }{
	http.StatusBadRequest:            {"BadRequest", "The request is malformed: a missing or invalid field, parameter or filter."},
	http.StatusUnauthorized:          {"Unauthorized", "No valid API key or session token was sent."},
	http.StatusForbidden:             {"Forbidden", "The caller's role does not allow this call."},
	http.StatusNotFound:              {"NotFound", "The resource or record does not exist."},
	http.StatusConflict:              {"Conflict", "The request conflicts with the current state (a duplicate key, a changed schema)."},
	http.StatusTooManyRequests:       {"TooManyRequests", "A rate limit is exceeded; Retry-After says when to try again."},
	http.StatusServiceUnavailable:    {"ServiceUnavailable", "The service or its backing system cannot be reached now; try again later."},
	http.StatusRequestEntityTooLarge: {"PayloadTooLarge", "The request body is over the size limit."},
	0:                                {"Error", "Unexpected error, in the error envelope."},
}

// SharedComponent reports whether name (a key of components/schemas,
// responses or securitySchemes) is one of the shared components that
// every document defines alike.
func SharedComponent(name string) bool {
	switch name {
	case SchemaError, SchemaResourceList, SchemaSuccess, SecurityAPIKey, SecuritySessionToken:
		return true
	}
	for _, r := range errorResponses {
		if r.name == name {
			return true
		}
	}
	return false
}

// NewDocument starts a service's document: OpenAPI 3.0.3, an empty paths
// object, security by API key (optionally with a session token) and the
// shared components. description says what the service type offers; the
// api_docs service sets the title and version from the service record
// and puts the service's own description first.
func NewDocument(description string) *openapi3.T {
	doc := &openapi3.T{
		OpenAPI: OpenAPIVersion,
		Info:    &openapi3.Info{Title: "Portcullis service", Description: description, Version: "1"},
		Paths:   openapi3.NewPaths(),
		Security: openapi3.SecurityRequirements{
			{SecurityAPIKey: []string{}, SecuritySessionToken: []string{}},
			{SecurityAPIKey: []string{}},
		},
	}
	AddSharedComponents(doc)
	return doc
}

// AddSharedComponents defines the shared components in doc (the error
// envelope, the error responses, the resource list and success schemas,
// the security schemes), replacing any of the same names.
func AddSharedComponents(doc *openapi3.T) {
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	c := doc.Components
	if c.Schemas == nil {
		c.Schemas = openapi3.Schemas{}
	}
	if c.Responses == nil {
		c.Responses = openapi3.ResponseBodies{}
	}
	if c.SecuritySchemes == nil {
		c.SecuritySchemes = openapi3.SecuritySchemes{}
	}
	inner := openapi3.NewObjectSchema().
		WithProperty("code", Describe(openapi3.NewIntegerSchema(), "The error code: the HTTP status, or 1000 for a failed batch.")).
		WithProperty("message", Describe(openapi3.NewStringSchema(), "What went wrong, for people.")).
		WithProperty("context", &openapi3.Schema{Nullable: true, Description: "Structured detail: failed fields, batch errors ({errors:[{index,message}], resource}), or null."}).
		WithProperty("status_code", Describe(openapi3.NewIntegerSchema(), "The HTTP status."))
	inner.Required = []string{"code", "message", "context", "status_code"}
	envelope := openapi3.NewObjectSchema().WithProperty("error", inner)
	envelope.Required = []string{"error"}
	envelope.Description = "The error envelope of every failed call."
	c.Schemas[SchemaError] = openapi3.NewSchemaRef("", envelope)

	item := openapi3.NewObjectSchema().WithProperty("name", openapi3.NewStringSchema())
	item.Required = []string{"name"}
	list := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(item))
	list.Required = []string{"resource"}
	list.Description = "A list of resource names."
	c.Schemas[SchemaResourceList] = openapi3.NewSchemaRef("", list)

	ok := openapi3.NewObjectSchema().WithProperty("success", openapi3.NewBoolSchema())
	ok.Required = []string{"success"}
	c.Schemas[SchemaSuccess] = openapi3.NewSchemaRef("", ok)

	for _, r := range errorResponses {
		c.Responses[r.name] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription(r.desc).WithJSONSchemaRef(SchemaRef(SchemaError))}
	}
	c.SecuritySchemes[SecurityAPIKey] = &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
		WithType("apiKey").WithIn("header").WithName("X-Platform-API-Key").
		WithDescription("The API key of an app; every call needs one.")}
	c.SecuritySchemes[SecuritySessionToken] = &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
		WithType("apiKey").WithIn("header").WithName("X-Platform-Session-Token").
		WithDescription("A session token from POST /api/v2/user/session or /api/v2/system/admin/session; it selects the user's role.")}
}

// Describe sets s's description and returns s.
func Describe(s *openapi3.Schema, description string) *openapi3.Schema {
	s.Description = description
	return s
}

// SchemaRef is a reference to the schema called name in
// components/schemas.
func SchemaRef(name string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}

// NewOperation returns an operation with its id, tags, summary and
// description and a "default" response in the error envelope. Add the
// success response with [AddResponse] and the errors it can answer with
// [AddErrors].
func NewOperation(id, tag, summary, description string) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = id
	if tag != "" {
		op.Tags = []string{tag}
	}
	op.Summary, op.Description = summary, description
	op.Responses = openapi3.NewResponses()
	op.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	return op
}

// AddResponse adds the response for status with a JSON body of schema
// (nil: no body).
func AddResponse(op *openapi3.Operation, status int, description string, schema *openapi3.SchemaRef) {
	r := openapi3.NewResponse().WithDescription(description)
	if schema != nil {
		r = r.WithJSONSchemaRef(schema)
	}
	op.Responses.Set(strconv.Itoa(status), &openapi3.ResponseRef{Value: r})
}

// AddErrors adds the shared error responses for the statuses given (400,
// 401, 403, 404, 409, 413, 429, 503).
func AddErrors(op *openapi3.Operation, statuses ...int) {
	for _, s := range statuses {
		r, ok := errorResponses[s]
		if !ok || s == 0 {
			panic("service: no shared error response for status " + strconv.Itoa(s))
		}
		op.Responses.Set(strconv.Itoa(s), &openapi3.ResponseRef{Ref: "#/components/responses/" + r.name})
	}
}

// CommonErrors are the statuses any call through the pipeline can answer:
// 400, 401, 403 and 429.
var CommonErrors = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests}

// JSONBody is a required or optional JSON request body of schema.
func JSONBody(description string, required bool, schema *openapi3.SchemaRef) *openapi3.RequestBodyRef {
	rb := openapi3.NewRequestBody().WithDescription(description).WithJSONSchemaRef(schema)
	rb.Required = required
	return &openapi3.RequestBodyRef{Value: rb}
}

// QueryParam is an optional query parameter.
func QueryParam(name, description string, schema *openapi3.Schema) *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Value: openapi3.NewQueryParameter(name).
		WithDescription(description).WithSchema(schema)}
}

// PathParam is a path parameter (always required).
func PathParam(name, description string, schema *openapi3.Schema) *openapi3.ParameterRef {
	if schema == nil {
		schema = openapi3.NewStringSchema()
	}
	return &openapi3.ParameterRef{Value: openapi3.NewPathParameter(name).
		WithDescription(description).WithSchema(schema)}
}

// AddOperation puts op under path (relative to the service root, starting
// with "/") for method.
func AddOperation(doc *openapi3.T, path, method string, op *openapi3.Operation) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	doc.AddOperation(path, strings.ToUpper(method), op)
}
