package system

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/script"
)

// scriptTypeFields are the fields of a script_type record: DreamFactory's
// (name, label, description, sandboxed, supports_inline_execution) and
// Portcullis's available (the engine runs on this machine: always for lua
// and javascript, for nodejs, python3 and php when their interpreter is
// installed) and aliases (other names a script's type may give).
var scriptTypeFields = []string{"name", "label", "description", "sandboxed", "supports_inline_execution", "available", "aliases"}

// serveScriptTypes serves GET /script_type[/{name}]: the script engines,
// with fields= (a name given by an alias, v8js, finds its engine).
func (b *Backend) serveScriptTypes(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	sel, err := newParams(r.URL.Query()).fields()
	if err != nil {
		return err
	}
	for _, f := range sel {
		if !contains(scriptTypeFields, f) {
			return apierr.BadRequest("Invalid field '%s' requested for resource 'script_type'; fields are %s.", f, strings.Join(scriptTypeFields, ", "))
		}
	}
	encode := func(t script.TypeInfo) object {
		aliases := script.Aliases(t.Name)
		if aliases == nil {
			aliases = []string{}
		}
		o := object{{"name", t.Name}, {"label", t.Label}, {"description", t.Description}, {"sandboxed", t.Sandboxed},
			{"supports_inline_execution", true}, {"available", t.Available}, {"aliases", aliases}}
		if sel != nil {
			o = o.only(sel)
		}
		return o
	}
	types := script.Types()
	if name := ps.ByName("name"); name != "" {
		want := script.Canonical(name)
		for _, t := range types {
			if t.Name == want {
				return apierr.WriteJSON(w, http.StatusOK, encode(t))
			}
		}
		return apierr.NotFound("Script type '%s' not found.", name)
	}
	list := make([]object, 0, len(types))
	for _, t := range types {
		list = append(list, encode(t))
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", list}})
}
