package caller

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrUnknownLookup is wrapped by the error of a lookup that has no value,
// such as {user.id} in a call made with an API key only.
var ErrUnknownLookup = errors.New("unknown lookup")

// ErrBadLookup is wrapped by the error of a malformed lookup or one that
// uses a modifier outside DreamFactory's allowed list.
var ErrBadLookup = errors.New("bad lookup")

// lookupToken is DreamFactory's lookup token: "{" word, then word
// characters, dots, hyphens, pipes and parentheses, then "}".
var lookupToken = regexp.MustCompile(`\{\w+[()|\w.\-]*\}`)

// lookupName is what a lookup may be called.
var lookupName = regexp.MustCompile(`^[\w.\-]+$`)

// modifiers are DreamFactory's allowed lookup modifiers
// (df.lookup.allowed_modifiers), with PHP's semantics.
var modifiers = map[string]func(string) (string, error){
	"strtoupper":    func(s string) (string, error) { return asciiUpper(s), nil },
	"strtolower":    func(s string) (string, error) { return asciiLower(s), nil },
	"ucfirst":       func(s string) (string, error) { return ucfirst(s), nil },
	"lcfirst":       func(s string) (string, error) { return lcfirst(s), nil },
	"ucwords":       func(s string) (string, error) { return ucwords(s), nil },
	"urlencode":     func(s string) (string, error) { return percentEncode(s, true), nil },
	"rawurlencode":  func(s string) (string, error) { return percentEncode(s, false), nil },
	"urldecode":     func(s string) (string, error) { return percentDecode(s, true), nil },
	"rawurldecode":  func(s string) (string, error) { return percentDecode(s, false), nil },
	"base64_encode": func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil },
	"base64_decode": base64Decode,
	"trim":          func(s string) (string, error) { return strings.Trim(s, " \t\n\r\x00\x0b"), nil },
}

// ReplaceLookups replaces every lookup token in s, DreamFactory style:
//
//   - "{name}" is values["name"]; names hold letters, digits, "_", "."
//     and "-", for example {user.id}, {role.name}, {app.id} or a named
//     lookup such as {region};
//   - "{mod(name)}" and "{mod1(mod2(name))}" apply modifiers, innermost
//     first; the allowed ones are strtoupper, strtolower, ucfirst, lcfirst,
//     ucwords, urlencode, urldecode, rawurlencode, rawurldecode,
//     base64_encode, base64_decode and trim.
//
// Replacement is one pass: a value that itself looks like a lookup is not
// expanded again. Text that is not a token (such as JSON braces) is left
// alone. Unlike DreamFactory, which leaves an unknown token verbatim, a
// token without a value is an error wrapping ErrUnknownLookup, so a row
// filter such as "owner_id = {user.id}" can never quietly become
// "owner_id = '{user.id}'".
func ReplaceLookups(s string, values map[string]string) (string, error) {
	if !strings.Contains(s, "{") {
		return s, nil
	}
	locs := lookupToken.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		v, err := resolveLookup(s[loc[0]+1:loc[1]-1], values)
		if err != nil {
			return "", err
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(v)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// ExpandLookups replaces the lookup tokens of s that have a value, as
// [ReplaceLookups] does, and leaves every other token as it is: one
// without a value, a malformed one, or one whose modifier is not allowed or
// fails. This is DreamFactory's own behaviour, right for text such as a
// script's content, where braces may be the language's own ({x} in
// JavaScript) and an unknown name must not stop the run. changed is false
// when nothing was replaced (s is returned).
func ExpandLookups(s string, values map[string]string) (out string, changed bool) {
	if !strings.Contains(s, "{") {
		return s, false
	}
	locs := lookupToken.FindAllStringIndex(s, -1)
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		v, err := resolveLookup(s[loc[0]+1:loc[1]-1], values)
		if err != nil {
			continue
		}
		if !changed {
			b.Grow(len(s))
			changed = true
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(v)
		last = loc[1]
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// FindLookups returns the lookup tokens in s, braces included.
func FindLookups(s string) []string {
	if !strings.Contains(s, "{") {
		return nil
	}
	return lookupToken.FindAllString(s, -1)
}

// ParseLookup splits the inside of a token (without its braces) into its
// modifiers, outermost first, and the lookup name. The error wraps
// ErrBadLookup.
func ParseLookup(tok string) (mods []string, name string, err error) {
	inner := tok
	for {
		i := strings.IndexByte(inner, '(')
		if i < 0 {
			break
		}
		if !strings.HasSuffix(inner, ")") {
			return nil, "", fmt.Errorf("%w {%s}: unbalanced parentheses", ErrBadLookup, tok)
		}
		mods = append(mods, inner[:i])
		inner = inner[i+1 : len(inner)-1]
	}
	if strings.ContainsAny(inner, ")|") || !lookupName.MatchString(inner) {
		return nil, "", fmt.Errorf("%w {%s}: malformed name %q", ErrBadLookup, tok, inner)
	}
	return mods, inner, nil
}

// LookupModifierAllowed reports whether name is one of DreamFactory's
// allowed lookup modifiers.
func LookupModifierAllowed(name string) bool { return modifiers[name] != nil }

// resolveLookup resolves the inside of one token.
func resolveLookup(tok string, values map[string]string) (string, error) {
	mods, inner, err := ParseLookup(tok)
	if err != nil {
		return "", err
	}
	v, ok := values[inner]
	if !ok {
		return "", fmt.Errorf("%w {%s}", ErrUnknownLookup, inner)
	}
	for i := len(mods) - 1; i >= 0; i-- {
		m := modifiers[mods[i]]
		if m == nil {
			return "", fmt.Errorf("%w {%s}: modifier %q is not allowed", ErrBadLookup, tok, mods[i])
		}
		if v, err = m(v); err != nil {
			return "", fmt.Errorf("%w {%s}: %s: %w", ErrBadLookup, tok, mods[i], err)
		}
	}
	return v, nil
}

// asciiUpper and asciiLower change ASCII letters only, like PHP 8's
// strtoupper and strtolower.
func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

func ucfirst(s string) string {
	if s == "" {
		return s
	}
	return asciiUpper(s[:1]) + s[1:]
}

func lcfirst(s string) string {
	if s == "" {
		return s
	}
	return asciiLower(s[:1]) + s[1:]
}

// ucwords upper-cases the first letter of each word; words are separated
// by PHP's default delimiters (space, tab, CR, LF, form feed, vertical tab).
func ucwords(s string) string {
	b := []byte(s)
	start := true
	for i, c := range b {
		if start && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		start = c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
	}
	return string(b)
}

// percentEncode is PHP's urlencode (form: space as "+", "~" encoded) or
// rawurlencode (RFC 3986: space as "%20", "~" kept).
func percentEncode(s string, form bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		case c == '~' && !form:
			b.WriteByte(c)
		case c == ' ' && form:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// percentDecode is PHP's urldecode ("+" is a space) or rawurldecode. Like
// PHP, it leaves a "%" that is not followed by two hex digits as it is.
func percentDecode(s string, form bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+' && form:
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// base64Decode accepts padded and unpadded standard base64.
func base64Decode(s string) (string, error) {
	s = strings.TrimSpace(s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return string(b), nil
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return "", fmt.Errorf("not base64: %w", err)
	}
	return string(b), nil
}
