package oidc

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.Documenter = (*Backend)(nil)

// OpenAPI implements service.Documenter: GET and POST /sso.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(b.p.label), nil }

// Document is the OpenAPI document of a sign-in service of the type
// labelled label.
func Document(label string) *openapi3.T {
	doc := service.NewDocument(label + " sign-in: the authorization code flow with PKCE. GET /sso (or GET /api/v2/user/session?service=<name>) sends the browser to the provider; the provider sends it back to the service's redirect_url, and that callback answers the session as a password sign-in does, or 302s to the redirect given at the start with ?session_token=.")
	str := openapi3.NewStringSchema
	session := openapi3.NewObjectSchema().
		WithProperty("session_token", str()).WithProperty("session_id", str()).
		WithProperty("id", openapi3.NewIntegerSchema()).WithProperty("email", str()).WithProperty("name", str()).
		WithProperty("first_name", str()).WithProperty("last_name", str()).WithProperty("role", str()).
		WithProperty("token_expiry_date", str())
	session.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(true)}
	session.Description = "The session response of a password sign-in: the user, its role and apps, and the session token. A user signed in for the first time is created with the e-mail <local>+<service>@<domain> of the provider's verified address, or <id>+<service>@<service>.com without one."
	doc.Components.Schemas["SSOSession"] = openapi3.NewSchemaRef("", session)
	redirect := openapi3.NewObjectSchema().WithProperty("response", openapi3.NewObjectSchema().
		WithProperty("redirect", openapi3.NewBoolSchema()).WithProperty("url", str()))
	redirect.Description = "With X-Requested-With: XMLHttpRequest, the start answers the provider's URL instead of a 302."
	doc.Components.Schemas["SSORedirect"] = openapi3.NewSchemaRef("", redirect)

	for _, method := range []string{http.MethodGet, http.MethodPost} {
		op := service.NewOperation("sso"+method, "sso", "Start or finish a sign-in",
			"Without code, error or state: starts the sign-in (302 to the provider; redirect=<path or URL on the host of redirect_url> is where the browser goes at the end). With them: the provider's callback; the state (sealed, 10 minutes, bound to this service), the code (exchanged with the PKCE verifier) and the ID token (signature, issuer, audience, expiry, nonce) or user info are checked. A failure is a 401 saying why; failed callbacks are throttled per client address as failed password sign-ins are (429). An e-mail the provider marks unverified is refused (401).")
		for _, p := range []struct{ name, desc string }{
			{"redirect", "Start: where the browser goes at the end, with ?session_token=."},
			{"code", "Callback: the provider's authorization code."},
			{"state", "Callback: the state this service sent."},
			{"error", "Callback: the provider's refusal (access_denied, …)."},
			{"error_description", "Callback: the provider's explanation."},
		} {
			op.AddParameter(service.QueryParam(p.name, p.desc, str()).Value)
		}
		op.AddParameter(openapi3.NewHeaderParameter("X-Requested-With").WithDescription("XMLHttpRequest: answer the provider's URL as JSON instead of a 302.").WithSchema(str()))
		service.AddResponse(op, http.StatusOK, "The callback's session, or (XHR start) the provider's URL.", &openapi3.SchemaRef{Value: &openapi3.Schema{
			OneOf: openapi3.SchemaRefs{service.SchemaRef("SSOSession"), service.SchemaRef("SSORedirect")}}})
		service.AddResponse(op, http.StatusFound, "To the provider (start), or to the start's redirect with ?session_token= (callback).", nil)
		service.AddResponse(op, http.StatusBadGateway, "The provider could not be reached, failed, or refused the service's client credentials.", service.SchemaRef(service.SchemaError))
		service.AddErrors(op, service.CommonErrors...)
		service.AddOperation(doc, "/sso", method, op)
	}
	root := service.NewOperation("ssoResources", "sso", "List the resources", "Answers {\"resource\":[\"sso\"]}.")
	service.AddResponse(root, http.StatusOK, "The resources.", nil)
	service.AddOperation(doc, "/", http.MethodGet, root)
	return doc
}
