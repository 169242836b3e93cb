package saml

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Names of the document's own schemas.
const (
	schemaSession  = "SAMLSession"
	schemaRedirect = "SAMLRedirect"
)

// OpenAPI implements service.Documenter.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(), nil }

// Document is the OpenAPI document of a saml service: metadata, sso and
// acs.
func Document() *openapi3.T {
	doc := service.NewDocument("SAML 2.0 sign-in. Register the SP metadata (GET /metadata) at the identity provider; " +
		"send the browser to /sso (or /api/v2/user/session?service=<name>), which redirects to the identity provider; " +
		"the identity provider posts its answer to /acs, which verifies it (a signed response or assertion is required), " +
		"creates or links the user with the service's default role and answers the session, or redirects to the app with the session token.")
	str := openapi3.NewStringSchema
	s := doc.Components.Schemas
	session := openapi3.NewObjectSchema().
		WithProperty("session_token", service.Describe(str(), "Send as X-Platform-Session-Token.")).
		WithProperty("session_id", str()).
		WithProperty("id", openapi3.NewInt64Schema()).
		WithProperty("name", str()).
		WithProperty("first_name", str()).
		WithProperty("last_name", str()).
		WithProperty("email", service.Describe(str(), "<local>+<service>@<domain> of the user's address.")).
		WithProperty("role", str()).
		WithProperty("token_expiry_date", service.Describe(str(), "2006-01-02 15:04:05, UTC."))
	session.Required = []string{"session_token", "id", "email"}
	session.Description = "The session, as a password sign-in answers it."
	s[schemaSession] = openapi3.NewSchemaRef("", session)
	inner := openapi3.NewObjectSchema().
		WithProperty("redirect", openapi3.NewBoolSchema()).
		WithProperty("url", service.Describe(str(), "The identity provider's sign-on URL with the SAMLRequest."))
	s[schemaRedirect] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().WithProperty("response", inner))
	badGateway := &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("The identity provider's metadata (idp_metadata_url) could not be read.").
		WithJSONSchemaRef(service.SchemaRef(service.SchemaError))}

	md := service.NewOperation("getSAMLMetadata", "saml", "SP metadata",
		"The service provider's SAML metadata (entity id <base>/api/v2/<name>/metadata, ACS <base>/api/v2/<name>/acs?api_key=<the key of this request>), to register at the identity provider. Needs no role.")
	md.Security = &openapi3.SecurityRequirements{{service.SecurityAPIKey: []string{}}}
	r := openapi3.NewResponse().WithDescription("SAML metadata (EntityDescriptor).")
	r.Content = openapi3.NewContentWithSchema(str(), []string{"text/xml"})
	md.Responses.Set("200", &openapi3.ResponseRef{Value: r})
	service.AddErrors(md, service.CommonErrors...)
	service.AddOperation(doc, "/metadata", http.MethodGet, md)

	sso := service.NewOperation("startSAMLSignIn", "saml", "Start sign-in",
		"Redirects (302) to the identity provider with a SAMLRequest; with X-Requested-With: XMLHttpRequest answers the URL instead. Needs no role.")
	sso.AddParameter(service.QueryParam("redirect", "Where the browser goes after sign-in, with the session token: a path on this host, or a URL on this host or on the host of the service's relay_state. Default: relay_state.", str()).Value)
	sso.Responses.Set("302", &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("To the identity provider.")})
	service.AddResponse(sso, http.StatusOK, "The identity provider's URL (XHR).", service.SchemaRef(schemaRedirect))
	service.AddErrors(sso, service.CommonErrors...)
	sso.Responses.Set("502", badGateway)
	service.AddOperation(doc, "/sso", http.MethodGet, sso)

	acs := service.NewOperation("consumeSAMLResponse", "saml", "Assertion consumer service",
		"Where the identity provider posts its answer (HTTP-POST binding). Verifies it and answers the session, or 302 to the sign-in's redirect with the token in place of _token_ or as ?session_token=. "+
			"A refused answer (unsigned, signed by another key, expired, for another audience or destination, not in response to this sign-in, already used) is 401 with the reason. Needs no role.")
	form := openapi3.NewObjectSchema().
		WithProperty("SAMLResponse", service.Describe(str(), "The base64 Response.")).
		WithProperty("RelayState", service.Describe(str(), "The RelayState of the sign-in, as the identity provider returns it."))
	form.Required = []string{"SAMLResponse", "RelayState"}
	acs.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
		"application/x-www-form-urlencoded": openapi3.NewMediaType().WithSchema(form),
		"application/json":                  openapi3.NewMediaType().WithSchema(form),
	})}
	service.AddResponse(acs, http.StatusOK, "Signed in.", service.SchemaRef(schemaSession))
	acs.Responses.Set("302", &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("Back to the app with the session token.")})
	service.AddErrors(acs, service.CommonErrors...)
	acs.Responses.Set("502", badGateway)
	service.AddOperation(doc, "/acs", http.MethodPost, acs)
	return doc
}
