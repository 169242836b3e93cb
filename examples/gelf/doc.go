// Command gelf assembles a stack that ships every request to a GELF
// collector (Graylog, Logstash's gelf input, Fluentd…) with the
// handlers/gelf stage on its own: no system database, no proxy.New, no
// logstash service; the connector is configured in Go.
//
//	go run ./examples/gelf -collector graylog.example.com:12201 -protocol gelf
//
// The stack is recoverer → request id → GELF tap → API key (one static
// app) → gelf.Observe → a small JSON API. Each request, refused ones
// included, becomes one GELF message with the request and response
// (bodies capped, credentials redacted) and the caller's app and role.
// Without -collector the program starts a GELF UDP collector of its own
// that prints what it receives, so it runs anywhere.
package main
