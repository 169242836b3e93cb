package rws

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// lookupToken is DreamFactory's lookup token: "{", a word, then word
// characters, dots, hyphens, pipes and parentheses, then "}".
var lookupToken = regexp.MustCompile(`\{\w+[()|\w.\-]*\}`)

// lookupName is what a lookup may be called.
var lookupName = regexp.MustCompile(`^[\w.\-]+$`)

// modifiers are DreamFactory's allowed lookup modifiers
// (df.lookup.allowed_modifiers) with PHP's semantics. A modifier that
// cannot apply (base64_decode of non-base64) fails the lookup.
var modifiers = map[string]func(string) (string, bool){
	"strtoupper":    func(s string) (string, bool) { return asciiMap(s, 'a', 'z', 'A'-'a'), true },
	"strtolower":    func(s string) (string, bool) { return asciiMap(s, 'A', 'Z', 'a'-'A'), true },
	"ucfirst":       func(s string) (string, bool) { return firstByte(s, 'a', 'z', 'A'-'a'), true },
	"lcfirst":       func(s string) (string, bool) { return firstByte(s, 'A', 'Z', 'a'-'A'), true },
	"ucwords":       func(s string) (string, bool) { return ucwords(s), true },
	"urlencode":     func(s string) (string, bool) { return percentEncode(s, true), true },
	"rawurlencode":  func(s string) (string, bool) { return percentEncode(s, false), true },
	"urldecode":     func(s string) (string, bool) { return percentDecode(s, true), true },
	"rawurldecode":  func(s string) (string, bool) { return percentDecode(s, false), true },
	"base64_encode": func(s string) (string, bool) { return base64.StdEncoding.EncodeToString([]byte(s)), true },
	"base64_decode": base64Decode,
	"trim":          func(s string) (string, bool) { return strings.Trim(s, " \t\n\r\x00\x0b"), true },
}

// builtins are the lookups the proxy fills from the caller's identity and
// the request; a reference to another name in these namespaces is a
// configuration error rather than a lookup that never resolves.
var builtins = map[string]bool{
	"user.id": true, "user.email": true, "user.name": true, "user.display_name": true, "user.is_sys_admin": true,
	"role.id": true, "role.name": true, "app.id": true, "app.name": true,
	"df.host_url": true, "df.name": true, "df.version": true, "df.api_version": true,
}

// refused are built-in lookups DreamFactory knows that would send a
// platform credential upstream.
var refused = map[string]bool{"session.id": true, "session.token": true, "app.api_key": true}

// checkLookups reports a malformed token, a modifier outside the allowed
// list, a built-in that does not exist, or one that would leak a platform
// credential.
func checkLookups(s string) error {
	var errs []error
	for _, tok := range lookupToken.FindAllString(s, -1) {
		mods, name, err := parseToken(tok[1 : len(tok)-1])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range mods {
			if modifiers[m] == nil {
				errs = append(errs, fmt.Errorf("lookup %s: modifier %q is not allowed", tok, m))
			}
		}
		switch {
		case refused[name]:
			errs = append(errs, fmt.Errorf("lookup %s would forward a platform credential and is not available", tok))
		case builtins[name]:
		case hasBuiltinPrefix(name):
			errs = append(errs, fmt.Errorf("lookup %s is not a known built-in (have %s)", tok, builtinList()))
		}
	}
	return errors.Join(errs...)
}

