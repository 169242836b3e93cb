// Package logstash is the log-shipping service backend, for the service
// type logstash (and its synonym gelf): each service is one
// [logship.Connector] to a collector, whose configuration says where
// (host, port, protocol gelf|udp|tcp|http), from which level and with
// which context keys every API request is shipped by the handlers/gelf
// stage. Its own API writes a message, as DreamFactory's logger does:
//
//	POST /{svc}                  {"level":"INFO","message":"text", …} → {"success":true}
//	POST /{svc}/{LEVEL}/{message}                                    → {"success":true}
//	POST /{svc}/{message}        (level from a JSON body, else INFO) → {"success":true}
//	GET  /{svc}                  the connector's settings and counters (sent, dropped, failed, queued)
//
// PUT writes as POST does. The message ships with the request in _event
// (method, URI, headers, and the body posted, fields beside level and
// message included), credentials redacted, as the connector's context
// selects.
// No message is a 400 "No message provided for logging"; an unknown level
// a 400 "Unknown log level [X]". A message below the connector's level is
// accepted and not shipped.
//
// The http protocol POSTs each message as JSON to http://host:port/gelf
// (config path), as Graylog's GELF HTTP input expects; collectors are
// dialled through the platform's upstream allow list.
package logstash
