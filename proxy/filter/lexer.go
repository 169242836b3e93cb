package filter

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tkEOF    tokKind = iota
	tkWord           // identifier or keyword: letter or _ then letters, digits, _ and $
	tkQIdent         // `name` or [name], decoded
	tkDQ             // "text", decoded: a name in name position, a string in value position
	tkString         // 'text', decoded
	tkNumber         // -12, 3.5, .5, 1e3
	tkBare           // an unquoted value (value position only): name = John, d > 2024-01-31
	tkEq             // =
	tkNe             // != or <>
	tkLt             // <
	tkLe             // <=
	tkGt             // >
	tkGe             // >=
	tkAndAnd         // &&
	tkOrOr           // ||
	tkLParen         // (
	tkRParen         // )
	tkComma          // ,
	tkDot            // .
	tkStar           // *
)

// token is one lexical token; off and end are byte offsets into the source.
type token struct {
	kind tokKind
	off  int
	end  int
	val  string // decoded text for names, strings, numbers, words and bare values
}

// scanMode tells the scanner what the parser expects, because the same text
// lexes differently in a value position ("2024-01-31" is one bare value
// there, but a number followed by garbage elsewhere; "x" is a string there and
// a quoted name elsewhere).
type scanMode uint8

const (
	modeName  scanMode = iota // names, keywords, operators, punctuation
	modeValue                 // as modeName, plus quoted strings and bare values
)

// scanner turns a parameter's text into tokens on demand. It is stateless
// apart from the source: scan takes the offset to start from, so the parser
// can re-scan a token in another mode.
type scanner struct {
	src   string
	param string
}

func (s *scanner) errAt(off int, msg, expected string) *SyntaxError {
	return &SyntaxError{Param: s.param, Offset: off, Msg: msg, Expected: expected}
}

// skipSpace returns the offset of the first byte at or after off that is not
// white space.
func (s *scanner) skipSpace(off int) int {
	for off < len(s.src) {
		c := s.src[off]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			off++
			continue
		}
		if c < utf8.RuneSelf {
			return off
		}
		r, size := utf8.DecodeRuneInString(s.src[off:])
		if r == utf8.RuneError || !unicode.IsSpace(r) {
			return off
		}
		off += size
	}
	return off
}

// scan returns the token starting at or after off.
func (s *scanner) scan(off int, mode scanMode) (token, error) {
	off = s.skipSpace(off)
	if off >= len(s.src) {
		return token{kind: tkEOF, off: len(s.src), end: len(s.src)}, nil
	}
	c := s.src[off]
	switch c {
	case '(':
		return token{kind: tkLParen, off: off, end: off + 1}, nil
	case ')':
		return token{kind: tkRParen, off: off, end: off + 1}, nil
	case ',':
		return token{kind: tkComma, off: off, end: off + 1}, nil
	case '\'':
		return s.scanQuoted(off, tkString)
	case '"':
		if mode == modeValue {
			return s.scanQuoted(off, tkString)
		}
		return s.scanQuoted(off, tkDQ)
	case '`':
		return s.scanQuoted(off, tkQIdent)
	case '[':
		return s.scanQuoted(off, tkQIdent)
	}
	if mode == modeValue && isBareByte(s.src, off) {
		return s.scanBare(off)
	}
	switch c {
	case '.':
		if off+1 < len(s.src) && isDigit(s.src[off+1]) {
			return s.scanNumber(off)
		}
		return token{kind: tkDot, off: off, end: off + 1}, nil
	case '*':
		return token{kind: tkStar, off: off, end: off + 1}, nil
	case '=':
		return token{kind: tkEq, off: off, end: off + 1}, nil
	case '!':
		if off+1 < len(s.src) && s.src[off+1] == '=' {
			return token{kind: tkNe, off: off, end: off + 2}, nil
		}
	case '<':
		if off+1 < len(s.src) {
			switch s.src[off+1] {
			case '=':
				return token{kind: tkLe, off: off, end: off + 2}, nil
			case '>':
				return token{kind: tkNe, off: off, end: off + 2}, nil
			}
		}
		return token{kind: tkLt, off: off, end: off + 1}, nil
	case '>':
		if off+1 < len(s.src) && s.src[off+1] == '=' {
			return token{kind: tkGe, off: off, end: off + 2}, nil
		}
		return token{kind: tkGt, off: off, end: off + 1}, nil
	case '&':
		if off+1 < len(s.src) && s.src[off+1] == '&' {
			return token{kind: tkAndAnd, off: off, end: off + 2}, nil
		}
	case '|':
		if off+1 < len(s.src) && s.src[off+1] == '|' {
			return token{kind: tkOrOr, off: off, end: off + 2}, nil
		}
	case '-':
		if off+1 < len(s.src) && (isDigit(s.src[off+1]) || s.src[off+1] == '.') {
			return s.scanNumber(off)
		}
	}
	if isDigit(c) {
		return s.scanNumber(off)
	}
	r, size := utf8.DecodeRuneInString(s.src[off:])
	if isWordStart(r) {
		end := off + size
		for end < len(s.src) {
			r, size := utf8.DecodeRuneInString(s.src[end:])
			if !isWordPart(r) {
				break
			}
			end += size
		}
		return token{kind: tkWord, off: off, end: end, val: s.src[off:end]}, nil
	}
	return token{}, s.badChar(off)
}

