package sqldb

import (
	"context"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.EventLister = (*Backend)(nil)

// Events lists the paths on which the service's API events fire, with the
// tables it has now as the values of {table_name} (none when the database
// cannot be reached).
func (b *Backend) Events(ctx context.Context) ([]service.EventPath, error) {
	var params map[string][]string
	if db, err := b.pool(ctx); err == nil {
		if s, err := b.loadSchema(ctx, db, anyAge); err == nil {
			params = map[string][]string{"table_name": s.Names()}
		}
	}
	all := []string{"get", "post", "put", "patch", "delete"}
	return []service.EventPath{
		{Path: "", Verbs: []string{"get"}},
		{Path: "_table", Verbs: []string{"get"}},
		{Path: "_table/{table_name}", Verbs: all, Parameter: params},
		{Path: "_table/{table_name}/{id}", Verbs: []string{"get", "put", "patch", "delete"}, Parameter: params},
	}, nil
}
