package script

import "strings"

// Phase is when an event fires.
type Phase string

const (
	// Pre fires before the backend: the script may change the request or
	// answer it.
	Pre Phase = "pre_process"
	// Post fires after the backend: the script may change the response.
	Post Phase = "post_process"
	// Queued fires after the response has been sent: the script runs on
	// the stage's queue and changes nothing.
	Queued Phase = "queued"
)

// templates maps a database resource kind to the placeholder of the
// segment after it, as DreamFactory names database events.
var templates = map[string]string{
	"_table":  "{table_name}",
	"_schema": "{table_name}",
	"_proc":   "{procedure_name}",
	"_func":   "{function_name}",
}

// Names returns the event names a request fires in phase, in
// DreamFactory's order: the templated name first
// (db._table.{table_name}.get.pre_process), then the resolved one
// (db._table.contact.get.pre_process) when it differs. resource is the
// path below the service, verb the HTTP method; a by-id path keeps the
// literal {id} in both (db._table.contact.{id}.get.pre_process). An empty
// phase gives the base names, which fire after the response is built.
func Names(service, resource, verb string, phase Phase) []string {
	b, i := appendNames(nil, service, resource, verb, phase)
	if i == len(b) {
		return []string{string(b)}
	}
	return []string{string(b[:i]), string(b[i:])}
}

// appendNames appends the names Names gives to b, one after the other,
// and returns b and where the second name begins (len(b) when there is
// only one). It allocates nothing when b has room.
func appendNames(b []byte, service, resource, verb string, phase Phase) ([]byte, int) {
	seg0, seg1, more := splitResource(resource)
	if ph, ok := templates[seg0]; ok && seg1 != "" {
		b = appendTemplated(b, service, seg0, ph, more, verb, phase)
		i := len(b)
		return appendTemplated(b, service, seg0, seg1, more, verb, phase), i
	}
	b = append(b, service...)
	for rest := resource; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg != "" {
			b = append(b, '.')
			b = append(b, seg...)
		}
	}
	b = appendSuffix(b, verb, phase)
	return b, len(b)
}

// appendTemplated appends service.kind.name[.{id}].verb[.phase].
func appendTemplated(b []byte, service, kind, name string, byID bool, verb string, phase Phase) []byte {
	b = append(b, service...)
	b = append(b, '.')
	b = append(b, kind...)
	b = append(b, '.')
	b = append(b, name...)
	if byID {
		b = append(b, ".{id}"...)
	}
	return appendSuffix(b, verb, phase)
}

// appendSuffix appends .verb (lower-case) and .phase when there is one.
func appendSuffix(b []byte, verb string, phase Phase) []byte {
	b = append(b, '.')
	for i := 0; i < len(verb); i++ {
		c := verb[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	if phase != "" {
		b = append(b, '.')
		b = append(b, phase...)
	}
	return b
}

// splitResource returns the first two non-empty segments of a resource
// path and whether more follow.
func splitResource(resource string) (seg0, seg1 string, more bool) {
	n := 0
	for rest := resource; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg == "" {
			continue
		}
		switch n {
		case 0:
			seg0 = seg
		case 1:
			seg1 = seg
		default:
			return seg0, seg1, true
		}
		n++
	}
	return seg0, seg1, false
}