// badChar reports the character at off as not allowed there.
func (s *scanner) badChar(off int) *SyntaxError {
	r, size := utf8.DecodeRuneInString(s.src[off:])
	switch {
	case r == 0:
		return s.errAt(off, "NUL byte", "")
	case r == utf8.RuneError && size == 1:
		return s.errAt(off, "invalid UTF-8", "")
	case r < 0x20 || r == 0x7f:
		return s.errAt(off, "control character "+quoteForMessage(string(r)), "")
	case r == ';':
		return s.errAt(off, "unexpected ';' (statements cannot be chained)", "")
	}
	return s.errAt(off, "unexpected character "+quoteForMessage(string(r)), "")
}

// scanQuoted scans a quoted string or name starting at off. Quotes are
// escaped by doubling them; in '…' and "…" a backslash escapes a following
// backslash or quote (\\ \' \") and is kept as written before anything else,
// so LIKE escapes such as '50\%' reach the pattern unchanged. `…` and […]
// know only doubling of their closing quote.
func (s *scanner) scanQuoted(off int, kind tokKind) (token, error) {
	open := s.src[off]
	closing := open
	if open == '[' {
		closing = ']'
	}
	backslash := open == '\'' || open == '"'
	var b *strings.Builder
	start := off + 1
	i := start
	for i < len(s.src) {
		c := s.src[i]
		switch {
		case c == closing:
			if i+1 < len(s.src) && s.src[i+1] == closing {
				if b == nil {
					b = &strings.Builder{}
				}
				b.WriteString(s.src[start:i])
				b.WriteByte(closing)
				i += 2
				start = i
				continue
			}
			val := s.src[start:i]
			if b != nil {
				b.WriteString(val)
				val = b.String()
			}
			return token{kind: kind, off: off, end: i + 1, val: val}, nil
		case c == '\\' && backslash && i+1 < len(s.src) &&
			(s.src[i+1] == '\\' || s.src[i+1] == '\'' || s.src[i+1] == '"'):
			if b == nil {
				b = &strings.Builder{}
			}
			b.WriteString(s.src[start:i])
			b.WriteByte(s.src[i+1])
			i += 2
			start = i
			continue
		case c == 0:
			return token{}, s.errAt(i, "NUL byte in quoted text", "")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s.src[i:])
			if r == utf8.RuneError && size == 1 {
				return token{}, s.errAt(i, "invalid UTF-8 in quoted text", "")
			}
			i += size
			continue
		}
		i++
	}
	what := "unterminated string"
	if kind == tkQIdent {
		what = "unterminated quoted name"
	}
	return token{}, s.errAt(off, what, "a closing "+string(closing))
}

