package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
)

var _ dialects.RoutineReader = Dialect{}

// Routines implements [dialects.RoutineReader] from information_schema
// (ROUTINES and PARAMETERS) for DATABASE(). A procedure and a function may
// share a name; MariaDB's packages are left out. Functions have IN
// parameters only.
func (Dialect) Routines(ctx context.Context, db bun.IDB) ([]*dialects.Routine, error) {
	rows, err := db.QueryContext(ctx, `SELECT ROUTINE_NAME, ROUTINE_TYPE, COALESCE(DTD_IDENTIFIER, ''), COALESCE(ROUTINE_COMMENT, '')
FROM information_schema.ROUTINES
WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE IN ('PROCEDURE', 'FUNCTION')
ORDER BY ROUTINE_NAME, ROUTINE_TYPE`)
	if err != nil {
		return nil, fmt.Errorf("mysql: list routines: %w", err)
	}
	var list []*dialects.Routine
	byKey := map[string]*dialects.Routine{}
	for rows.Next() {
		var name, typ, ret, comment string
		if err := rows.Scan(&name, &typ, &ret, &comment); err != nil {
			rows.Close()
			return nil, fmt.Errorf("mysql: list routines: %w", err)
		}
		r := &dialects.Routine{Name: name, Specific: name, Comment: comment, Type: dialects.Procedure}
		if typ == "FUNCTION" {
			r.Type = dialects.Function
			r.ReturnDBType = ret
			r.ReturnType = dialects.SimpleType(ret)
		}
		list = append(list, r)
		byKey[typ+"\x00"+strings.ToLower(name)] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: list routines: %w", err)
	}
	if len(list) == 0 {
		return list, nil
	}

	rows, err = db.QueryContext(ctx, `SELECT SPECIFIC_NAME, ROUTINE_TYPE, COALESCE(PARAMETER_MODE, ''), COALESCE(PARAMETER_NAME, ''),
	COALESCE(DTD_IDENTIFIER, ''), CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE
FROM information_schema.PARAMETERS
WHERE SPECIFIC_SCHEMA = DATABASE() AND ORDINAL_POSITION > 0 AND ROUTINE_TYPE IN ('PROCEDURE', 'FUNCTION')
ORDER BY SPECIFIC_NAME, ROUTINE_TYPE, ORDINAL_POSITION`)
	if err != nil {
		return nil, fmt.Errorf("mysql: list routine parameters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var specific, typ, mode, name, dbType string
		var length, precision, scale sql.NullInt64
		if err := rows.Scan(&specific, &typ, &mode, &name, &dbType, &length, &precision, &scale); err != nil {
			return nil, fmt.Errorf("mysql: list routine parameters: %w", err)
		}
		r := byKey[typ+"\x00"+strings.ToLower(specific)]
		if r == nil {
			continue
		}
		p := dialects.Param{Name: name, Position: len(r.Params) + 1, DBType: dbType, Type: dialects.SimpleType(dbType), Mode: dialects.ParamIn}
		switch strings.ToUpper(mode) {
		case "OUT":
			p.Mode = dialects.ParamOut
		case "INOUT":
			p.Mode = dialects.ParamInOut
		}
		if p.Type == dialects.TypeString || p.Type == dialects.TypeBinary {
			p.Length = int(length.Int64)
		}
		if p.Type == dialects.TypeDecimal || p.Type == dialects.TypeMoney {
			p.Precision, p.Scale = int(precision.Int64), int(scale.Int64)
		}
		r.Params = append(r.Params, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: list routine parameters: %w", err)
	}
	dialects.SortRoutines(list)
	return list, nil
}
