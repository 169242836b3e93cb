// Package logship is the log-shipping engine behind the logstash service
// type and the handlers/gelf stage: it turns a finished API request (an
// [Event], plain data captured by the stage) into a GELF 1.1 message,
// redacts every credential from it, and ships it to a collector through a
// [Connector]'s bounded queue and its own sender goroutine, so that a slow,
// dead or mismatched collector never slows a request.
//
// A message has the GELF top-level fields (version, host, short_message,
// full_message, timestamp, level) and the additional fields chosen by the
// connector's context keys: "_event" (request and response), "_platform"
// (platform and session) or dotted sub-keys such as
// "_event.request.headers"; "_request_id" is always there. Headers, query
// parameters and JSON or form bodies are redacted at any depth before
// anything leaves the process: keys naming credentials (see [Sensitive])
// are matched case-insensitively and their values replaced by
// [Redacted]. Bodies longer than the connector's content limit are cut
// and the message says so.
//
// Transports: "gelf" is GELF over UDP, compressed (gzip by default, with
// pooled compressors) and chunked; "udp" the same message uncompressed,
// chunked when large; "tcp" GELF over TCP (NUL-terminated JSON on one
// connection, redialled after an error). Messages are go-gelf's
// (gopkg.in/Graylog2/go-gelf.v2) type, written by this package's
// [Encoder], which always writes the level (go-gelf's own encoder leaves
// out level 0, EMERGENCY, which a collector then reads as ALERT).
//
// A stage may recycle its events (see [Event.Recycle]): each connector
// that queues an event holds it until it has built the message, so that
// a request costs no allocation once the stage's pool is warm. The "http" protocol
// needs an HTTP client, which this engine does not hold: its caller passes
// a [Transport] (proxy/logstash does).
//
// logship has no HTTP in it and imports only the proxy leaves
// (proxy/caller, proxy/upstream); the stage and the backend import it.
package logship
