package filter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrUnknownField is the error a Resolver returns (possibly wrapped) for a
// name that is not a field of the table or of one of its relations. The
// compiler wraps it in a *CompileError, so callers can test for it with
// errors.Is and answer 400 the way DreamFactory does
// ("Invalid or unparsable field in filter request: 'x'").
var ErrUnknownField = errors.New("unknown field")

// SyntaxError reports a malformed query parameter: a filter, having, fields,
// order, group or ids value that does not follow the grammar, or one that
// breaks a limit (see Limits). Its message is meant for the client: it names
// the parameter, the byte offset and what went wrong, for example
//
//	filter: unexpected ')' at position 14; expected a value
type SyntaxError struct {
	// Param is the query parameter being parsed: "filter", "having",
	// "fields", "order", "group" or "ids".
	Param string
	// Offset is the 0-based byte offset in the parameter where the problem
	// was found.
	Offset int
	// Msg says what was found ("unexpected ')'").
	Msg string
	// Expected, when not empty, says what the grammar allows at Offset
	// ("a value").
	Expected string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	var b strings.Builder
	if e.Param != "" {
		b.WriteString(e.Param)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	b.WriteString(" at position ")
	b.WriteString(strconv.Itoa(e.Offset))
	if e.Expected != "" {
		b.WriteString("; expected ")
		b.WriteString(e.Expected)
	}
	return b.String()
}

// CompileError reports a parsed expression that cannot be turned into SQL for
// the table at hand: an unknown field (Err wraps the Resolver's error, usually
// ErrUnknownField), a value that does not fit the field's kind ("'abc' is not
// a number"), or an operator the field's kind does not support. Like
// SyntaxError its message is safe to show to the client.
type CompileError struct {
	// Field is the field as written by the client (dotted for related fields,
	// "count(*)" style for aggregates).
	Field string
	// Offset is the 0-based byte offset in the parameter of the part at fault
	// (the field, or the offending value).
	Offset int
	// Msg says what is wrong.
	Msg string
	// Err is the underlying cause, if any (for example the Resolver's error).
	Err error
}

// Error implements error.
func (e *CompileError) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(quoteForMessage(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	b.WriteString(" at position ")
	b.WriteString(strconv.Itoa(e.Offset))
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *CompileError) Unwrap() error { return e.Err }

// maxQuoted is how many runes of client text an error message repeats.
const maxQuoted = 40

// quoteForMessage renders client text for an error message: single-quoted,
// shortened to maxQuoted runes, with quotes and backslashes escaped by a
// backslash and control characters and invalid UTF-8 as \xNN, so a message
// is unambiguous and never carries raw newlines or NULs.
func quoteForMessage(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n == maxQuoted {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
		n++
	}
	b.WriteByte('\'')
	return b.String()
}
