package sqldb

import (
	"errors"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// classifyStatement says what a failed statement's error means when the
// dialect's ClassifyError found neither a constraint nor an unreachable
// database: a value the column cannot hold (400), or a table or column
// that is gone (the schema changed behind the cache). It gives the
// driver's message for the client.
func classifyStatement(err error) (errKind, string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "22"), pe.Code == "42883", pe.Code == "42804",
			pe.Code == "42803": // grouping_error: a column neither grouped nor aggregated
			return errInvalid, pe.Message
		case pe.Code == "42P01", pe.Code == "42703":
			return errSchemaChange, pe.Message
		}
		return errOther, pe.Message
	}
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1264, 1265, 1292, 1366, 1406, 1367, 4025, 1690, 3140, 1411,
			1055, 1056, 1111, 1463: // grouping: not grouped, wrong group field, misused aggregate, non-grouping in having
			return errInvalid, me.Message
		case 1054:
			// A column named in having or group that the grouped result does
			// not hold is the request's mistake, not a schema change.
			if m := strings.ToLower(me.Message); strings.Contains(m, "'having") || strings.Contains(m, "group statement") {
				return errInvalid, me.Message
			}
			return errSchemaChange, me.Message
		case 1146:
			return errSchemaChange, me.Message
		}
		return errOther, me.Message
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		msg := se.Error()
		switch {
		case se.Code()&0xff == 20: // SQLITE_MISMATCH
			return errInvalid, msg
		case strings.Contains(msg, "no such table"), strings.Contains(msg, "no such column"):
			return errSchemaChange, msg
		}
		return errOther, msg
	}
	return errOther, err.Error()
}
