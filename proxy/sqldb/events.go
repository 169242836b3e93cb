package sqldb

import (
	"context"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.EventLister = (*Backend)(nil)

// Events lists the paths on which the service's API events fire, with the
// tables it has now as the values of {table_name} (none when the database
// cannot be reached).
func (b *Backend) Events(ctx context.Context) ([]service.EventPath, error) {
	var params, procs, funcs map[string][]string
	if db, err := b.pool(ctx); err == nil {
		if s, err := b.loadSchema(ctx, db, anyAge); err == nil {
			params = map[string][]string{"table_name": s.Names()}
		}
		if rr, ok := b.routineReader(); ok && b.kind != dialects.SQLite {
			if list, err := b.loadRoutines(ctx, db, rr, routineMaxAge); err == nil {
				procs = map[string][]string{"procedure_name": routineNames(list, dialects.Procedure)}
				funcs = map[string][]string{"function_name": routineNames(list, dialects.Function)}
			}
		}
	}
	all := []string{"get", "post", "put", "patch", "delete"}
	paths := []service.EventPath{
		{Path: "", Verbs: []string{"get"}},
		{Path: "_table", Verbs: []string{"get"}},
		{Path: "_table/{table_name}", Verbs: all, Parameter: params},
		{Path: "_table/{table_name}/{id}", Verbs: []string{"get", "put", "patch", "delete"}, Parameter: params},
		{Path: "_schema", Verbs: all},
		{Path: "_schema/{table_name}", Verbs: all, Parameter: params},
		{Path: "_schema/{table_name}/_field", Verbs: all, Parameter: params},
		{Path: "_schema/{table_name}/_field/{field_name}", Verbs: all, Parameter: params},
		{Path: "_schema/{table_name}/_related", Verbs: []string{"get", "post"}, Parameter: params},
		{Path: "_schema/{table_name}/_related/{relation_name}", Verbs: []string{"get"}, Parameter: params},
	}
	if b.kind != dialects.SQLite {
		paths = append(paths,
			service.EventPath{Path: "_proc", Verbs: []string{"get"}},
			service.EventPath{Path: "_proc/{procedure_name}", Verbs: []string{"get", "post"}, Parameter: procs},
			service.EventPath{Path: "_func", Verbs: []string{"get"}},
			service.EventPath{Path: "_func/{function_name}", Verbs: []string{"get", "post"}, Parameter: funcs},
		)
	}
	return paths, nil
}

// routineNames lists the names of the routines of typ, each once.
func routineNames(list []*dialects.Routine, typ dialects.RoutineType) []string {
	names := []string{}
	for _, r := range list {
		if r.Type == typ && (len(names) == 0 || names[len(names)-1] != r.Name) {
			names = append(names, r.Name)
		}
	}
	return names
}
