package limiter

import (
	"bytes"
	"errors"
	"strings"
)

// The placeholders that Bucket puts in place of variable path segments.
const (
	// BucketID replaces a segment made only of ASCII digits.
	BucketID = ":id"
	// BucketUUID replaces a segment in the 8-4-4-4-12 hexadecimal UUID form.
	BucketUUID = ":uuid"
	// BucketHash replaces a segment of at least MinHashLen hexadecimal digits.
	BucketHash = ":hash"
)

// MinHashLen is the shortest run of hexadecimal digits that Bucket treats as
// a hash (:hash). 16 covers 64-bit hex ids, MongoDB ObjectIDs (24), MD5
// (32), SHA-1 (40) and SHA-256 (64), and no English word is that long while
// using only the letters a to f.
const MinHashLen = 16

// Bucket returns the canonical, bucketed form of a request's endpoint (the
// resource path below the service). The rules, applied in order:
//
//   - The path is split on "/" and each segment is trimmed of spaces and
//     tabs; empty segments (leading, trailing or doubled slashes) and "."
//     segments are dropped, and ".." removes the segment before it (never
//     climbing above the service root).
//   - ASCII letters are lower-cased (other bytes are kept as they are), so a
//     limit on "_table/Contact" also counts "_table/contact": changing the
//     case of a path never escapes a limit.
//   - A segment made only of digits becomes ":id"; a UUID
//     (8-4-4-4-12 hex digits) becomes ":uuid"; a segment of MinHashLen or
//     more hex digits becomes ":hash".
//   - The segments are joined with "/", without leading or trailing slash.
//
// For example "/_table/Contact/17/" gives "_table/contact/:id". The path must
// be already percent-decoded (as url.URL.Path is); Bucket does not decode.
// Bucket is idempotent: Bucket(Bucket(p)) == Bucket(p).
func Bucket(path string) string {
	var buf [128]byte
	return string(appendBucket(buf[:0], path))
}

// appendBucket appends Bucket(path) to dst.
func appendBucket(dst []byte, path string) []byte {
	base := len(dst)
	for len(path) > 0 {
		var seg string
		if i := strings.IndexByte(path, '/'); i >= 0 {
			seg, path = path[:i], path[i+1:]
		} else {
			seg, path = path, ""
		}
		seg = strings.Trim(seg, " \t")
		switch seg {
		case "", ".":
			continue
		case "..":
			if i := bytes.LastIndexByte(dst[base:], '/'); i >= 0 {
				dst = dst[:base+i]
			} else {
				dst = dst[:base]
			}
			continue
		}
		if len(dst) > base {
			dst = append(dst, '/')
		}
		dst = appendSegment(dst, seg)
	}
	return dst
}

// appendSegment appends the bucketed, lower-cased form of one segment.
func appendSegment(dst []byte, seg string) []byte {
	digits, hex := true, true
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case '0' <= c && c <= '9':
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			digits = false
		default:
			digits, hex = false, false
		}
		if !hex {
			break
		}
	}
	switch {
	case digits:
		return append(dst, BucketID...)
	case hex && len(seg) >= MinHashLen:
		return append(dst, BucketHash...)
	case isUUID(seg):
		return append(dst, BucketUUID...)
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// isUUID reports whether s has the 8-4-4-4-12 hexadecimal form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// pattern is a compiled limit endpoint.
type pattern struct {
	// canonical is the normalised pattern text (NormalizeEndpoint).
	canonical string
	// exact is the bucketed path when the pattern has no "*".
	exact []byte
	// prefix is the bucketed text before a trailing "*".
	prefix []byte
	// wildcard is true when the pattern ends with "*".
	wildcard bool
	// dir is true for "P/*": it matches P itself and everything below P.
	dir bool
}

// errEndpoint* are the messages of an invalid endpoint pattern.
var (
	errEndpointStar    = errors.New(`endpoint may contain "*" only as its last character.`)
	errEndpointControl = errors.New("endpoint must not contain control characters.")
	errEndpointQuery   = errors.New(`endpoint must be a resource path, without "?" or "#".`)
	errEndpointLong    = errors.New("endpoint is too long (at most 1024 bytes).")
	errEndpointEmpty   = errors.New("endpoint must be specified with this limit type.")
)

// NormalizeEndpoint returns the canonical form of a limit's endpoint
// pattern, or an error when it is not a valid pattern. A pattern is either
//
//   - a path, which matches a request whose bucketed endpoint is equal to the
//     bucketed pattern: "_table/contact/17" and "_table/contact/:id" both
//     match every "_table/contact/<number>";
//   - a path ending in "/*", which matches the path itself and everything
//     below it: "_table/*" matches "_table", "_table/contact" and
//     "_table/contact/:id"; a lone "*" matches every endpoint of the service;
//   - a path ending in "*" inside a segment, which matches by string prefix
//     on the bucketed request: "_table/cont*" matches "_table/contact" and
//     "_table/contacts/:id" (the partial segment is lower-cased, not
//     bucketed).
//
// "*" anywhere else, control characters, "?" and "#" are refused.
func NormalizeEndpoint(endpoint string) (string, error) {
	p, err := compilePattern(endpoint)
	if err != nil {
		return "", err
	}
	return p.canonical, nil
}

func compilePattern(endpoint string) (pattern, error) {
	if len(endpoint) > maxEndpointLen {
		return pattern{}, errEndpointLong
	}
	for i := 0; i < len(endpoint); i++ {
		switch c := endpoint[i]; {
		case c < 0x20 || c == 0x7f:
			return pattern{}, errEndpointControl
		case c == '?' || c == '#':
			return pattern{}, errEndpointQuery
		case c == '*' && i != len(endpoint)-1:
			return pattern{}, errEndpointStar
		}
	}
	rest, wildcard := strings.CutSuffix(endpoint, "*")
	if !wildcard {
		exact := appendBucket(nil, endpoint)
		if len(exact) == 0 {
			return pattern{}, errEndpointEmpty
		}
		return pattern{canonical: string(exact), exact: exact}, nil
	}
	p := pattern{wildcard: true}
	var dir, partial string
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		dir, partial = rest[:i], rest[i+1:]
	} else {
		dir, partial = "", rest
	}
	partial = strings.Trim(partial, " ")
	if partial == "" || partial == "." || partial == ".." {
		// "P/*" (or "P/./*"): a whole-directory match.
		p.dir = true
		if partial == ".." {
			dir += "/.."
		}
		p.prefix = appendBucket(nil, dir)
		if len(p.prefix) == 0 {
			p.canonical = "*"
		} else {
			p.canonical = string(p.prefix) + "/*"
		}
		return p, nil
	}
	p.prefix = appendBucket(nil, dir)
	if len(p.prefix) > 0 {
		p.prefix = append(p.prefix, '/')
	}
	for i := 0; i < len(partial); i++ {
		c := partial[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		p.prefix = append(p.prefix, c)
	}
	p.canonical = string(p.prefix) + "*"
	return p, nil
}

// match reports whether the bucketed request endpoint ep matches p.
func (p *pattern) match(ep []byte) bool {
	switch {
	case !p.wildcard:
		return bytes.Equal(ep, p.exact)
	case p.dir:
		if len(p.prefix) == 0 {
			return true
		}
		return bytes.HasPrefix(ep, p.prefix) &&
			(len(ep) == len(p.prefix) || ep[len(p.prefix)] == '/')
	default:
		return bytes.HasPrefix(ep, p.prefix)
	}
}
