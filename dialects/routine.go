package dialects

import (
	"context"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// RoutineType says whether a stored routine is a procedure or a function.
type RoutineType string

// The routine types.
const (
	Procedure RoutineType = "procedure"
	Function  RoutineType = "function"
)

// ParamMode is the direction of a routine parameter, spelled as
// DreamFactory reports it.
type ParamMode string

// The parameter modes.
const (
	ParamIn    ParamMode = "IN"
	ParamOut   ParamMode = "OUT"
	ParamInOut ParamMode = "INOUT"
)

// Routine is one stored procedure or function of the database (of the
// current schema on PostgreSQL), as [RoutineReader] reads it. Every name in
// it comes from the database's catalog.
type Routine struct {
	// Name is the routine's name as the database spells it.
	Name string
	// Type is procedure or function.
	Type RoutineType
	// Specific tells overloads apart (PostgreSQL allows several functions
	// of one name with different parameters): the catalog's identifier of
	// this one.
	Specific string
	// Params are the parameters in declared order, without the return
	// value (and without the result columns of a PostgreSQL RETURNS TABLE).
	Params []Param
	// ReturnType is a function's simple return type; empty for procedures
	// and for functions that return nothing (void), rows (ReturnsSet) or a
	// record of OUT parameters.
	ReturnType FieldType
	// ReturnDBType is the native return type ("integer", "SETOF record",
	// "varchar(20)"); empty for procedures.
	ReturnDBType string
	// ReturnsSet is true for functions that return rows (PostgreSQL SETOF
	// and RETURNS TABLE).
	ReturnsSet bool
	// ReturnsVoid is true for functions that return nothing.
	ReturnsVoid bool
	// Comment is the routine's comment, where the engine keeps one.
	Comment string
}

// Param is one parameter of a routine.
type Param struct {
	// Name is the parameter's name; PostgreSQL allows unnamed parameters
	// (empty).
	Name string
	// Position is the 1-based position among the routine's parameters.
	Position int
	// Mode is IN, OUT or INOUT (PostgreSQL VARIADIC reads as IN).
	Mode ParamMode
	// Type is the simple type of DBType.
	Type FieldType
	// DBType is the native type as the catalog writes it.
	DBType string
	// Length, Precision and Scale are the declared sizes, where the engine
	// keeps them (MySQL does; PostgreSQL drops them from parameters).
	Length    int
	Precision int
	Scale     int
	// HasDefault is true when the parameter may be left out of a call
	// (PostgreSQL DEFAULT); Default is the default's text when known.
	HasDefault bool
	Default    *string
}

// IsInput reports whether the caller passes a value (IN and INOUT).
func (p Param) IsInput() bool { return p.Mode != ParamOut }

// IsOutput reports whether the call returns a value in it (OUT and INOUT).
func (p Param) IsOutput() bool { return p.Mode != ParamIn }

// Param returns the parameter called name (case-insensitive), or nil.
func (r *Routine) Param(name string) *Param {
	for i := range r.Params {
		if r.Params[i].Name != "" && strings.EqualFold(r.Params[i].Name, name) {
			return &r.Params[i]
		}
	}
	return nil
}

// HasOutput reports whether any parameter is OUT or INOUT.
func (r *Routine) HasOutput() bool {
	for _, p := range r.Params {
		if p.IsOutput() {
			return true
		}
	}
	return false
}

// RoutineReader is implemented by dialects whose databases have stored
// procedures and functions (PostgreSQL and MySQL; SQLite has none).
type RoutineReader interface {
	// Routines lists the procedures and functions a client may call, with
	// their parameters, sorted by name (case-insensitively) and type.
	// Trigger functions, aggregates and the members of extensions are
	// left out.
	Routines(ctx context.Context, db bun.IDB) ([]*Routine, error)
}

// SortRoutines orders routines as [RoutineReader.Routines] returns them:
// by name (case-insensitively, then byte-wise), type and specific name
// (shorter first, so that numeric ones sort as numbers).
func SortRoutines(list []*Routine) {
	slices.SortFunc(list, func(a, b *Routine) int {
		if c := compareNames(a.Name, b.Name); c != 0 {
			return c
		}
		if c := strings.Compare(string(a.Type), string(b.Type)); c != 0 {
			return c
		}
		// Specific names may be numbers (PostgreSQL oids): shorter first.
		if len(a.Specific) != len(b.Specific) {
			return len(a.Specific) - len(b.Specific)
		}
		return strings.Compare(a.Specific, b.Specific)
	})
}
