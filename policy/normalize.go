package policy

import (
	"path"
	"strings"
)

// NormalizeComponent returns a request's component (the resource path
// after the service name) in the form the Authorizer compares and caches:
//
//   - the first "(...)" group is removed, as DreamFactory does
//     ("_table/contact(id,name)" becomes "_table/contact");
//   - leading, trailing and repeated "/" are dropped and "." and ".."
//     segments are resolved, so "_table/contact/" and
//     "_table/x/../contact" are judged as "_table/contact", the path a
//     backend would reach, and cannot slip past an exact entry;
//   - letters are folded to lower case.
//
// It allocates only when the component changes.
func NormalizeComponent(comp string) string {
	if i := strings.IndexByte(comp, '('); i >= 0 {
		if j := strings.IndexByte(comp[i:], ')'); j > 0 {
			comp = comp[:i] + comp[i+j+1:]
		}
	}
	return strings.ToLower(cleanComponent(comp))
}

// cleanComponent trims slashes, collapses repeated ones and resolves "."
// and ".." segments. It returns comp itself when nothing changes.
func cleanComponent(comp string) string {
	if !needsClean(comp) {
		return comp
	}
	c := path.Clean("/" + comp)
	return strings.TrimPrefix(c, "/")
}

// needsClean reports whether comp has a leading or trailing "/", an empty
// segment, or a "." or ".." segment.
func needsClean(comp string) bool {
	if comp == "" {
		return false
	}
	if comp[0] == '/' || comp[len(comp)-1] == '/' {
		return true
	}
	start := 0
	for i := 0; i <= len(comp); i++ {
		if i < len(comp) && comp[i] != '/' {
			continue
		}
		switch seg := comp[start:i]; seg {
		case "", ".", "..":
			return true
		}
		start = i + 1
	}
	return false
}

// VerbBit returns the verb_mask bit of an HTTP verb, or 0 for a verb that
// has none. Case does not matter, and DreamFactory's synonyms are accepted:
// READ is GET, CREATE is POST, UPDATE is PUT.
func VerbBit(verb string) int {
	if b := verbBitUpper(verb); b != 0 {
		return b
	}
	return verbBitUpper(strings.ToUpper(verb))
}

func verbBitUpper(verb string) int {
	switch verb {
	case "GET", "READ":
		return VerbGet
	case "POST", "CREATE":
		return VerbPost
	case "PUT", "UPDATE":
		return VerbPut
	case "PATCH":
		return VerbPatch
	case "DELETE":
		return VerbDelete
	case "OPTIONS":
		return VerbOptions
	case "HEAD":
		return VerbHead
	case "COPY":
		return VerbCopy
	case "TRACE":
		return VerbTrace
	case "CONNECT":
		return VerbConnect
	}
	return 0
}

// verbName returns the canonical name of a single verb bit.
func verbName(bit int) string {
	switch bit {
	case VerbGet:
		return "GET"
	case VerbPost:
		return "POST"
	case VerbPut:
		return "PUT"
	case VerbPatch:
		return "PATCH"
	case VerbDelete:
		return "DELETE"
	case VerbOptions:
		return "OPTIONS"
	case VerbHead:
		return "HEAD"
	case VerbCopy:
		return "COPY"
	case VerbTrace:
		return "TRACE"
	case VerbConnect:
		return "CONNECT"
	}
	return ""
}
