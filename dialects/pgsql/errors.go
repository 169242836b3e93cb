package pgsql

import (
	"errors"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/portcullis-dev/portcullis/dialects"
)

var (
	// keyColumns reads the columns of a detail "Key (a, b)=(…) …".
	keyColumns = regexp.MustCompile(`^Key \((.+?)\)=\(`)
	// detailTable reads the other table of a foreign key detail: … is not
	// present in table "t" / is still referenced from table "t".
	detailTable = regexp.MustCompile(`(not present in|still referenced from) table "((?:[^"]|"")+)"`)
)

// ClassifyError turns a driver error into a [dialects.ConstraintError] for
// SQLSTATE 23505 (unique; primary key when the constraint is a *_pkey),
// 23503 (foreign key), 23502 (not null) and 23514 (check), and wraps
// [dialects.ErrUnavailable] around connection failures: class 08, 57P01-3
// (shutdown, cannot connect now), 53300 (too many connections), and
// network errors. Class 22 (data exceptions: bad text for a type, out of
// range, too long) gives a [dialects.ValueError]. Other errors are
// returned unchanged, nil stays nil.
func (Dialect) ClassifyError(err error) error {
	if err == nil {
		return nil
	}
	var ce *dialects.ConstraintError
	if errors.As(err, &ce) || errors.Is(err, dialects.ErrUnavailable) {
		return err
	}
	// A connection that could not be made is unavailability, whatever the
	// server answered (a database not accepting connections, starting up,
	// full): it wraps a PgError, so this comes first.
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return dialects.Unavailable(err)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		if dialects.IsConnectionError(err) || pgconn.SafeToRetry(err) {
			return dialects.Unavailable(err)
		}
		return err
	}
	column := pe.ColumnName
	if column == "" {
		if m := keyColumns.FindStringSubmatch(pe.Detail); m != nil {
			first, _, _ := strings.Cut(m[1], ", ")
			column = unquote(first)
		}
	}
	switch pe.Code {
	case "23505":
		kind := dialects.ConstraintUnique
		if strings.HasSuffix(pe.ConstraintName, "_pkey") {
			kind = dialects.ConstraintPrimaryKey
		}
		return dialects.NewConstraintError(err, kind, pe.TableName, pe.ConstraintName, column, "", false)
	case "23503":
		var other string
		referenced := false
		if m := detailTable.FindStringSubmatch(pe.Detail); m != nil {
			other = strings.ReplaceAll(m[2], `""`, `"`)
			referenced = strings.HasPrefix(m[1], "still")
		}
		if referenced {
			column = ""
		}
		return dialects.NewConstraintError(err, dialects.ConstraintForeignKey, pe.TableName, pe.ConstraintName, column, other, referenced)
	case "23502":
		return dialects.NewConstraintError(err, dialects.ConstraintNotNull, pe.TableName, pe.ConstraintName, column, "", false)
	case "23514":
		return dialects.NewConstraintError(err, dialects.ConstraintCheck, pe.TableName, pe.ConstraintName, column, "", false)
	case "57P01", "57P02", "57P03", "53300":
		return dialects.Unavailable(err)
	case "22001":
		return dialects.NewValueError(err, dialects.ValueTooLong, pe.ColumnName)
	case "22003", "22008":
		return dialects.NewValueError(err, dialects.ValueOutOfRange, pe.ColumnName)
	}
	if strings.HasPrefix(pe.Code, "22") {
		return dialects.NewValueError(err, dialects.ValueBadFormat, pe.ColumnName)
	}
	if strings.HasPrefix(pe.Code, "08") {
		return dialects.Unavailable(err)
	}
	return err
}

// unquote removes the double quotes PostgreSQL puts around a name that
// needs them in a detail message.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}
