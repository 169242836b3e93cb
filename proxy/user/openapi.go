package user

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.Documenter = (*backend)(nil)

// OpenAPI documents the service's resources: the list at the root and the
// sign-in resources (session, password, profile, register).
func (b *backend) OpenAPI(context.Context) (*openapi3.T, error) {
	doc := service.NewDocument("Sign-in, registration, passwords and profiles of users who are not administrators.")
	op := service.NewOperation("getResources", "", "List the service's resources",
		"Answers {\"resource\":[{\"name\":\"password\"}, …]}; fields=* adds labels, as_list=true gives bare names.")
	op.AddParameter(service.QueryParam("fields", "* adds each resource's label.", openapi3.NewStringSchema()).Value)
	op.AddParameter(service.QueryParam("as_list", "Answer bare names.", openapi3.NewBoolSchema()).Value)
	service.AddResponse(op, http.StatusOK, "The resources.", service.SchemaRef(service.SchemaResourceList))
	service.AddErrors(op, service.CommonErrors...)
	service.AddOperation(doc, "/", http.MethodGet, op)
	Document(doc, false)
	return doc, nil
}
