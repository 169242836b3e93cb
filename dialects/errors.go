package dialects

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// ConstraintKind says which kind of constraint a write violated.
type ConstraintKind string

// The constraint kinds. All of them are conflicts with the data already
// stored (HTTP 409) except NotNull and Check, which reject the record
// itself (HTTP 400).
const (
	// ConstraintUnique is a duplicate value in a unique column or index.
	ConstraintUnique ConstraintKind = "unique"
	// ConstraintPrimaryKey is a duplicate primary key.
	ConstraintPrimaryKey ConstraintKind = "primary_key"
	// ConstraintForeignKey is a reference to a missing record, or the
	// removal of a record that others still reference.
	ConstraintForeignKey ConstraintKind = "foreign_key"
	// ConstraintNotNull is a NULL (or a missing value without a default)
	// in a NOT NULL column.
	ConstraintNotNull ConstraintKind = "not_null"
	// ConstraintCheck is a failed CHECK constraint.
	ConstraintCheck ConstraintKind = "check"
)

// ConstraintError is a write the database refused because it would break
// a constraint. [Dialect.ClassifyError] builds it from the driver's error;
// find it with errors.As. Its Error method returns Message, which names
// columns and constraints but never contains SQL or the values written.
type ConstraintError struct {
	// Kind is the kind of constraint.
	Kind ConstraintKind
	// Table is the table the constraint belongs to, when the engine says.
	Table string
	// Constraint is the constraint or index name, when the engine says.
	Constraint string
	// Column is the (first) column concerned, when the engine says.
	Column string
	// Message is safe to show to an API client.
	Message string
	// Err is the driver's error.
	Err error
}

// Error returns the safe message.
func (e *ConstraintError) Error() string { return e.Message }

// Unwrap returns the driver's error.
func (e *ConstraintError) Unwrap() error { return e.Err }

// ErrUnavailable is wrapped by the errors [Dialect.ClassifyError] returns
// when the database cannot be reached or dropped the connection (refused,
// reset, timed out, shutting down, too many connections, SQLite busy or
// locked): callers answer 503 and may retry.
var ErrUnavailable = errors.New("database unavailable")

type unavailableError struct{ err error }

func (e *unavailableError) Error() string        { return "database unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unavailable wraps err so that errors.Is(err, ErrUnavailable) holds, and
// keeps err reachable through errors.Is and errors.As.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return &unavailableError{err}
}

// IsConnectionError reports whether err is a failure of the connection
// rather than of the statement: a network error (refused, reset, broken
// pipe, unreachable, DNS, timeout), database/sql's bad or closed
// connection, or an unexpected end of the stream. The caller's own context
// ending is not one.
func IsConnectionError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !isNetTimeout(err) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EPIPE, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ETIMEDOUT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || isNetTimeout(err)
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// quoteName writes a name for a message: "name".
func quoteName(s string) string { return `"` + s + `"` }

// NewConstraintError builds a ConstraintError with the standard message
// for its kind from what the engine told: the table, constraint and
// column (any may be empty), refTable for a foreign key (the referenced
// table, or the referencing one when referenced is true: a parent row
// that others still point to).
func NewConstraintError(err error, kind ConstraintKind, table, constraint, column, refTable string, referenced bool) *ConstraintError {
	e := &ConstraintError{Kind: kind, Table: table, Constraint: constraint, Column: column, Err: err}
	var b strings.Builder
	switch kind {
	case ConstraintPrimaryKey:
		b.WriteString("duplicate primary key value")
		if column != "" {
			b.WriteString(" for " + quoteName(column))
		}
		b.WriteString(": a record with this key already exists")
	case ConstraintUnique:
		b.WriteString("duplicate value")
		switch {
		case column != "":
			b.WriteString(" for unique field " + quoteName(column))
		case constraint != "":
			b.WriteString(" violates unique constraint " + quoteName(constraint))
		}
	case ConstraintForeignKey:
		switch {
		case referenced && refTable != "":
			b.WriteString("the record is still referenced by records in " + quoteName(refTable))
		case referenced:
			b.WriteString("the record is still referenced by other records")
		case column != "" && refTable != "":
			b.WriteString("the value of " + quoteName(column) + " does not match any record in " + quoteName(refTable))
		case column != "":
			b.WriteString("the value of " + quoteName(column) + " does not match any referenced record")
		default:
			b.WriteString("foreign key constraint failed: a referenced record is missing or the record is still referenced")
		}
	case ConstraintNotNull:
		if column != "" {
			b.WriteString("field " + quoteName(column) + " can not be null")
		} else {
			b.WriteString("a required field can not be null")
		}
	case ConstraintCheck:
		b.WriteString("check constraint")
		if constraint != "" {
			b.WriteString(" " + quoteName(constraint))
		}
		b.WriteString(" failed")
	}
	e.Message = b.String()
	return e
}

// ErrInvalidValue is wrapped by the *[ValueError]s [Dialect.ClassifyError]
// returns when the database rejected a value for its column's type: text
// that is not a number or date, a number out of range, a string too long,
// invalid JSON. Callers answer 400.
var ErrInvalidValue = errors.New("invalid value")

// ValueError is a value the database refused for its column's type. Its
// Error method returns Message, which is safe to show to an API client.
type ValueError struct {
	// Column is the column concerned, when the engine says.
	Column string
	// Message is safe to show to an API client.
	Message string
	// Err is the driver's error.
	Err error
}

// Error returns the safe message.
func (e *ValueError) Error() string { return e.Message }

// Unwrap returns the driver's error.
func (e *ValueError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrInvalidValue].
func (e *ValueError) Is(target error) bool { return target == ErrInvalidValue }

// The reasons a value is refused, for [NewValueError].
const (
	ValueBadFormat  = "format"
	ValueOutOfRange = "range"
	ValueTooLong    = "length"
)

// NewValueError builds a ValueError with the standard message for reason
// (ValueBadFormat, ValueOutOfRange or ValueTooLong) and column (may be
// empty).
func NewValueError(err error, reason, column string) *ValueError {
	field := "a field"
	if column != "" {
		field = "field " + quoteName(column)
	}
	var msg string
	switch reason {
	case ValueOutOfRange:
		msg = "a value is out of range for " + field
	case ValueTooLong:
		msg = "a value is too long for " + field
	default:
		msg = "a value does not fit the type of " + field
	}
	return &ValueError{Column: column, Message: msg, Err: err}
}
