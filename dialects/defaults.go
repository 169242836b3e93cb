package dialects

import (
	"regexp"
	"strings"
)

var (
	numericLiteral = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)
	currentFunc    = regexp.MustCompile(`^(?i)(current_timestamp|now|localtimestamp|transaction_timestamp|statement_timestamp|current_date|curdate|current_time|curtime|localtime)\s*(\(\s*\d*\s*\))?$`)
)

// ParseDefault turns a column default as an engine reports it (SQLite's
// dflt_value, PostgreSQL's pg_get_expr, MariaDB's COLUMN_DEFAULT) into the
// form of [Column.Default]: a quoted literal loses its quotes and any
// PostgreSQL cast ('abc'::character varying gives abc), numbers and
// booleans keep their text, NULL gives nil, the current-time functions are
// spelled CURRENT_TIMESTAMP, CURRENT_DATE or CURRENT_TIME, and anything
// else is returned verbatim as an expression. backslash says the engine
// escapes with backslashes inside string literals (MySQL and MariaDB).
func ParseDefault(raw string, backslash bool) (value *string, isExpr bool) {
	s := unwrapParens(strings.TrimSpace(raw))
	if s == "" {
		return nil, false
	}
	if s[0] == '\'' {
		if lit, rest, ok := cutQuoted(s, backslash); ok {
			if rest = strings.TrimSpace(rest); rest == "" || strings.HasPrefix(rest, "::") {
				return &lit, false
			}
		}
		return &s, true
	}
	if i := strings.Index(s, "::"); i > 0 {
		head := unwrapParens(strings.TrimSpace(s[:i]))
		if strings.EqualFold(head, "NULL") || numericLiteral.MatchString(head) {
			s = head
		}
	}
	switch {
	case strings.EqualFold(s, "NULL"):
		return nil, false
	case numericLiteral.MatchString(s):
		v := strings.TrimPrefix(s, "+")
		return &v, false
	case strings.EqualFold(s, "true"), strings.EqualFold(s, "false"):
		v := strings.ToLower(s)
		return &v, false
	}
	if m := currentFunc.FindStringSubmatch(s); m != nil {
		var v string
		switch strings.ToLower(m[1]) {
		case "current_date", "curdate":
			v = "CURRENT_DATE"
		case "current_time", "curtime", "localtime":
			v = "CURRENT_TIME"
		default:
			v = "CURRENT_TIMESTAMP"
		}
		return &v, true
	}
	return &s, true
}

// unwrapParens removes parentheses that enclose all of s: "((-1))" gives
// "-1"; "(a) + (b)" is left alone.
func unwrapParens(s string) string {
	for len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		depth := 0
		inQuote := false
		whole := true
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\'':
				inQuote = !inQuote
			case inQuote:
			case c == '(':
				depth++
			case c == ')':
				depth--
				if depth == 0 && i != len(s)-1 {
					whole = false
				}
			}
			if !whole {
				break
			}
		}
		if !whole {
			return s
		}
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// cutQuoted reads the single-quoted literal at the start of s and returns
// its value and the text after it.
func cutQuoted(s string, backslash bool) (lit, rest string, ok bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case backslash && c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			default:
				b.WriteByte(s[i])
			}
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\'':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
