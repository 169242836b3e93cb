package sqlite

import (
	"errors"
	"regexp"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/portcullis-dev/portcullis/dialects"
)

var (
	// failedOn finds "… constraint failed: t.a, t.b" in a message.
	failedOn = regexp.MustCompile(`constraint failed: ([^()]+?)(?: \(\d+\))?$`)
	// checkName finds a named CHECK constraint; an unnamed one reports its
	// expression, which is not repeated in messages.
	checkName = regexp.MustCompile(`CHECK constraint failed: (\w+)(?: \(\d+\))?$`)
)

// ClassifyError turns a driver error into a [dialects.ConstraintError] for
// SQLITE_CONSTRAINT_UNIQUE, PRIMARYKEY, FOREIGNKEY, NOTNULL and CHECK, and
// wraps [dialects.ErrUnavailable] around SQLITE_BUSY, SQLITE_LOCKED,
// SQLITE_CANTOPEN, SQLITE_IOERR and connection failures. A value of the
// wrong type for a STRICT table or a rowid, or one too big, gives a
// [dialects.ValueError]. Other errors are
// returned unchanged, nil stays nil. SQLite does not say which side of a
// foreign key failed.
func (Dialect) ClassifyError(err error) error {
	if err == nil {
		return nil
	}
	var ce *dialects.ConstraintError
	if errors.As(err, &ce) || errors.Is(err, dialects.ErrUnavailable) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		if dialects.IsConnectionError(err) {
			return dialects.Unavailable(err)
		}
		return err
	}
	code := se.Code()
	var table, column string
	var columns []string
	if m := failedOn.FindStringSubmatch(se.Error()); m != nil {
		for _, part := range strings.Split(m[1], ", ") {
			t, c, ok := strings.Cut(part, ".")
			if !ok {
				columns = nil
				break
			}
			table = t
			columns = append(columns, c)
		}
		if len(columns) > 0 {
			column = columns[0]
		}
	}
	switch code {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return dialects.NewConstraintError(err, dialects.ConstraintUnique, table, "", column, "", false)
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return dialects.NewConstraintError(err, dialects.ConstraintPrimaryKey, table, "", column, "", false)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return dialects.NewConstraintError(err, dialects.ConstraintForeignKey, "", "", "", "", false)
	case sqlite3.SQLITE_CONSTRAINT_NOTNULL:
		return dialects.NewConstraintError(err, dialects.ConstraintNotNull, table, "", column, "", false)
	case sqlite3.SQLITE_CONSTRAINT_CHECK:
		name := ""
		if m := checkName.FindStringSubmatch(se.Error()); m != nil {
			name = m[1]
		}
		return dialects.NewConstraintError(err, dialects.ConstraintCheck, "", name, "", "", false)
	}
	switch code {
	case sqlite3.SQLITE_CONSTRAINT_DATATYPE, sqlite3.SQLITE_MISMATCH:
		return dialects.NewValueError(err, dialects.ValueBadFormat, column)
	case sqlite3.SQLITE_TOOBIG:
		return dialects.NewValueError(err, dialects.ValueTooLong, "")
	}
	switch code & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
		return dialects.Unavailable(err)
	}
	return err
}
