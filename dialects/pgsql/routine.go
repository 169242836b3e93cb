package pgsql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
)

var _ dialects.RoutineReader = Dialect{}

// routines filters pg_proc (as p, joined with pg_namespace as n) to the
// functions and procedures of the current schema that a client can call:
// no aggregates or window functions, no trigger functions, no members of
// extensions.
const routines = `n.nspname = current_schema() AND p.prokind IN ('f', 'p')
	AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
	AND NOT EXISTS (SELECT 1 FROM pg_depend AS dep WHERE dep.classid = 'pg_proc'::regclass AND dep.objid = p.oid AND dep.deptype = 'e')`

// Routines implements [dialects.RoutineReader] from pg_proc. Overloaded
// functions are listed once per signature (Specific is the oid). The
// result columns of RETURNS TABLE are not parameters; VARIADIC parameters
// read as IN. It needs PostgreSQL 11 or later (procedures).
func (Dialect) Routines(ctx context.Context, db bun.IDB) ([]*dialects.Routine, error) {
	rows, err := db.QueryContext(ctx, `SELECT p.oid::text, p.proname, p.prokind::text, p.proretset,
	p.prorettype = 'void'::regtype, p.prorettype = 'record'::regtype, format_type(p.prorettype, NULL),
	COALESCE(pg_get_function_result(p.oid), ''), COALESCE(ds.description, '')
FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
LEFT JOIN pg_description AS ds ON ds.objoid = p.oid AND ds.classoid = 'pg_proc'::regclass AND ds.objsubid = 0
WHERE `+routines+`
ORDER BY p.proname, p.oid`)
	if err != nil {
		return nil, fmt.Errorf("pgsql: list routines: %w", err)
	}
	var list []*dialects.Routine
	byOID := map[string]*dialects.Routine{}
	for rows.Next() {
		var oid, name, kind, retType, result, comment string
		var set, void, record bool
		if err := rows.Scan(&oid, &name, &kind, &set, &void, &record, &retType, &result, &comment); err != nil {
			rows.Close()
			return nil, fmt.Errorf("pgsql: list routines: %w", err)
		}
		r := &dialects.Routine{Name: name, Specific: oid, Comment: comment}
		if kind == "p" {
			r.Type = dialects.Procedure
		} else {
			r.Type = dialects.Function
			r.ReturnDBType = result
			r.ReturnsSet = set
			r.ReturnsVoid = void && !set
			if !set && !void && !record {
				r.ReturnType = dialects.SimpleType(retType)
			}
		}
		list = append(list, r)
		byOID[oid] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgsql: list routines: %w", err)
	}
	if len(list) == 0 {
		return list, nil
	}

	rows, err = db.QueryContext(ctx, `SELECT p.oid::text, a.ord::int, COALESCE(p.proargnames[a.ord], ''),
	COALESCE(p.proargmodes[a.ord]::text, 'i'), format_type(a.typ, NULL), pg_get_function_arg_default(p.oid, a.ord::int)
FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace,
	LATERAL unnest(COALESCE(p.proallargtypes, p.proargtypes::oid[])) WITH ORDINALITY AS a(typ, ord)
WHERE `+routines+`
ORDER BY p.oid, a.ord`)
	if err != nil {
		return nil, fmt.Errorf("pgsql: list routine parameters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var oid, name, mode, typ string
		var ord int
		var def sql.NullString
		if err := rows.Scan(&oid, &ord, &name, &mode, &typ, &def); err != nil {
			return nil, fmt.Errorf("pgsql: list routine parameters: %w", err)
		}
		r := byOID[oid]
		if r == nil || mode == "t" {
			continue
		}
		p := dialects.Param{Name: name, Position: len(r.Params) + 1, Type: dialects.SimpleType(typ), DBType: typ}
		switch mode {
		case "o":
			p.Mode = dialects.ParamOut
		case "b":
			p.Mode = dialects.ParamInOut
		default: // i, v
			p.Mode = dialects.ParamIn
		}
		if def.Valid {
			p.HasDefault = true
			if v, _ := dialects.ParseDefault(def.String, false); v != nil {
				p.Default = v
			}
		}
		r.Params = append(r.Params, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgsql: list routine parameters: %w", err)
	}
	dialects.SortRoutines(list)
	return list, nil
}