func hasBuiltinPrefix(name string) bool {
	for _, p := range []string{"user.", "role.", "app.", "df.", "session."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func builtinList() string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, "{"+n+"}")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// parseToken splits the inside of a token into its modifiers (outermost
// first) and the lookup name.
func parseToken(tok string) (mods []string, name string, err error) {
	inner := tok
	for {
		i := strings.IndexByte(inner, '(')
		if i < 0 {
			break
		}
		if !strings.HasSuffix(inner, ")") {
			return nil, "", fmt.Errorf("lookup {%s}: unbalanced parentheses", tok)
		}
		mods = append(mods, inner[:i])
		inner = inner[i+1 : len(inner)-1]
	}
	if strings.ContainsAny(inner, ")|") || !lookupName.MatchString(inner) {
		return nil, "", fmt.Errorf("lookup {%s}: malformed name %q", tok, inner)
	}
	return mods, inner, nil
}

// substitute replaces every lookup token in s from values, in one pass (a
// value that looks like a lookup is not expanded again). ok is false when a
// token has no value or cannot be applied: the caller then leaves the
// header or parameter out rather than send the token verbatim.
func substitute(s string, values map[string]string) (out string, ok bool) {
	if !strings.Contains(s, "{") {
		return s, true
	}
	locs := lookupToken.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s, true
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		mods, name, err := parseToken(s[loc[0]+1 : loc[1]-1])
		if err != nil {
			return "", false
		}
		v, found := values[name]
		if !found {
			return "", false
		}
		for i := len(mods) - 1; i >= 0; i-- {
			m := modifiers[mods[i]]
			if m == nil {
				return "", false
			}
			if v, found = m(v); !found {
				return "", false
			}
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(v)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// lookupValues builds the values lookups resolve against for r: the named
// lookups, then the built-ins of the caller's identity and the request
// (which win over a named lookup of the same name, as in DreamFactory).
// Absent facts are left out, so a header needing {user.email} on a call
// without a signed-in user is not sent.
func (p *Proxy) lookupValues(r *http.Request) map[string]string {
	var named map[string]string
	if p.cfg.Lookups != nil {
		named = p.cfg.Lookups(r)
	}
	m := make(map[string]string, len(named)+13)
	for k, v := range named {
		// A named lookup never stands in for a built-in the caller lacks.
		if !hasBuiltinPrefix(k) {
			m[k] = v
		}
	}
	if id := caller.IdentityFrom(r.Context()); id != nil {
		if id.UserID != 0 {
			m["user.id"] = strconv.FormatInt(id.UserID, 10)
			m["user.email"] = id.UserEmail
			m["user.name"] = id.UserName
			m["user.display_name"] = id.UserName
			m["user.is_sys_admin"] = strconv.FormatBool(id.Admin)
		}
		if id.RoleID != 0 {
			m["role.id"] = strconv.FormatInt(id.RoleID, 10)
			m["role.name"] = id.RoleName
		}
		if id.AppID != 0 {
			m["app.id"] = strconv.FormatInt(id.AppID, 10)
			m["app.name"] = id.AppName
		}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	m["df.host_url"] = scheme + "://" + r.Host
	m["df.name"] = "Portcullis"
	m["df.version"] = p.cfg.Version
	m["df.api_version"] = "2.0"
	return m
}

// SnapshotLookups returns the named lookups that apply to id from the
// system configuration, with DreamFactory's precedence: global, then the
// app's, then the role's, then the user's, a later level overwriting an
// earlier one. Private lookups are included: like DreamFactory, a service
// configuration may use them (an upstream secret in a header), and their
// values are sent upstream only, never to the client.
func SnapshotLookups(snap *store.Snapshot, id *caller.Identity) map[string]string {
	m := map[string]string{}
	if snap == nil {
		return m
	}
	var appID, roleID, userID int64
	if id != nil {
		appID, roleID, userID = id.AppID, id.RoleID, id.UserID
	}
	levels := []func(l *store.Lookup) bool{
		func(l *store.Lookup) bool { return l.AppID == nil && l.RoleID == nil && l.UserID == nil },
		func(l *store.Lookup) bool { return appID != 0 && l.AppID != nil && *l.AppID == appID },
		func(l *store.Lookup) bool { return roleID != 0 && l.RoleID != nil && *l.RoleID == roleID },
		func(l *store.Lookup) bool { return userID != 0 && l.UserID != nil && *l.UserID == userID },
	}
	for _, at := range levels {
		for _, l := range snap.Lookups {
			if at(l) {
				m[l.Name] = l.Value
			}
		}
	}
	return m
}

// asciiMap shifts ASCII letters in [lo, hi] by delta, like PHP 8's
// strtoupper and strtolower.
func asciiMap(s string, lo, hi byte, delta int) string {
	b := []byte(s)
	for i, c := range b {
		if c >= lo && c <= hi {
			b[i] = byte(int(c) + delta)
		}
	}
	return string(b)
}

func firstByte(s string, lo, hi byte, delta int) string {
	if s == "" || s[0] < lo || s[0] > hi {
		return s
	}
	return string(byte(int(s[0])+delta)) + s[1:]
}

// ucwords upper-cases the first ASCII letter of every word, words being
// separated by PHP's default delimiters.
func ucwords(s string) string {
	b := []byte(s)
	start := true
	for i, c := range b {
		if start && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		start = strings.IndexByte(" \t\r\n\f\v", c) >= 0
	}
	return string(b)
}

// percentEncode is PHP's urlencode (plus true: space as "+", "~" encoded)
// or rawurlencode (RFC 3986).
func percentEncode(s string, plus bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		case c == '~' && !plus:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// percentDecode is PHP's urldecode (plus true) or rawurldecode: malformed
// escapes are kept as they are.
func percentDecode(s string, plus bool) string {
	unhex := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		if c == '+' && plus {
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// base64Decode decodes standard or URL-safe base64, padded or not.
func base64Decode(s string) (string, bool) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(s); err == nil {
			return string(d), true
		}
	}
	return "", false
}
