package identity

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an Error; the backends that put the engine on the wire
// map each kind to one status (invalid 400, unauthenticated 401, forbidden
// 403, not found 404, conflict 409, throttled 429, internal 500,
// unavailable 503).
type Kind int

// Kinds of Error.
const (
	// Internal is an unexpected failure: the cause is logged, the message
	// (generic unless set) shown.
	Internal Kind = iota
	// Invalid is a malformed or incomplete request: a missing field, a
	// value of the wrong type, a weak password, a wrong old password.
	Invalid
	// Unauthenticated is a failed sign-in or a token that does not verify.
	Unauthenticated
	// Forbidden is a signed-in caller who may not do this.
	Forbidden
	// NotFound is an unknown reset or confirmation code.
	NotFound
	// Conflict is an e-mail address another user has.
	Conflict
	// Throttled is an attempt made while the account or address must wait
	// (Error.RetryAfter).
	Throttled
	// Unavailable is a system database or mailer that cannot be reached.
	Unavailable
)

// Error is a failure of the engine with a message safe to show a client
// (DreamFactory's texts where it has one). Err is the cause: logged, never
// shown.
type Error struct {
	Kind Kind
	// Message is shown to the client; "" for an Internal error means a
	// generic message.
	Message string
	// Context lists problems per field (validation errors).
	Context map[string][]string
	// RetryAfter is how long a Throttled attempt must wait.
	RetryAfter time.Duration
	// Err is the cause.
	Err error
}

// Error returns the message, followed by the cause when there is one.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "identity: internal error"
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err: its *Error's, else Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// MessageOf returns the client-safe message of err ("" for an error that
// is not an *Error or has none).
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

func newErr(k Kind, format string, args []any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Kind: k, Message: msg}
}

func invalid(format string, args ...any) *Error { return newErr(Invalid, format, args) }
func unauthenticated(format string, args ...any) *Error {
	return newErr(Unauthenticated, format, args)
}
func forbidden(format string, args ...any) *Error   { return newErr(Forbidden, format, args) }
func notFound(format string, args ...any) *Error    { return newErr(NotFound, format, args) }
func conflict(format string, args ...any) *Error    { return newErr(Conflict, format, args) }
func unavailable(format string, args ...any) *Error { return newErr(Unavailable, format, args) }
func internalMsg(format string, args ...any) *Error { return newErr(Internal, format, args) }

// internal is an Internal error with the generic message and cause err.
func internal(err error) *Error { return &Error{Kind: Internal, Err: err} }

// asError returns err as an *Error, an Internal one for anything else.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internal(err)
}

// withContext returns a copy of e listing problems per field.
func (e *Error) withContext(c map[string][]string) *Error {
	out := *e
	out.Context = c
	return &out
}

// withCause returns a copy of e whose cause is err.
func (e *Error) withCause(err error) *Error {
	out := *e
	out.Err = err
	return &out
}

// dbUnavailable is the 503 for a system database that does not answer.
func dbUnavailable(err error) *Error {
	return unavailable("The system database is unavailable; try again.").withCause(err)
}
