package mcp

import (
	"context"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

var (
	_ service.Documenter = (*Backend)(nil)
	_ service.Documenter = (*remote)(nil)
)

// jsonRPC is the schema of a JSON-RPC 2.0 message, what MCP carries.
func jsonRPC(description string) *openapi3.SchemaRef {
	s := openapi3.NewObjectSchema().
		WithProperty("jsonrpc", openapi3.NewStringSchema().WithEnum("2.0")).
		WithProperty("id", &openapi3.Schema{Description: "The request id (a string or a number); absent in a notification."}).
		WithProperty("method", openapi3.NewStringSchema()).
		WithProperty("params", openapi3.NewObjectSchema()).
		WithProperty("result", openapi3.NewObjectSchema()).
		WithProperty("error", openapi3.NewObjectSchema())
	s.Required = []string{"jsonrpc"}
	s.Description = description
	return openapi3.NewSchemaRef("", s)
}

// OpenAPI documents the services form: one endpoint, POST at the root.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) {
	doc := service.NewDocument("An MCP server (streamable HTTP, stateless, JSON answers) whose tools act on the database service(s) " +
		strings.Join(b.services, ", ") + ": " + strings.Join(toolNames, ", ") + ". Point an MCP client at this URL with the platform's API key " +
		"(X-Platform-API-Key) and, for a user, a session token. Every tool call is made as the caller, through the same code as the REST call, " +
		"and answers that call's JSON; a refused call is a tool error (isError) carrying the error envelope.")
	op := service.NewOperation("postMCP", "mcp", "Send MCP messages",
		"JSON-RPC 2.0 messages of the Model Context Protocol: initialize, tools/list, tools/call {name, arguments}, ping. "+
			"Tool arguments: service (required when more than one service is exposed), table, filter, fields, order, limit, offset, related, ids, records, name, params.")
	op.RequestBody = service.JSONBody("A JSON-RPC request or notification (or a batch).", true, jsonRPC("A JSON-RPC 2.0 message."))
	service.AddResponse(op, http.StatusOK, "The JSON-RPC answer.", jsonRPC("A JSON-RPC 2.0 response."))
	service.AddResponse(op, http.StatusAccepted, "A notification was accepted; no body.", nil)
	service.AddErrors(op, service.CommonErrors...)
	service.AddOperation(doc, "/", http.MethodPost, op)
	return doc, nil
}

// toolNames lists the services form's tools.
var toolNames = []string{ToolListTables, ToolDescribeTable, ToolQueryRecords, ToolCreateRecords,
	ToolUpdateRecords, ToolDeleteRecords, ToolCallProcedure, ToolCallFunction}

// OpenAPI documents the url form: the root forwarded to the remote
// server, and the message endpoints it announces.
func (rm *remote) OpenAPI(context.Context) (*openapi3.T, error) {
	doc := service.NewDocument("A remote MCP server reached through the platform: streamable HTTP (POST messages, GET an event stream, " +
		"DELETE to end a session) or the older HTTP+SSE transport (GET the event stream here; its endpoint event names where to POST messages, " +
		"a path below this service). The platform's API key and session token are never forwarded; the configured headers are added. " +
		"Event streams pass through as they arrive.")
	passed := openapi3.NewSchemaRef("", &openapi3.Schema{Description: "The remote server's answer, passed through."})
	for _, p := range []struct{ path, what string }{{"/", "the remote MCP endpoint"}, {"/{path}", "a message endpoint the remote server announced"}} {
		verbs := []string{http.MethodGet, http.MethodPost, http.MethodDelete}
		if p.path != "/" {
			verbs = []string{http.MethodPost}
		}
		for _, verb := range verbs {
			id := strings.ToLower(verb) + "Remote"
			if p.path != "/" {
				id = "postAnnounced"
			}
			op := service.NewOperation(id, "mcp", verb+" "+p.what, "Forwarded to the remote MCP server with the query string and body.")
			if p.path != "/" {
				op.AddParameter(service.PathParam("path", "The path the remote server's endpoint event named; any other path is 404.", nil).Value)
			}
			if verb == http.MethodPost {
				op.RequestBody = service.JSONBody("A JSON-RPC 2.0 message.", true, jsonRPC("A JSON-RPC 2.0 message."))
			}
			desc := "The remote server's answer: JSON, or an event stream (text/event-stream)."
			service.AddResponse(op, http.StatusOK, desc, passed)
			service.AddErrors(op, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable)
			for status, what := range map[string]string{"502": "The remote server gave no usable answer, or the upstream allow list refuses its address.", "504": "The remote server did not start answering in time."} {
				op.Responses.Set(status, &openapi3.ResponseRef{Value: openapi3.NewResponse().
					WithDescription(what).WithJSONSchemaRef(service.SchemaRef(service.SchemaError))})
			}
			if p.path != "/" {
				service.AddErrors(op, http.StatusNotFound)
			}
			service.AddOperation(doc, p.path, verb, op)
		}
	}
	return doc, nil
}
