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
	segs := strings.FieldsFunc(resource, func(r rune) bool { return r == '/' })
	suffix := "." + strings.ToLower(verb)
	if phase != "" {
		suffix += "." + string(phase)
	}
	if len(segs) >= 2 {
		if ph, ok := templates[segs[0]]; ok {
			rest := ""
			if len(segs) > 2 {
				rest = ".{id}"
			}
			templ := service + "." + segs[0] + "." + ph + rest + suffix
			spec := service + "." + segs[0] + "." + segs[1] + rest + suffix
			return []string{templ, spec}
		}
	}
	name := service
	for _, s := range segs {
		name += "." + s
	}
	return []string{name + suffix}
}
