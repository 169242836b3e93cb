package sqldb

import (
	"context"
	"sync/atomic"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// schemaSync keeps the introspected schema of every instance in step with
// schema changes made through any of them.
//
// A change made through the schema API refreshes this backend's cache at
// once and calls [store.BumpSchemaEpoch], which gives the service a new
// epoch and bumps the configuration version. Every instance polls that
// version (ReloadInterval, 500 ms by default) and loads a new snapshot;
// the registry keeps the backends of unchanged services, and each backend
// compares the snapshot's epoch for its service with the last one it saw
// on its next request and forgets its schema when it moved. So another
// instance sees the change within one reload interval, with no change to
// the registry and nothing for backends of other types to implement.
type schemaSync struct {
	reg service.Registry // nil when embedded without one
	st  *store.Store     // nil when embedded without a system database

	seen     atomic.Pointer[string]
	routines atomic.Pointer[cachedRoutines]
}

// syncSchemaEpoch forgets the schema when the service's epoch in the
// configuration in force moved since the last request.
func (b *Backend) syncSchemaEpoch(svc *store.Service) {
	if b.sync.reg == nil || svc == nil {
		return
	}
	snap := b.sync.reg.Snapshot()
	if snap == nil {
		return
	}
	e := snap.SchemaEpoch(svc.ID)
	if p := b.sync.seen.Load(); p != nil && *p == e {
		return
	}
	if prev := b.sync.seen.Swap(&e); prev == nil || *prev != e {
		b.InvalidateSchema()
	}
}

// schemaChanged forgets the schema here and tells the other instances.
func (b *Backend) schemaChanged(ctx context.Context, svc *store.Service) {
	b.InvalidateSchema()
	if b.sync.st == nil || svc == nil || svc.ID == 0 {
		return
	}
	if err := store.BumpSchemaEpoch(context.WithoutCancel(ctx), b.sync.st.DB, svc.ID); err != nil {
		b.log.Warn("schema changed but other instances could not be told", "error", err)
	}
}
