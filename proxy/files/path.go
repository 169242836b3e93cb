package files

import (
	"strings"
	"unicode"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// maxPathBytes caps a path's length; longer ones are refused with 400.
const maxPathBytes = 1024

// CleanPath checks a path below a file service's root as a client wrote it
// (decoded) and returns it without leading or trailing slashes. It refuses,
// with a 400, every path that could name something outside the root or
// something other than what it shows: "." and ".." segments, empty segments
// ("a//b"), backslashes, NUL and other control characters, and overlong
// paths. Absolute paths cannot occur: the path is always below the root.
func CleanPath(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	if len(p) > maxPathBytes {
		return "", apierr.BadRequest("Invalid path: longer than %d bytes.", maxPathBytes)
	}
	for _, seg := range strings.Split(p, "/") {
		if err := checkSegment(seg); err != nil {
			return "", err
		}
	}
	return p, nil
}

// checkSegment checks one segment of a path, or a bare file or folder name.
func checkSegment(seg string) error {
	switch seg {
	case "":
		return apierr.BadRequest("Invalid path: empty segment.")
	case ".", "..":
		return apierr.BadRequest("Invalid path: '.' and '..' segments are not allowed.")
	}
	if strings.HasPrefix(seg, tempPrefix) {
		return apierr.BadRequest("Invalid path: names starting with '%s' are reserved.", tempPrefix)
	}
	for _, r := range seg {
		if r == '\\' || r == 0 || unicode.IsControl(r) {
			return apierr.BadRequest("Invalid path: backslashes and control characters are not allowed.")
		}
	}
	return nil
}

// CleanName checks a single file or folder name (no slashes), as sent in
// X-File-Name or X-Folder-Name.
func CleanName(name string) (string, error) {
	if strings.Contains(name, "/") {
		return "", apierr.BadRequest("Invalid name '%s': a name may not contain '/'.", name)
	}
	if len(name) > 255 {
		return "", apierr.BadRequest("Invalid name: longer than 255 bytes.")
	}
	if err := checkSegment(name); err != nil {
		return "", err
	}
	return name, nil
}

// SanitizeFileName turns an uploaded file's name into a safe one as
// DreamFactory does: only the base name is kept, characters outside
// [A-Za-z0-9_.-] are removed and runs of dots collapse to one. It returns
// "" when nothing usable is left.
func SanitizeFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	lastDot := false
	for _, r := range name {
		switch {
		case r == '.':
			if lastDot {
				continue
			}
			lastDot = true
			b.WriteRune(r)
			continue
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			continue
		}
		lastDot = false
	}
	out := strings.Trim(b.String(), ".")
	if strings.HasPrefix(out, tempPrefix) || len(out) > 255 {
		return ""
	}
	return out
}

// join joins a folder ("" or "a/b") and a relative path.
func join(folder, rel string) string {
	if folder == "" {
		return rel
	}
	if rel == "" {
		return folder
	}
	return folder + "/" + rel
}

// base returns the last segment of a cleaned path.
func base(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// parent returns the folder holding a cleaned path ("" for the root).
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
