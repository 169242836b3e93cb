package iot

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Names of the document's own schemas.
const (
	schemaPublish   = "IoTPublish"
	schemaSubscribe = "IoTSubscription"
	schemaJobs      = "IoTJobs"
	schemaStatus    = "IoTSubscriptionStatus"
	schemaConsume   = "IoTConsume"
	schemaMessages  = "IoTMessages"
)

// Document is the OpenAPI document of an IoT service of kind "amqp" or
// "mqtt".
func Document(kind string) *openapi3.T {
	amqp := kind == "amqp"
	desc := "MQTT messaging: publish to a topic (POST /pub), receive for a bounded time (/consume), or subscribe in the background (POST /sub) so that every message is sent to an endpoint of this platform."
	if amqp {
		desc = "AMQP messaging: publish to a queue or exchange (POST /pub), take a bounded number of messages with a timeout (/consume), or subscribe in the background (POST /sub) so that every message is sent to an endpoint of this platform."
	}
	doc := service.NewDocument(desc)
	s := doc.Components.Schemas
	str, obj, boolean, integer := openapi3.NewStringSchema, openapi3.NewObjectSchema, openapi3.NewBoolSchema, openapi3.NewIntegerSchema
	nameOrObj := func(d string, o *openapi3.Schema) *openapi3.Schema {
		return &openapi3.Schema{Description: d, OneOf: openapi3.SchemaRefs{openapi3.NewSchemaRef("", str()), openapi3.NewSchemaRef("", o)}}
	}
	anyValue := &openapi3.Schema{Description: "A string is sent as text; any other JSON value as JSON."}

	source := obj()
	if amqp {
		queue := obj().WithProperty("name", str()).WithProperty("durable", boolean()).WithProperty("exclusive", boolean()).
			WithProperty("auto_delete", boolean()).WithProperty("passive", boolean()).WithProperty("arguments", obj())
		exchange := obj().WithProperty("name", str()).WithProperty("type", str().WithEnum("fanout", "direct", "topic", "headers")).
			WithProperty("durable", boolean()).WithProperty("auto_delete", boolean()).WithProperty("internal", boolean()).
			WithProperty("passive", boolean()).WithProperty("arguments", obj())
		source = source.
			WithProperty("queue", nameOrObj("A queue: its name (used as it is when it exists, else declared non-durable) or declaration flags.", queue)).
			WithProperty("topic", service.Describe(str(), "Alias of queue.")).
			WithProperty("exchange", nameOrObj("An exchange: its name, or declaration flags (default fanout, non-durable, auto-delete).", exchange)).
			WithProperty("routing_key", str()).
			WithProperty("qos", obj().WithProperty("prefetch_count", integer()))
	} else {
		source = source.
			WithProperty("topic", &openapi3.Schema{Description: "A topic filter ('+' and '#' allowed), or a list of them.",
				OneOf: openapi3.SchemaRefs{openapi3.NewSchemaRef("", str()), openapi3.NewSchemaRef("", openapi3.NewArraySchema().WithItems(str()))}}).
			WithProperty("qos", integer().WithMin(0).WithMax(2))
	}

	pub := obj().WithProperty("message", anyValue).WithProperty("msg", service.Describe(str(), "Alias of message."))
	if amqp {
		msgObj := obj().WithProperty("body", anyValue).WithProperty("content_type", str()).WithProperty("delivery_mode", integer()).
			WithProperty("priority", integer()).WithProperty("correlation_id", str()).WithProperty("reply_to", str()).
			WithProperty("expiration", str()).WithProperty("message_id", str()).WithProperty("type", str()).
			WithProperty("app_id", str()).WithProperty("headers", obj())
		pub.Properties["message"] = openapi3.NewSchemaRef("", &openapi3.Schema{Description: "Text, or {body, …AMQP properties}.",
			OneOf: openapi3.SchemaRefs{openapi3.NewSchemaRef("", str()), openapi3.NewSchemaRef("", msgObj)}})
		for k, v := range source.Properties {
			if k != "qos" {
				pub.Properties[k] = v
			}
		}
	} else {
		pub = pub.WithProperty("topic", str()).WithProperty("qos", integer().WithMin(0).WithMax(2)).
			WithProperty("retain", service.Describe(boolean(), "Default true, as DreamFactory."))
		pub.Required = []string{"topic"}
	}
	s[schemaPublish] = openapi3.NewSchemaRef("", pub)

	target := obj().WithProperty("endpoint", service.Describe(str(), "A path of this API, e.g. api/v2/db/_table/readings.")).
		WithProperty("verb", str().WithEnum("GET", "POST", "PUT", "PATCH", "DELETE")).
		WithProperty("parameter", obj()).WithProperty("header", obj()).
		WithProperty("payload", service.Describe(obj(), "The body sent; its key 'message' is set to the message's text."))
	sub := obj()
	for k, v := range source.Properties {
		sub.Properties[k] = v
	}
	sub = sub.WithProperty("service", nameOrObj("Where each message goes.", target))
	sub.Required = []string{"service"}
	s[schemaSubscribe] = openapi3.NewSchemaRef("", sub)
	jobs := obj().WithProperty("success", boolean()).WithProperty("job_count", integer())
	s[schemaJobs] = openapi3.NewSchemaRef("", jobs)
	status := obj().WithPropertyRef("sub", service.SchemaRef(schemaSubscribe)).WithProperty("attempted", integer()).
		WithProperty("connected", boolean()).WithProperty("received", integer()).WithProperty("delivered", integer()).
		WithProperty("failed", integer()).WithProperty("last_error", &openapi3.Schema{Type: &openapi3.Types{"string"}, Nullable: true})
	s[schemaStatus] = openapi3.NewSchemaRef("", openapi3.NewArraySchema().WithItems(status))
	consume := obj()
	for k, v := range source.Properties {
		consume.Properties[k] = v
	}
	consume = consume.WithProperty("limit", integer().WithMin(1).WithMax(MaxConsumeLimit)).
		WithProperty("timeout", service.Describe(openapi3.NewFloat64Schema().WithMin(0).WithMax(MaxConsumeWait.Seconds()), "Seconds to wait (default 5)."))
	s[schemaConsume] = openapi3.NewSchemaRef("", consume)
	msg := obj().WithProperty("message", str()).WithProperty("topic", str())
	if amqp {
		msg = msg.WithProperty("exchange", str()).WithProperty("content_type", str()).WithProperty("message_id", str()).
			WithProperty("correlation_id", str()).WithProperty("headers", obj()).WithProperty("timestamp", str().WithFormat("date-time"))
	} else {
		msg = msg.WithProperty("retained", boolean())
	}
	msgs := obj().WithProperty("resource", openapi3.NewArraySchema().WithItems(msg))
	s[schemaMessages] = openapi3.NewSchemaRef("", msgs)

	root := service.NewOperation("list"+kind+"Resources", kind, "List the resources", "pub, sub and consume.")
	service.AddResponse(root, http.StatusOK, "The resources.", service.SchemaRef(service.SchemaResourceList))
	service.AddErrors(root, service.CommonErrors...)
	service.AddOperation(doc, "/", http.MethodGet, root)

	p := service.NewOperation("publish", kind, "Publish a message", "")
	p.RequestBody = service.JSONBody("The message and where it goes.", true, service.SchemaRef(schemaPublish))
	service.AddResponse(p, http.StatusOK, "Published (confirmed by the broker).", service.SchemaRef(service.SchemaSuccess))
	pubErrs := append(service.CommonErrors, http.StatusServiceUnavailable)
	if amqp {
		pubErrs = append(pubErrs, http.StatusNotFound, http.StatusConflict)
	}
	service.AddErrors(p, pubErrs...)
	service.AddOperation(doc, "/pub", http.MethodPost, p)

	c := service.NewOperation("consume", kind, "Receive messages for a bounded time", "Waits up to timeout seconds for at most limit messages and returns those that came (AMQP acknowledges them; the others stay queued). Without a body, the request's keys are read from the query.")
	c.RequestBody = service.JSONBody("Where from, limit and timeout.", false, service.SchemaRef(schemaConsume))
	for _, name := range []string{"queue", "exchange", "routing_key", "topic"} {
		if !amqp && name != "topic" {
			continue
		}
		c.AddParameter(service.QueryParam(name, "Without a body: where from.", str()).Value)
	}
	c.AddParameter(service.QueryParam("limit", "Without a body: at most this many messages (default 10).", integer()).Value)
	c.AddParameter(service.QueryParam("timeout", "Without a body: seconds to wait (default 5).", openapi3.NewFloat64Schema()).Value)
	service.AddResponse(c, http.StatusOK, "The messages received.", service.SchemaRef(schemaMessages))
	service.AddErrors(c, pubErrs...)
	service.AddOperation(doc, "/consume", http.MethodPost, c)

	sp := service.NewOperation("subscribe", kind, "Subscribe in the background", "Starts one job per entry; each message is sent to the entry's endpoint, as the caller who subscribed. One set of jobs per service: 409 while one runs.")
	sp.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithDescription("One subscription or a list.").
		WithJSONSchema(&openapi3.Schema{OneOf: openapi3.SchemaRefs{service.SchemaRef(schemaSubscribe),
			openapi3.NewSchemaRef("", openapi3.NewArraySchema().WithItems(&openapi3.Schema{AllOf: openapi3.SchemaRefs{service.SchemaRef(schemaSubscribe)}}))}})}
	service.AddResponse(sp, http.StatusOK, "Started.", service.SchemaRef(schemaJobs))
	service.AddErrors(sp, append(service.CommonErrors, http.StatusConflict)...)
	service.AddOperation(doc, "/sub", http.MethodPost, sp)
	sg := service.NewOperation("listSubscriptions", kind, "List the running subscriptions", "")
	service.AddResponse(sg, http.StatusOK, "The jobs and their counts.", service.SchemaRef(schemaStatus))
	service.AddErrors(sg, append(service.CommonErrors, http.StatusNotFound)...)
	service.AddOperation(doc, "/sub", http.MethodGet, sg)
	sd := service.NewOperation("stopSubscriptions", kind, "Stop the subscriptions", "")
	service.AddResponse(sd, http.StatusOK, "Stopped.", service.SchemaRef(service.SchemaSuccess))
	service.AddErrors(sd, append(service.CommonErrors, http.StatusNotFound)...)
	service.AddOperation(doc, "/sub", http.MethodDelete, sd)
	return doc
}
