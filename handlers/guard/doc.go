// Package guard is the pipeline stage that keeps one client, or many, from
// starving the instance:
//
//   - at most MaxInFlight requests run at once; beyond it the answer is 503
//     with Retry-After, written before anything else is done;
//   - the request bodies being read hold at most MaxBodyInFlight bytes in
//     total: a body whose declared length does not fit is refused with 503
//     and Retry-After before it is read, and a chunked body that pushes the
//     total over the cap fails its read with the same 503;
//   - every write to the client must make progress within WriteTimeout: the
//     connection's write deadline moves forward as the response is written,
//     so a response that streams for minutes is fine but a client that stops
//     reading makes the next write fail and the handler release what it
//     holds (a pooled database connection).
//
// Slots adds the same kind of cap per key (the proxy uses one per service).
//
// The stage runs after the access log, so its refusals are logged and
// counted like any other response.
package guard
