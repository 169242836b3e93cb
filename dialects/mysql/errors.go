package mysql

import (
	"errors"
	"regexp"
	"strings"

	driver "github.com/go-sql-driver/mysql"

	"github.com/portcullis-dev/portcullis/dialects"
)

var (
	// dupKey reads the key of "Duplicate entry '…' for key 'k'" (MySQL 8
	// writes 'table.k').
	dupKey = regexp.MustCompile(`for key '((?:[^']|'')+)'$`)
	// fkParts reads "(`db`.`child`, CONSTRAINT `fk` FOREIGN KEY (`col`, …)
	// REFERENCES `parent` (…)".
	fkParts = regexp.MustCompile("\\(`(?:[^`]|``)+`\\.`((?:[^`]|``)+)`, CONSTRAINT `((?:[^`]|``)+)` FOREIGN KEY \\(`((?:[^`]|``)+)`.*?\\) REFERENCES `((?:[^`]|``)+)`")
	// quotedName reads the first 'name' or `name` of a message.
	quotedName = regexp.MustCompile("['`]((?:[^'`])+)['`]")
	// forColumn reads the column of a value error.
	forColumn = regexp.MustCompile("(?i)for column [`']?((?:[^`']|'')+?)[`']?(?: at row \\d+)?$")
)

// ClassifyError turns a driver error into a [dialects.ConstraintError] for
// MySQL and MariaDB errors 1062/1586/1022 (duplicate key; primary key when
// the key is PRIMARY), 1451/1452/1216/1217 (foreign key), 1048/1364/1138
// (null in a NOT NULL column), 3819 and 4025 (check), and wraps
// [dialects.ErrUnavailable] around 1040 (too many connections), 1053
// (shutdown), 1927 (connection killed), 2002/2003/2006/2013, the driver's invalid-connection error
// and network errors. 1366/1292/1265/1367/3140 (a value that does not fit
// the type), 1264 (out of range) and 1406 (too long) give a
// [dialects.ValueError]. Other errors are returned unchanged, nil stays
// nil.
func (Dialect) ClassifyError(err error) error {
	if err == nil {
		return nil
	}
	var ce *dialects.ConstraintError
	if errors.As(err, &ce) || errors.Is(err, dialects.ErrUnavailable) {
		return err
	}
	var me *driver.MySQLError
	if !errors.As(err, &me) {
		if errors.Is(err, driver.ErrInvalidConn) || dialects.IsConnectionError(err) {
			return dialects.Unavailable(err)
		}
		return err
	}
	msg := me.Message
	switch me.Number {
	case 1062, 1586, 1022:
		key := ""
		if m := dupKey.FindStringSubmatch(msg); m != nil {
			key = strings.ReplaceAll(m[1], "''", "'")
			if i := strings.LastIndexByte(key, '.'); i >= 0 {
				key = key[i+1:]
			}
		}
		if key == "PRIMARY" {
			return dialects.NewConstraintError(err, dialects.ConstraintPrimaryKey, "", key, "", "", false)
		}
		return dialects.NewConstraintError(err, dialects.ConstraintUnique, "", key, "", "", false)
	case 1451, 1452, 1216, 1217:
		referenced := me.Number == 1451 || me.Number == 1217
		if m := fkParts.FindStringSubmatch(msg); m != nil {
			child, name, col, parent := unq(m[1]), unq(m[2]), unq(m[3]), unq(m[4])
			if referenced {
				return dialects.NewConstraintError(err, dialects.ConstraintForeignKey, parent, name, "", child, true)
			}
			return dialects.NewConstraintError(err, dialects.ConstraintForeignKey, child, name, col, parent, false)
		}
		return dialects.NewConstraintError(err, dialects.ConstraintForeignKey, "", "", "", "", referenced)
	case 1048, 1364:
		col := ""
		if m := quotedName.FindStringSubmatch(msg); m != nil {
			col = m[1]
		}
		return dialects.NewConstraintError(err, dialects.ConstraintNotNull, "", "", col, "", false)
	case 1138:
		return dialects.NewConstraintError(err, dialects.ConstraintNotNull, "", "", "", "", false)
	case 3819, 4025:
		name := ""
		if m := quotedName.FindStringSubmatch(msg); m != nil {
			name = m[1]
		}
		return dialects.NewConstraintError(err, dialects.ConstraintCheck, "", name, "", "", false)
	case 1406:
		return dialects.NewValueError(err, dialects.ValueTooLong, columnOf(msg))
	case 1264:
		return dialects.NewValueError(err, dialects.ValueOutOfRange, columnOf(msg))
	case 1366, 1292, 1265, 1367, 3140:
		return dialects.NewValueError(err, dialects.ValueBadFormat, columnOf(msg))
	case 1040, 1053, 1927, 2002, 2003, 2006, 2013:
		return dialects.Unavailable(err)
	}
	return err
}

// columnOf reads "… for column 'c' …" in a value error.
func columnOf(msg string) string {
	if m := forColumn.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

func unq(s string) string { return strings.ReplaceAll(s, "``", "`") }
