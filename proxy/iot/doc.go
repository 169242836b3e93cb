// Package iot is the IoT messaging service backend, for the service types
// amqp (github.com/rabbitmq/amqp091-go, against RabbitMQ or any AMQP
// 0-9-1 broker) and mqtt (github.com/eclipse/paho.mqtt.golang, MQTT
// 3.1.1, against Mosquitto or any broker): one [Handler] over a small
// [Broker] interface, with DreamFactory's resources and bodies:
//
//	GET    /{svc}          {"resource":[{"name":"pub"},{"name":"sub"},{"name":"consume"}]}
//	POST   /{svc}/pub      publish; 200 {"success":true} once the broker confirmed it
//	         AMQP: {"queue":"orders","message":"text"}
//	               {"exchange":{"name":"ex1","type":"direct"},"routing_key":"rk","message":{"body":{"a":1},"content_type":"application/json"}}
//	         MQTT: {"topic":"sensors/t1","message":"22.5","qos":1,"retain":true}
//	POST   /{svc}/consume  Portcullis's bounded receive: {"queue"|"topic"|…, "limit":10, "timeout":5}
//	                       → {"resource":[{"message":"…","topic":"…",…}]}; without a body, the
//	                       same keys in the query (POST only: consuming AMQP removes messages)
//	POST   /{svc}/sub      background subscriptions: one entry or a list of
//	                       {"queue"|"topic"|"exchange"…, "service":{"endpoint":"api/v2/db/_table/readings",
//	                        "verb":"POST","parameter":{…},"header":{…},"payload":{…}}} → {"success":true,"job_count":N}
//	GET    /{svc}/sub      the running jobs with their counts and last error
//	DELETE /{svc}/sub      stops them
//
// Publishing: a string message is sent as text, any other JSON value as
// JSON. AMQP: a queue named alone is used as it is when it exists and is
// otherwise declared (non-durable, not auto-deleted, so messages wait for
// a consumer); an object declares it with its flags; an exchange is
// declared as DreamFactory does (fanout, non-durable, auto-delete) unless
// it exists; the message goes through the default exchange to the queue,
// or through the exchange with routing_key (default: the queue's name).
// MQTT publishes with QoS 1 and retain=true unless the body says
// otherwise; a publish without topic or message is a 400.
//
// Consuming takes at most limit messages (default 10, at most 1000), and
// stops once they hold 16 MiB, within timeout seconds (default 5, at most
// 60); AMQP acknowledges the messages it returns and leaves the rest
// queued.
//
// Subscriptions run inside the server, one set per service: a second
// POST /sub while one runs is a 409. Each message becomes an inner call
// through the whole pipeline to the endpoint (a leading api/v2/ is
// optional), with the entry's verb (default POST), parameters, headers and
// payload, whose key "message" is set to the message's text. Unlike
// DreamFactory, which skips role checks there, the call is made as the
// caller who subscribed, under that caller's role. AMQP acknowledges each
// message after its call. A listener that loses its broker reconnects by
// itself (0.5 s, doubling to 10 s) and reports the state in GET /sub.
// Subscriptions stop when the service's configuration changes, and run
// only in the instance that accepted the POST.
//
// A broker that cannot be reached is a 503 in the error envelope; the next
// request connects again. AMQP's refusals are passed on: a missing queue
// or exchange (passive) 404, one declared with other flags 409.
package iot
