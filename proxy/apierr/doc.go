// Package apierr is the one place where Portcullis turns an error into an
// HTTP response.
//
// Every error a client sees has the envelope
//
//	{"error":{"code":404,"message":"…","context":null,"status_code":404}}
//
// Handlers return Go errors; [Handler] adapts a func(w, r) error to an
// http.Handler and [Write] renders the error once. An [*Error] carries a
// status, a message that is safe to show, an optional context object and the
// cause, which is never sent: unknown errors become a generic 500 whose cause
// the access log records with the request id.
//
// apierr is a leaf: it imports only the standard library.
package apierr
