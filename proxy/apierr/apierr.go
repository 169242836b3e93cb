package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is an error with an HTTP status and a message safe for clients.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Code is the envelope's code; zero means Status.
	Code int
	// Message is shown to the client.
	Message string
	// Context is extra structured detail shown to the client (nil: null).
	Context any
	// Header holds headers to add to the response (Retry-After, …).
	Header http.Header
	// Err is the cause. It is logged, never sent.
	Err error
}

// Error returns the message, followed by the cause when there is one.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// WithContext returns a copy of e carrying ctx as the envelope's context.
func (e *Error) WithContext(ctx any) *Error {
	c := *e
	c.Context = ctx
	return &c
}

// WithCause returns a copy of e whose cause is err.
func (e *Error) WithCause(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

func newf(status int, format string, args []any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Status: status, Message: msg}
}

// BadRequest is 400: a malformed request, a missing required field, an
// invalid value or type, a malformed filter.
func BadRequest(format string, args ...any) *Error {
	return newf(http.StatusBadRequest, format, args)
}

// InvalidJSON is 400 for a body that is not valid JSON.
func InvalidJSON(cause error) *Error {
	msg := "Invalid or malformed JSON."
	if cause != nil {
		msg = "Invalid or malformed JSON: " + cause.Error()
	}
	return &Error{Status: http.StatusBadRequest, Message: msg, Err: cause}
}

// BatchItem is one failed record of a batch.
type BatchItem struct {
	Index   int    `json:"index"`
	Message string `json:"message"`
}

// BatchContext is the envelope context of a batch failure.
type BatchContext struct {
	Errors   []BatchItem `json:"errors"`
	Resource any         `json:"resource,omitempty"`
}

// BatchCode is the envelope code of a batch failure, as DreamFactory sends
// it; every other error's code is its HTTP status.
const BatchCode = 1000

// Batch is 400 for a batch in which some operations failed. resource may
// carry the per-record results (nil to omit).
func Batch(message string, errs []BatchItem, resource any) *Error {
	return &Error{
		Status:  http.StatusBadRequest,
		Code:    BatchCode,
		Message: message,
		Context: BatchContext{Errors: errs, Resource: resource},
	}
}

// Unauthorized is 401: a missing or invalid API key or session token.
func Unauthorized(format string, args ...any) *Error {
	return newf(http.StatusUnauthorized, format, args)
}

// Forbidden is 403: the role lacks access, or a non-admin used an admin
// endpoint.
func Forbidden(format string, args ...any) *Error {
	return newf(http.StatusForbidden, format, args)
}

// NotFound is 404: a service, table, record, procedure or operation that does
// not exist.
func NotFound(format string, args ...any) *Error {
	return newf(http.StatusNotFound, format, args)
}

// MethodNotAllowed is 405 for a verb the route does not support.
func MethodNotAllowed(method string) *Error {
	return newf(http.StatusMethodNotAllowed, "Invalid or unsupported verb '%s' used in request.", []any{method})
}

// Conflict is 409: a duplicate key, a unique or foreign-key violation, a
// concurrent modification.
func Conflict(format string, args ...any) *Error {
	return newf(http.StatusConflict, format, args)
}

// PayloadTooLarge is 413 for a body over the configured cap.
func PayloadTooLarge(limit int64) *Error {
	return newf(http.StatusRequestEntityTooLarge, "Request body exceeds the limit of %d bytes.", []any{limit})
}

// TooManyRequests is 429: a limit was exceeded.
func TooManyRequests(format string, args ...any) *Error {
	return newf(http.StatusTooManyRequests, format, args)
}

// Internal is 500 with a generic message; cause is logged, never sent.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Message: "An internal error occurred.", Err: cause}
}

// InternalMsg is 500 with a message that is safe to show (a script error, a
// SOAP fault, a configuration error).
func InternalMsg(format string, args ...any) *Error {
	return newf(http.StatusInternalServerError, format, args)
}

// NotImplemented is 501: the service type does not support the operation.
func NotImplemented(format string, args ...any) *Error {
	return newf(http.StatusNotImplemented, format, args)
}

// BadGateway is 502: an upstream answered with something that is not HTTP.
func BadGateway(format string, args ...any) *Error {
	return newf(http.StatusBadGateway, format, args)
}

// Unavailable is 503: a database or remote service is down.
func Unavailable(format string, args ...any) *Error {
	return newf(http.StatusServiceUnavailable, format, args)
}

// GatewayTimeout is 504: an upstream did not answer in time.
func GatewayTimeout(format string, args ...any) *Error {
	return newf(http.StatusGatewayTimeout, format, args)
}

// StatusClientClosed is the status logged and counted for a request whose
// client went away before it was answered (nginx's 499): the client sees
// nothing, and the instance did nothing wrong.
const StatusClientClosed = 499

// ClientClosed is the error of a request whose client went away (it closed
// the connection mid-upload or before the answer was ready).
func ClientClosed(cause error) *Error {
	return &Error{Status: StatusClientClosed, Message: "The client closed the request.", Err: cause}
}

// envelope is the JSON shape of every error response.
type envelope struct {
	Error body `json:"error"`
}

type body struct {
	Code       int    `json:"code"`
	Message    string `json:"message"`
	Context    any    `json:"context"`
	StatusCode int    `json:"status_code"`
}

// ErrorRecorder is implemented by response writers that want to know the
// cause of an error response (the access log records it for 5xx).
type ErrorRecorder interface {
	RecordError(err error)
}

// As returns err as an *Error, converting anything else into a generic 500
// that keeps err as its cause. Errors from http.MaxBytesReader become 413.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return PayloadTooLarge(mbe.Limit).WithCause(err)
	}
	return Internal(err)
}

// Write renders err in the envelope. It is the only writer of error
// responses in Portcullis.
func Write(w http.ResponseWriter, err error) {
	e := As(err)
	if rec := findRecorder(w); rec != nil {
		rec.RecordError(err)
	}
	code := e.Code
	if code == 0 {
		code = e.Status
	}
	h := w.Header()
	for k, vs := range e.Header {
		h[k] = vs
	}
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(envelope{Error: body{
		Code: code, Message: e.Message, Context: e.Context, StatusCode: e.Status,
	}})
}

// findRecorder walks Unwrap chains of response writers to find an
// ErrorRecorder.
func findRecorder(w http.ResponseWriter) ErrorRecorder {
	for range 16 {
		if rec, ok := w.(ErrorRecorder); ok {
			return rec
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// HandlerFunc is an HTTP handler that returns an error instead of writing
// one.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP calls f and writes its error, if any, with [Write].
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		Write(w, err)
	}
}

// Handler adapts fn to an http.Handler.
func Handler(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return HandlerFunc(fn)
}
