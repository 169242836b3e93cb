package system

import (
	"errors"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// constraintKind says which constraint a database error reports.
type constraintKind int

const (
	noConstraint constraintKind = iota
	uniqueViolation
	foreignKeyViolation
)

// systemDialects are the engines a system database can run on; each
// classifies only its own driver's errors.
var systemDialects = func() []dialects.Dialect {
	var ds []dialects.Dialect
	for _, k := range []dialects.Kind{dialects.SQLite, dialects.Postgres, dialects.MySQL} {
		if d, err := engines.Get(k); err == nil {
			ds = append(ds, d)
		}
	}
	return ds
}()

// classify recognises unique and foreign-key violations in a driver's
// error with the dialects' own classification (codes, not texts).
func classify(err error) constraintKind {
	if err == nil {
		return noConstraint
	}
	var ce *dialects.ConstraintError
	for _, d := range systemDialects {
		if !errors.As(d.ClassifyError(err), &ce) {
			continue
		}
		switch ce.Kind {
		case dialects.ConstraintUnique, dialects.ConstraintPrimaryKey:
			return uniqueViolation
		case dialects.ConstraintForeignKey:
			return foreignKeyViolation
		}
		return noConstraint
	}
	return noConstraint
}

// dbError turns a database error into an API error: 409 for unique and
// foreign-key violations (the contract), the error itself when it already
// is an API error, a 500 otherwise.
func dbError(err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	var ce *dialects.ConstraintError
	if errors.As(err, &ce) {
		switch ce.Kind {
		case dialects.ConstraintNotNull, dialects.ConstraintCheck:
			return apierr.BadRequest("Invalid data supplied: %s.", ce.Message).WithCause(err)
		}
		return apierr.Conflict("%s.", upperFirst(ce.Message)).WithCause(err)
	}
	if errors.Is(err, dialects.ErrUnavailable) || dialects.IsConnectionError(err) {
		return apierr.Unavailable("The system database is unavailable; try again.").WithCause(err)
	}
	switch classify(err) {
	case uniqueViolation:
		return apierr.Conflict("A record with the same unique value already exists.").WithCause(err)
	case foreignKeyViolation:
		return apierr.Conflict("The record refers to a record that does not exist, or is referred to by another record.").WithCause(err)
	}
	return apierr.Internal(err)
}
