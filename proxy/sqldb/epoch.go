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
// whenever it is about to use its cached schema or routines, and forgets
// them when it moved. So another
// instance sees the change within one reload interval, with no change to
// the registry and nothing for backends of other types to implement.
type schemaSync struct {
	reg       service.Registry // nil when embedded without one
	st        *store.Store     // nil when embedded without a system database
	serviceID int64            // the service's record id (0 when unknown)

	seen     atomic.Pointer[string]
	routines atomic.Pointer[cachedRoutines]
}

// syncSchemaEpoch forgets the schema when the service's epoch in the
// configuration in force moved since it last looked. Every reader of the
// cached schema and routines calls it first (requests, the event list,
// the OpenAPI document).
func (b *Backend) syncSchemaEpoch() {
	if b.sync.reg == nil || b.sync.serviceID == 0 {
		return
	}
	snap := b.sync.reg.Snapshot()
	if snap == nil {
		return
	}
	e := snap.SchemaEpoch(b.sync.serviceID)
	if p := b.sync.seen.Load(); p != nil && *p == e {
		return
	}
	ep := new(string) // only on a change: &e would put e on the heap on every call
	*ep = e
	if prev := b.sync.seen.Swap(ep); prev == nil || *prev != e {
		b.InvalidateSchema()
	}
}

// currentEpoch is the service's schema epoch in the configuration in
// force. A schema read is cached only when the epoch did not move while it
// was read (else it may predate the change).
func (b *Backend) currentEpoch() string {
	if b.sync.reg == nil {
		return ""
	}
	return b.sync.reg.Snapshot().SchemaEpoch(b.sync.serviceID)
}

// schemaChanged forgets the schema here and tells the other instances.
func (b *Backend) schemaChanged(ctx context.Context) {
	b.InvalidateSchema()
	if b.sync.st == nil || b.sync.serviceID == 0 {
		return
	}
	if err := store.BumpSchemaEpoch(context.WithoutCancel(ctx), b.sync.st.DB, b.sync.serviceID); err != nil {
		b.log.Warn("schema changed but other instances could not be told", "error", err)
	}
}
