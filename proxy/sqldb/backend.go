package sqldb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// connectTimeout bounds opening the pool, so that a request to a database
// that does not answer fails with 503 instead of hanging.
const connectTimeout = 5 * time.Second

// schemaRetryAge is how old the cached schema must be before a request for
// a table it does not know re-reads it (a table created behind our back).
var schemaRetryAge = time.Second

// Backend serves one database service. It is safe for concurrent use.
type Backend struct {
	name string
	kind dialects.Kind
	cfg  Config
	conn dialects.Config
	log  *slog.Logger
	// access decides the related records a nested write reaches beyond
	// the request's table; nil in a stack without roles.
	access service.AccessChecker

	mu      sync.Mutex
	db      *bun.DB
	dialect dialects.Dialect
	opening *openCall
	closed  bool

	schemaMu sync.Mutex
	schema   atomic.Pointer[cachedSchema]

	// stmts are the prepared read statements of the pool (prepared.go).
	stmts atomic.Pointer[stmtCache]
	// lite keeps, per SQLite or MySQL driver connection, the statements
	// of the fast reads run on the driver (litefast.go, myfast.go):
	// driver conn → *liteConn.
	lite sync.Map
	// liteWriter lets one POST of one record at a time write on SQLite
	// (litecreate.go): a buffered channel of one.
	liteWriter chan struct{}

	// sync keeps the schema in step across instances (epoch.go) and
	// caches the stored routines (proc.go).
	sync schemaSync
}

type cachedSchema struct {
	s  *dialects.Schema
	at time.Time
	// columns caches, per table, the quoted list of all its columns.
	columns sync.Map // *dialects.Table → string
	// shapes caches, per table, the SQL of the fast reads (fast.go).
	shapes sync.Map // *dialects.Table → *shape
	// reads caches the compiled list reads (listcache.go).
	reads listReads
	// inserts caches the INSERT of each table and set of columns
	// (create.go); insertN counts what was stored, to bound it.
	inserts sync.Map // insertKey → *insertShape
	insertN atomic.Int32
}

var (
	_ service.Backend      = (*Backend)(nil)
	_ service.CacheFlusher = (*Backend)(nil)
)

func newBackend(kind dialects.Kind, name string, cfg Config, deps service.Deps) (*Backend, error) {
	conn, err := cfg.Dialect(kind, deps.DataDir)
	if err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	b := &Backend{name: name, kind: kind, cfg: cfg, conn: conn, log: log.With("service", name), access: deps.Access}
	b.sync.reg, b.sync.st = deps.Registry, deps.Store
	b.liteWriter = make(chan struct{}, 1)
	return b, nil
}

// Close closes the connection pool. Requests that arrive afterwards get 503.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.dropStatements()
	if b.db == nil {
		return nil
	}
	if b.kind == dialects.MySQL {
		// The server frees a connection's statements when it closes.
		b.lite.Clear()
	} else {
		b.closeLite(b.db.DB)
	}
	err := b.db.Close()
	b.db = nil
	return err
}

// FlushCache forgets the introspected schema; the next request reads it
// again. DELETE /system/cache calls it.
func (b *Backend) FlushCache(context.Context) error {
	b.InvalidateSchema()
	return nil
}

// allColumns returns the quoted, comma-separated list of t's columns, each
// qualified with the table's name (so that SQLite reports a column that is
// gone instead of reading "name" as a string), built once per schema.
func (b *Backend) allColumns(db *bun.DB, t *dialects.Table) string {
	c := b.schema.Load()
	if c != nil {
		if v, ok := c.columns.Load(t); ok {
			return v.(string)
		}
	}
	gen := db.QueryGen()
	var buf []byte
	for i, col := range t.Columns {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = gen.AppendIdent(buf, t.Name)
		buf = append(buf, '.')
		buf = gen.AppendIdent(buf, col.Name)
	}
	s := string(buf)
	if c != nil {
		c.columns.Store(t, s)
	}
	return s
}

// InvalidateSchema forgets the introspected schema after a change of the
// database's structure.
func (b *Backend) InvalidateSchema() {
	b.schema.Store(nil)
	b.sync.routines.Store(nil)
	b.dropStatements()
}

