package sqldb

import (
	"context"
	"errors"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// errKind is what a database error means for the client.
type errKind int

const (
	errOther        errKind = iota
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
		// The client went away (or the instance is stopping): logged as 499.
		return apierr.ClientClosed(err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return apierr.GatewayTimeout("The database did not answer in time.").WithCause(err)
	}
	b.mu.Lock()
	d := b.dialect
	b.mu.Unlock()
	if d != nil {
		err = d.ClassifyError(err)
	}
	var ce *dialects.ConstraintError
	switch {
	case errors.As(err, &ce):
		if ce.Kind == dialects.ConstraintNotNull || ce.Kind == dialects.ConstraintCheck {
			return apierr.BadRequest("%s", ce.Message).WithCause(err)
		}
		return apierr.Conflict("%s", ce.Message).WithCause(err)
	case errors.Is(err, dialects.ErrUnavailable), dialects.IsConnectionError(err):
		return unavailable(b.name, err)
	}
	switch kind, msg := classifyStatement(err); kind {
	case errInvalid:
		return apierr.BadRequest("%s", msg).WithCause(err)
	case errSchemaChange:
		b.InvalidateSchema()
		return apierr.Conflict("The table's structure changed while the request ran; try again.").WithCause(errors.Join(errSchemaChanged, err))
	}
	b.log.Error("database error", "error", err)
	return apierr.Internal(err)
}
