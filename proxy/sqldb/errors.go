package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// errKind is what a database error means for the client.
type errKind int

const (
	errOther        errKind = iota
	errUnavailable          // the database cannot be reached
	errConflict             // unique, primary key or foreign key violation
	errNotNull              // NULL written to a NOT NULL column
	errInvalid              // a value the column cannot hold
	errSchemaChange         // a table or column we believed in is gone
)

// errSchemaChanged marks the cause of an error from a statement that named
// a table or column the database no longer has.
var errSchemaChanged = errors.New("schema changed")

// dbError turns an error from the database into an API error: 503 when the
// database cannot be reached, 409 for constraint violations, 400 for values
// the database refused, 500 otherwise (its cause logged, never sent). Errors
// that are already API errors pass through.
func (b *Backend) dbError(err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, context.Canceled) {
		return apierr.Unavailable("The request was cancelled.").WithCause(err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return apierr.GatewayTimeout("The database did not answer in time.").WithCause(err)
	}
	kind, msg := classify(err)
	switch kind {
	case errUnavailable:
		return unavailable(b.name, err)
	case errConflict:
		return apierr.Conflict("%s", msg).WithCause(err)
	case errNotNull, errInvalid:
		return apierr.BadRequest("%s", msg).WithCause(err)
	case errSchemaChange:
		b.InvalidateSchema()
		return apierr.Conflict("The table's structure changed while the request ran; try again.").WithCause(errors.Join(errSchemaChanged, err))
	}
	b.log.Error("database error", "error", err)
	return apierr.Internal(err)
}

// isUnavailable reports whether err says the database cannot be reached.
func isUnavailable(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	s := strings.ToLower(err.Error())
	for _, p := range []string{"connection refused", "connection reset", "broken pipe", "invalid connection",
		"bad connection", "server has gone away", "failed to connect", "no such host", "the database system is shutting down",
		"the database system is starting up", "terminating connection", "unable to open database file"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
