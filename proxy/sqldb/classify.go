package sqldb

import (
	"errors"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// classify says what a driver error means and gives a message for the
// client. (Provisional until dialects offers ClassifyError.)
func classify(err error) (errKind, string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.Detail != "" {
			msg += " (" + pe.Detail + ")"
		}
		switch {
		case pe.Code == "23505", pe.Code == "23503", pe.Code == "23P01":
			return errConflict, msg
		case pe.Code == "23502":
			return errNotNull, msg
		case pe.Code == "23514", strings.HasPrefix(pe.Code, "22"), pe.Code == "42883", pe.Code == "42804":
			return errInvalid, msg
		case pe.Code == "42P01", pe.Code == "42703":
			return errSchemaChange, msg
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"), pe.Code == "53300":
			return errUnavailable, msg
		}
		return errOther, msg
	}
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1062, 1451, 1452, 1216, 1217, 1557, 1586:
			return errConflict, me.Message
		case 1048, 1364:
			return errNotNull, me.Message
		case 1264, 1265, 1292, 1366, 1406, 1367, 3819, 4025, 1690, 3140, 1411:
			return errInvalid, me.Message
		case 1146, 1054:
			return errSchemaChange, me.Message
		case 1040, 1053, 2002, 2003, 2006, 2013, 1927:
			return errUnavailable, me.Message
		}
		return errOther, me.Message
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		msg := se.Error()
		switch se.Code() {
		case 2067, 1555, 787, 1811: // UNIQUE, PRIMARYKEY, FOREIGNKEY, TRIGGER
			return errConflict, msg
		case 1299: // NOTNULL
			return errNotNull, msg
		case 275, 3091: // CHECK, DATATYPE
			return errInvalid, msg
		case 14: // CANTOPEN
			return errUnavailable, msg
		}
		if strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column") {
			return errSchemaChange, msg
		}
		return errOther, msg
	}
	if isUnavailable(err) {
		return errUnavailable, err.Error()
	}
	return errOther, err.Error()
}
