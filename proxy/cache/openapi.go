package cache

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Names of the document's own schemas.
const (
	schemaValues  = "CacheValues"
	schemaDeleted = "CacheDeleted"
)

// Document is the OpenAPI document of a cache service: the keyless
// routes (several keys) and /{key}.
func Document() *openapi3.T {
	doc := service.NewDocument("Key-value cache: read, add (POST), replace (PUT, PATCH) and delete values by key, several at once with ?keys= or a JSON object of key/value pairs. JSON values are kept as JSON; other bodies are stored as their bytes. Values expire after ?ttl= seconds, the service's default_ttl (300 s when unset), or never with forever=true.")
	s := doc.Components.Schemas
	values := openapi3.NewObjectSchema()
	values.AdditionalProperties = openapi3.AdditionalProperties{Schema: openapi3.NewSchemaRef("", &openapi3.Schema{Description: "A value: JSON as stored, text as a string."})}
	values.Description = "Values by key."
	s[schemaValues] = openapi3.NewSchemaRef("", values)
	deleted := openapi3.NewObjectSchema()
	deleted.AdditionalProperties = openapi3.AdditionalProperties{Schema: openapi3.NewSchemaRef("", openapi3.NewBoolSchema())}
	deleted.Description = "For each key, whether it existed."
	s[schemaDeleted] = openapi3.NewSchemaRef("", deleted)

	str, integer, boolean := openapi3.NewStringSchema, openapi3.NewIntegerSchema, openapi3.NewBoolSchema
	keys := service.QueryParam("keys", "Comma-separated keys.", str())
	ttl := service.QueryParam("ttl", "Lifetime of the values in seconds (default: the service's default_ttl).", integer().WithMin(1))
	forever := service.QueryParam("forever", "Store without expiry.", boolean())
	key := service.PathParam("key", "The key (the rest of the path, '/' included).", nil)
	anyValue := &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
		WithDescription("The value: a JSON body is stored as JSON; any other body (text/plain, bytes) as it is.").
		WithContent(openapi3.Content{
			"application/json": openapi3.NewMediaType().WithSchema(&openapi3.Schema{Description: "Any JSON value."}),
			"text/plain":       openapi3.NewMediaType().WithSchema(str()),
		})}
	pairs := &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
		WithDescription("Key/value pairs, as a JSON object or form fields.").
		WithContent(openapi3.Content{
			"application/json":                  openapi3.NewMediaType().WithSchemaRef(service.SchemaRef(schemaValues)),
			"application/x-www-form-urlencoded": openapi3.NewMediaType().WithSchemaRef(service.SchemaRef(schemaValues)),
		})}

	getMany := service.NewOperation("getCacheValues", "cache", "Read several values", "Answers an object of the keys that exist (missing keys are left out). Without ?keys= the call is a 400.")
	getMany.AddParameter(keys.Value)
	service.AddResponse(getMany, http.StatusOK, "The values.", service.SchemaRef(schemaValues))
	service.AddErrors(getMany, append(service.CommonErrors, http.StatusServiceUnavailable)...)
	addMany := service.NewOperation("addCacheValues", "cache", "Add several values", "Stores every pair only when none of the keys exists (409 naming them otherwise; nothing is stored).")
	addMany.AddParameter(ttl.Value)
	addMany.AddParameter(forever.Value)
	addMany.RequestBody = pairs
	service.AddResponse(addMany, http.StatusCreated, "Stored.", service.SchemaRef(service.SchemaSuccess))
	service.AddErrors(addMany, append(service.CommonErrors, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
	setMany := service.NewOperation("setCacheValues", "cache", "Set several values", "Stores every pair, replacing existing values.")
	setMany.AddParameter(ttl.Value)
	setMany.AddParameter(forever.Value)
	setMany.RequestBody = pairs
	service.AddResponse(setMany, http.StatusOK, "Stored.", service.SchemaRef(service.SchemaSuccess))
	service.AddErrors(setMany, append(service.CommonErrors, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
	patchMany := *setMany
	patchMany.OperationID = "patchCacheValues"
	patchMany.Summary = "Set several values (as PUT)"
	delMany := service.NewOperation("deleteCacheValues", "cache", "Delete several values", "Without ?keys= the call is a 400.")
	delMany.AddParameter(keys.Value)
	service.AddResponse(delMany, http.StatusOK, "Whether each key existed.", service.SchemaRef(schemaDeleted))
	service.AddErrors(delMany, append(service.CommonErrors, http.StatusServiceUnavailable)...)
	service.AddOperation(doc, "/", http.MethodGet, getMany)
	service.AddOperation(doc, "/", http.MethodPost, addMany)
	service.AddOperation(doc, "/", http.MethodPut, setMany)
	service.AddOperation(doc, "/", http.MethodPatch, &patchMany)
	service.AddOperation(doc, "/", http.MethodDelete, delMany)

	get := service.NewOperation("getCacheValue", "cache", "Read a value", "The value as the body: JSON as application/json, text as text/plain.")
	get.AddParameter(key.Value)
	get.AddParameter(service.QueryParam("default", "Answer this instead of 404 when the key is missing.", str()).Value)
	get.AddParameter(service.QueryParam("clear", "Delete the value after reading it (alias pull).", boolean()).Value)
	get.Responses.Set("200", &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("The value.").
		WithContent(openapi3.Content{
			"application/json": openapi3.NewMediaType().WithSchema(&openapi3.Schema{Description: "A JSON value."}),
			"text/plain":       openapi3.NewMediaType().WithSchema(str()),
		})})
	service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable)...)
	post := service.NewOperation("addCacheValue", "cache", "Add a value", "Stores the body under the key; 409 when the key exists.")
	put := service.NewOperation("setCacheValue", "cache", "Set a value", "Stores the body under the key, replacing any value.")
	patch := service.NewOperation("patchCacheValue", "cache", "Set a value (as PUT)", "Replaces the whole value; nothing is merged.")
	for _, op := range []*openapi3.Operation{post, put, patch} {
		op.AddParameter(key.Value)
		op.AddParameter(ttl.Value)
		op.AddParameter(forever.Value)
		op.RequestBody = anyValue
		status := http.StatusOK
		if op == post {
			status = http.StatusCreated
		}
		service.AddResponse(op, status, "The key and its value.", service.SchemaRef(schemaValues))
		service.AddErrors(op, append(service.CommonErrors, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
	}
	del := service.NewOperation("deleteCacheValue", "cache", "Delete a value", "success is false when the key did not exist.")
	del.AddParameter(key.Value)
	service.AddResponse(del, http.StatusOK, "Deleted.", service.SchemaRef(service.SchemaSuccess))
	service.AddErrors(del, append(service.CommonErrors, http.StatusServiceUnavailable)...)
	service.AddOperation(doc, "/{key}", http.MethodGet, get)
	service.AddOperation(doc, "/{key}", http.MethodPost, post)
	service.AddOperation(doc, "/{key}", http.MethodPut, put)
	service.AddOperation(doc, "/{key}", http.MethodPatch, patch)
	service.AddOperation(doc, "/{key}", http.MethodDelete, del)
	return doc
}
