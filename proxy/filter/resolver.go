package filter

import (
	"database/sql/driver"
	"errors"

	"github.com/uptrace/bun/schema"
)

// Kind is the broad type of a field, which decides how values are coerced
// before they are bound and which operators the field supports.
type Kind uint8

// The field kinds. The zero Kind is KindOther.
const (
	// KindOther is any type the compiler knows nothing about (JSON, UUID,
	// blobs, enums…): values are bound as written, strings as strings,
	// numbers as numbers, true and false as booleans.
	KindOther Kind = iota
	// KindString is text (char, varchar, text…): every value is bound as a
	// string; numbers keep their spelling ("007" stays "007").
	KindString
	// KindInteger is an integer type: values must be numbers, numeric
	// strings or true/false (bound as 1/0).
	KindInteger
	// KindFloat is a floating-point or decimal type: as KindInteger.
	// Decimals are bound exactly, never through float64.
	KindFloat
	// KindBoolean is a boolean (including MySQL's tinyint(1) and SQLite's
	// BOOLEAN affinity): true/false, 1/0, or the strings true, false, t, f,
	// yes, no, y, n, on, off, 1, 0 in any case.
	KindBoolean
	// KindTime is a date, time, datetime or timestamp: values must be
	// strings the database can read, such as 2024-01-31, 2024-01-31 13:45:00
	// or 2024-01-31T13:45:00Z; they are checked and bound as written.
	KindTime
)

// String returns the kind's name in lower case ("integer").
func (k Kind) String() string {
	switch k {
	case KindOther:
		return "other"
	case KindString:
		return "string"
	case KindInteger:
		return "integer"
	case KindFloat:
		return "float"
	case KindBoolean:
		return "boolean"
	case KindTime:
		return "date/time"
	}
	return "Kind(?)"
}

// Resolver maps field names written by a client onto SQL. The sqldb backend
// implements it from the introspected schema (and the caller's field
// grants); only what it returns ever becomes query text.
//
// Field receives the path as parsed: one element for a column of the table
// being queried ("name"), more for a field of a related table
// ("customer_by_customer_id", "name"), unquoted and with the client's
// spelling. It returns an error wrapping ErrUnknownField for a name that does
// not exist or may not be used.
//
// A typical implementation, for a table queried as "t" with a belongs-to
// relation "customer" (orders.customer_id → customers.id):
//
//	func (r orders) Field(path []string) (filter.Field, error) {
//		switch {
//		case len(path) == 1:
//			col, ok := r.columns[strings.ToLower(path[0])]
//			if !ok {
//				return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, path[0])
//			}
//			return filter.Field{Expr: bun.SafeQuery("?.?", bun.Ident("t"), bun.Ident(col.Name)), Kind: col.Kind}, nil
//		case len(path) == 2 && strings.EqualFold(path[0], "customer"):
//			col, ok := r.customerColumns[strings.ToLower(path[1])]
//			if !ok {
//				return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, path[1])
//			}
//			return filter.Field{
//				Expr: bun.SafeQuery("?.?", bun.Ident("r"), bun.Ident(col.Name)),
//				Kind: col.Kind,
//				Related: &filter.Related{
//					From: bun.SafeQuery("? AS ?", bun.Ident("customers"), bun.Ident("r")),
//					On:   bun.SafeQuery("?.? = ?.?", bun.Ident("r"), bun.Ident("id"), bun.Ident("t"), bun.Ident("customer_id")),
//				},
//			}, nil
//		}
//		return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, strings.Join(path, "."))
//	}
//
// A has-many relation looks the same with the join reversed
// (r.order_id = t.id); a many-to-many one puts the junction table in From
// ("? AS ? JOIN ? AS ? ON …").
type Resolver interface {
	Field(path []string) (Field, error)
}

// ResolverFunc adapts a function to the Resolver interface.
type ResolverFunc func(path []string) (Field, error)

// Field implements Resolver.
func (f ResolverFunc) Field(path []string) (Field, error) { return f(path) }

// Field is how to refer to a field in SQL.
type Field struct {
	// Expr is the column expression, such as bun.Ident("name") or
	// bun.SafeQuery("?.?", bun.Ident("t"), bun.Ident("name")). It must be
	// built from trusted names only (bun.Ident quotes them).
	Expr schema.QueryAppender
	// Kind decides how values are coerced and which operators apply.
	Kind Kind
	// Related is set for a field of another table. A predicate on it
	// compiles to
	//
	//	EXISTS (SELECT 1 FROM <From> WHERE <On> AND <predicate>)
	//
	// so it holds when at least one related row satisfies the predicate,
	// and NOT turns it into "no related row satisfies it". Each predicate
	// gets its own EXISTS: "items.qty > 1 and items.price < 5" asks for an
	// item with qty > 1 and an item (maybe another) with price < 5. Related
	// fields cannot be used in fields, order, group or having.
	Related *Related
}

// Related describes how to reach a related table from a row of the table
// being queried.
type Related struct {
	// From is the FROM item of the EXISTS sub-query, aliased so that it
	// cannot be confused with the outer table:
	// bun.SafeQuery("? AS ?", bun.Ident("customers"), bun.Ident("r")).
	From schema.QueryAppender
	// On correlates the related row with the outer row; it must qualify the
	// outer table's columns with the outer table's name or alias:
	// bun.SafeQuery("?.? = ?.?", bun.Ident("r"), bun.Ident("id"), bun.Ident("t"), bun.Ident("customer_id")).
	On schema.QueryAppender
}

// Decimal is a number literal from a filter that is bound exactly, without a
// trip through float64 (12345678901234567890.5, 0.1). Value.As produces it
// in the form -?digits.digits or -?digits. It implements
// schema.QueryAppender for bun and driver.Valuer (as a string) for
// database/sql.
type Decimal string

// AppendQuery implements schema.QueryAppender. It appends the number
// verbatim after checking that it is one (so a Decimal built from anything
// else fails the query instead of reaching SQL).
func (d Decimal) AppendQuery(_ schema.QueryGen, b []byte) ([]byte, error) {
	if !isDecimalText(string(d)) {
		return b, errBadDecimal
	}
	return append(b, d...), nil
}

var errBadDecimal = errors.New("filter: Decimal holds text that is not a decimal number")

// isDecimalText reports whether s is -?digits or -?digits.digits.
func isDecimalText(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case isDigit(s[i]):
			digits++
		case s[i] == '.' && !dot && digits > 0 && i+1 < len(s):
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// Value implements driver.Valuer.
func (d Decimal) Value() (driver.Value, error) { return string(d), nil }
