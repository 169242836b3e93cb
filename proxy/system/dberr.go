package system

import (
	"errors"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
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

// classify recognises unique and foreign-key violations in the errors of
// the three system database drivers (SQLite, pgx, go-sql-driver/mysql) by
// their stable texts and codes, without importing the drivers.
func classify(err error) constraintKind {
	if err == nil {
		return noConstraint
	}
	s := strings.ToLower(err.Error())
	switch {
	case strings.Contains(s, "unique constraint failed"), // sqlite
		strings.Contains(s, "duplicate key value violates unique constraint"), // pg
		strings.Contains(s, "sqlstate 23505"),
		strings.Contains(s, "error 1062"), strings.Contains(s, "duplicate entry"): // mysql
		return uniqueViolation
	case strings.Contains(s, "foreign key constraint failed"), // sqlite
		strings.Contains(s, "violates foreign key constraint"), // pg
		strings.Contains(s, "sqlstate 23503"),
		strings.Contains(s, "error 1451"), strings.Contains(s, "error 1452"),
		strings.Contains(s, "a foreign key constraint fails"): // mysql
		return foreignKeyViolation
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
