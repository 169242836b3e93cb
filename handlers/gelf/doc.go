// Package gelf is the GELF tap: the pipeline stage that hands every API
// request, once answered, to the log-shipping connectors in force
// (proxy/logship), which format, redact and send it from their own
// goroutines. With no connector the stage costs one function call; with
// connectors it records the method, path, query, headers, status, the
// bodies as far as a connector ships them (capped) and, when a connector
// ships _platform.session, the caller's identity, then queues one event
// per connector without waiting.
//
// The stage sits early in the pipeline (after the request id), so that
// refused requests (401, 403, 404, 429) are shipped too. The identity is
// set by later stages; [Observe], placed after them, records it and the
// target service for the tap.
//
// It imports the proxy leaves (caller, service, logship); never a backend,
// another stage or the proxy root.
package gelf
