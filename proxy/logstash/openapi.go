package logstash

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Names of the document's own schemas.
const (
	schemaMessage = "LogMessage"
	schemaStatus  = "LogStatus"
)

// Document is the OpenAPI document of a logstash service.
func Document() *openapi3.T {
	doc := service.NewDocument("Log shipping: every API request is shipped to this service's collector (GELF). " +
		"POST writes a message of its own; GET shows the connector's settings and counters.")
	s := doc.Components.Schemas
	str, integer := openapi3.NewStringSchema, openapi3.NewIntegerSchema
	levels := []any{"EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG"}
	msg := openapi3.NewObjectSchema().
		WithProperty("level", service.Describe(str().WithEnum(levels...), "Default INFO.")).
		WithProperty("message", str())
	msg.Required = []string{"message"}
	s[schemaMessage] = openapi3.NewSchemaRef("", msg)
	s[schemaStatus] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
		WithProperty("host", str()).WithProperty("port", integer()).WithProperty("protocol", str()).
		WithProperty("level", str()).WithProperty("context", openapi3.NewArraySchema().WithItems(str())).
		WithProperty("sent", integer()).WithProperty("dropped", integer()).WithProperty("failed", integer()).
		WithProperty("queued", integer()))

	get := service.NewOperation("getLogStatus", "log", "The connector's settings and counters.", "")
	service.AddResponse(get, http.StatusOK, "Settings and counters.", service.SchemaRef(schemaStatus))
	service.AddErrors(get, http.StatusUnauthorized, http.StatusForbidden)
	post := service.NewOperation("writeLog", "log", "Write a message to the log.", "A message below the connector's minimum level is accepted and not shipped.")
	post.RequestBody = service.JSONBody("The message and its level.", true, service.SchemaRef(schemaMessage))
	service.AddResponse(post, http.StatusOK, "Accepted.", service.SchemaRef(service.SchemaSuccess))
	service.AddErrors(post, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden)
	service.AddOperation(doc, "/", http.MethodGet, get)
	service.AddOperation(doc, "/", http.MethodPost, post)

	byPath := service.NewOperation("writeLogByPath", "log", "Write a message given in the path.", "")
	byPath.AddParameter(openapi3.NewPathParameter("level").WithSchema(str().WithEnum(levels...)))
	byPath.AddParameter(openapi3.NewPathParameter("message").WithSchema(str()))
	service.AddResponse(byPath, http.StatusOK, "Accepted.", service.SchemaRef(service.SchemaSuccess))
	service.AddErrors(byPath, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden)
	service.AddOperation(doc, "/{level}/{message}", http.MethodPost, byPath)
	return doc
}