// pool returns the service's connection pool, opening it on first use. A
// database that cannot be reached is a 503; the next call tries again.
// Callers that arrive while the pool is being opened wait for that attempt
// and share its outcome, so a database that does not answer costs one
// connect timeout, not one per queued request.
func (b *Backend) pool(ctx context.Context) (*bun.DB, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, apierr.Unavailable("Service '%s' is being reconfigured; try again.", b.name)
	}
	if b.db != nil {
		db := b.db
		b.mu.Unlock()
		return db, nil
	}
	if c := b.opening; c != nil {
		b.mu.Unlock()
		select {
		case <-c.done:
			return c.db, c.err
		case <-ctx.Done():
			return nil, unavailable(b.name, ctx.Err())
		}
	}
	c := &openCall{done: make(chan struct{})}
	b.opening = c
	b.mu.Unlock()

	// The attempt serves every waiting request: it does not end with the
	// first one's context.
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
	db, d, err := engines.Open(octx, b.conn)
	cancel()

	b.mu.Lock()
	defer b.mu.Unlock()
	b.opening = nil
	switch {
	case err != nil:
		b.log.Warn("database unavailable", "error", err)
		if errors.Is(err, dialects.ErrDSN) {
			c.err = apierr.InternalMsg("Service '%s' has a configuration error: %v", b.name, err).WithCause(err)
		} else {
			c.err = unavailable(b.name, err)
		}
	case b.closed:
		db.Close()
		c.err = apierr.Unavailable("Service '%s' is being reconfigured; try again.", b.name)
	default:
		b.db, b.dialect = db, d
		c.db = db
	}
	close(c.done)
	return c.db, c.err
}

// openCall is one attempt to open the pool.
type openCall struct {
	done chan struct{}
	db   *bun.DB
	err  error
}

func unavailable(service string, cause error) *apierr.Error {
	return apierr.Unavailable("Database of service '%s' is unavailable; try again later.", service).WithCause(cause)
}

// anyAge makes loadSchema accept a cached schema of any age.
const anyAge time.Duration = -1

// loadSchema returns the introspected schema, reading it when there is none
// cached or when the cached one is older than maxAge (anyAge: any cached
// schema will do).
func (b *Backend) loadSchema(ctx context.Context, db *bun.DB, maxAge time.Duration) (*dialects.Schema, error) {
	b.syncSchemaEpoch()
	if c := b.schema.Load(); c != nil && (maxAge < 0 || time.Since(c.at) < maxAge) {
		return c.s, nil
	}
	b.schemaMu.Lock()
	defer b.schemaMu.Unlock()
	if c := b.schema.Load(); c != nil && (maxAge < 0 || time.Since(c.at) < maxAge) {
		return c.s, nil // read by another request while we waited
	}
	b.mu.Lock()
	d := b.dialect
	b.mu.Unlock()
	if d == nil {
		return nil, unavailable(b.name, errors.New("pool closed"))
	}
	epoch := b.currentEpoch()
	s, err := d.Introspect(ctx, db)
	if err != nil {
		return nil, b.dbError(fmt.Errorf("introspect: %w", err))
	}
	if b.currentEpoch() == epoch {
		b.schema.Store(&cachedSchema{s: s, at: time.Now()})
	}
	return s, nil
}

// ServeHTTP routes a request below /api/v2/{service}/.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := b.serve(w, r); err != nil {
		apierr.Write(w, err)
	}
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) error {
	t := service.TargetFrom(r.Context())
	if t == nil {
		return apierr.Internal(errors.New("sqldb: request without a target"))
	}
	seg := t.Segments()
	verb := t.Verb
	if verb == "" {
		verb = r.Method
	}
	if verb == http.MethodHead {
		verb = http.MethodGet
	}
	if len(seg) == 0 {
		if verb != http.MethodGet {
			return apierr.BadRequest("%s requests without a resource are not currently supported by the '%s' service.", verb, b.name)
		}
		if b.kind == dialects.SQLite {
			return rootSQLite.write(w, r)
		}
		return rootOther.write(w, r)
	}
	switch seg[0] {
	case "_table":
		return b.serveTable(w, r, verb, seg[1:])
	case "_schema":
		return b.serveSchema(w, r, verb, seg[1:])
	case "_proc":
		return b.serveRoutine(w, r, verb, dialects.Procedure, seg[1:])
	case "_func":
		return b.serveRoutine(w, r, verb, dialects.Function, seg[1:])
	}
	return apierr.NotFound("Resource '%s' not found for service '%s'.", seg[0], b.name)
}
