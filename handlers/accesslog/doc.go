// Package accesslog is the pipeline stage that logs every request with
// log/slog and counts it in Prometheus: requests by service, method and
// status, and a latency histogram by service and method.
//
// Inner stages name the service a request resolved to with [SetService], so
// the metric labels stay bounded (an unknown service is counted as
// "unknown"). The cause of a 5xx, which the client never sees, is recorded
// through apierr and logged here at Error with the request id. Credentials
// in the query string are redacted before anything is logged.
package accesslog