// scanNumber scans a number literal starting at off. In name mode a number
// that runs into letters ("12abc") is an error; value mode never gets here for
// such text because scanBare takes the whole run first.
func (s *scanner) scanNumber(off int) (token, error) {
	end := numberEnd(s.src, off)
	if end < 0 {
		return token{}, s.errAt(off, "malformed number", "")
	}
	if end < len(s.src) {
		r, _ := utf8.DecodeRuneInString(s.src[end:])
		if isWordPart(r) || r == '.' {
			return token{}, s.errAt(off, "malformed number", "")
		}
	}
	return token{kind: tkNumber, off: off, end: end, val: s.src[off:end]}, nil
}

// numberEnd returns the end of the number literal starting at off, or -1.
// Grammar: -? ( digits ( . digits? )? | . digits ) ( [eE] [+-]? digits )?
func numberEnd(src string, off int) int {
	i := off
	if i < len(src) && src[i] == '-' {
		i++
	}
	digits := 0
	for i < len(src) && isDigit(src[i]) {
		i++
		digits++
	}
	if i < len(src) && src[i] == '.' {
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return -1
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		k := j
		for k < len(src) && isDigit(src[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// isNumberText reports whether s is exactly one number literal.
func isNumberText(s string) bool {
	return s != "" && numberEnd(s, 0) == len(s)
}

// scanBare scans an unquoted value: a run of characters up to white space or
// one of ( ) , ' " ` [ ] ; = < > ! & |. A run that is exactly a number is a
// number; anything else is a bare value, which the parser may still read as
// true, false or null.
func (s *scanner) scanBare(off int) (token, error) {
	end := off
	for end < len(s.src) && isBareByte(s.src, end) {
		_, size := utf8.DecodeRuneInString(s.src[end:])
		end += size
	}
	val := s.src[off:end]
	if isNumberText(val) {
		return token{kind: tkNumber, off: off, end: end, val: val}, nil
	}
	return token{kind: tkBare, off: off, end: end, val: val}, nil
}

// isBareByte reports whether the character at off may be part of a bare value.
func isBareByte(src string, off int) bool {
	c := src[off]
	if c < utf8.RuneSelf {
		if c <= ' ' || c == 0x7f {
			return false
		}
		switch c {
		case '(', ')', ',', '\'', '"', '`', '[', ']', ';', '=', '<', '>', '!', '&', '|':
			return false
		}
		return true
	}
	r, size := utf8.DecodeRuneInString(src[off:])
	if r == utf8.RuneError && size == 1 {
		return false
	}
	return !unicode.IsSpace(r) && !unicode.IsControl(r)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordStart(r rune) bool {
	return r == '_' || (r < utf8.RuneSelf && (r|0x20 >= 'a' && r|0x20 <= 'z')) ||
		(r >= utf8.RuneSelf && r != utf8.RuneError && unicode.IsLetter(r))
}

func isWordPart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r == '$' || (r >= '0' && r <= '9') || (r|0x20 >= 'a' && r|0x20 <= 'z')
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r))
}

// describe renders a token for an error message.
func (s *scanner) describe(t token) string {
	switch t.kind {
	case tkEOF:
		return "end of input"
	case tkWord:
		return quoteForMessage(t.val)
	case tkQIdent, tkDQ:
		return "quoted name " + quoteForMessage(t.val)
	case tkString:
		return "string " + quoteForMessage(t.val)
	case tkNumber:
		return "number " + quoteForMessage(t.val)
	case tkBare:
		return "value " + quoteForMessage(t.val)
	}
	return quoteForMessage(s.src[t.off:t.end])
}
