package enforce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/contract"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// DefaultMaxAge is how old a schema a strict write check may use.
const DefaultMaxAge = time.Second

// DefaultMaxBody caps a response buffered for shaping.
const DefaultMaxBody = 64 << 20

// Options wires the stage.
type Options struct {
	// Snapshot returns the configuration in force: the services' contract
	// settings and active snapshots. Required.
	Snapshot func() *store.Snapshot
	// Source returns the live schema source of a service (its backend),
	// or false when it has none. Required.
	Source func(service string) (contract.Source, bool)
	// MaxAge is how old the schema a strict write is checked against may
	// be (DefaultMaxAge when 0; negative: any schema the backend holds).
	// Responses are shaped against the schema the backend serves with.
	MaxAge time.Duration
	// MaxBody caps a response buffered for shaping (DefaultMaxBody when 0);
	// a larger one fails with 500 rather than leave fields unshaped.
	MaxBody int64
	// Logger logs contracts that cannot be read; nil means slog.Default.
	Logger *slog.Logger
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Snapshot == nil || opts.Source == nil {
		return nil, errors.New("enforce: Snapshot and Source are required")
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &stage{opts: opts}
	return s.wrap, nil
}

type stage struct {
	opts Options

	// locked caches parsed contracts by snapshot id (a snapshot's JSON
	// never changes); live caches the canonical shape of introspected
	// tables (a *dialects.Table is never changed either). Both are
	// dropped when they grow past what one configuration can hold.
	mu     sync.Mutex
	locked map[int64]*contract.Table
	live   map[*dialects.Table]*liveShape
}

// liveShape is the canonical shape of an introspected table, with its
// drift from one snapshot once computed.
type liveShape struct {
	shape  *contract.Table
	hash   string
	driftS int64 // snapshot id the report is for
	report *contract.Report
}

// maxCached bounds the caches.
const maxCached = 4096

func (s *stage) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.serve(w, r, next); err != nil {
			apierr.Write(w, err)
		}
	})
}

// check is what the stage found for a request on a table under contract.
type check struct {
	snap    *store.Snapshot
	svc     *store.Service
	mode    string
	active  *store.SchemaSnapshot
	locked  *contract.Table
	table   string
	related bool
}

func (s *stage) serve(w http.ResponseWriter, r *http.Request, next http.Handler) error {
	c := s.lookup(r)
	if c == nil {
		next.ServeHTTP(w, r)
		return nil
	}
	ctx := r.Context()
	verb := service.TargetFrom(ctx).Verb
	if verb == "" {
		verb = r.Method
	}
	write := verb == http.MethodPost || verb == http.MethodPut || verb == http.MethodPatch || verb == http.MethodDelete
	if c.mode == store.EnforcementStrict && write {
		_, rep, err := s.drift(ctx, c, s.opts.MaxAge)
		if err != nil {
			return err
		}
		if rep != nil && rep.HasDrift {
			return refuse(c, rep)
		}
	}
	// Shaping is needed when the table may carry fields the contract does
	// not have, or when related records (shaped by their own contracts)
	// are embedded.
	shape := c.related
	if !shape {
		_, rep, err := s.drift(ctx, c, -1)
		if err != nil {
			// The backend will report its own error.
			next.ServeHTTP(w, r)
			return nil
		}
		shape = rep != nil && rep.HasDrift
	}
	if !shape {
		next.ServeHTTP(w, r)
		return nil
	}
	return s.shape(w, r, next, c)
}

// lookup finds the contract a request is under: a table request on a
// service whose enforcement is on, for a table with an active snapshot.
// This is the one lookup every request pays.
func (s *stage) lookup(r *http.Request) *check {
	t := service.TargetFrom(r.Context())
	if t == nil || t.Service == nil {
		return nil
	}
	seg := t.Segments()
	if len(seg) < 2 || seg[0] != "_table" {
		return nil
	}
	snap := s.opts.Snapshot()
	if snap == nil {
		return nil
	}
	settings := snap.ContractSettings(t.Service.ID)
	if settings == nil || !settings.Enabled || settings.RuntimeEnforcement == store.EnforcementOff ||
		settings.RuntimeEnforcement == "" {
		return nil
	}
	active := snap.ContractSnapshot(t.Service.ID, seg[1])
	if active == nil {
		return nil
	}
	locked, err := s.parsed(active)
	if err != nil {
		s.opts.Logger.Error("schema contract snapshot unreadable", "service", t.Service.Name, "table", active.TableName, "error", err)
		return nil
	}
	q := r.URL.Query()
	return &check{snap: snap, svc: t.Service, mode: settings.RuntimeEnforcement, active: active, locked: locked,
		table: active.TableName, related: q.Get("related") != ""}
}

func (s *stage) parsed(snap *store.SchemaSnapshot) (*contract.Table, error) {
	s.mu.Lock()
	t, ok := s.locked[snap.ID]
	s.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := contract.Parse([]byte(snap.SchemaJSON))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.locked == nil || len(s.locked) >= maxCached {
		s.locked = map[int64]*contract.Table{}
	}
	s.locked[snap.ID] = t
	s.mu.Unlock()
	return t, nil
}

// drift compares the contract with the table as the backend's schema (no
// older than maxAge) has it; the report is nil when the live shape hashes
// like the snapshot. A table that is gone drifts (table.removed).
func (s *stage) drift(ctx context.Context, c *check, maxAge time.Duration) (*contract.Table, *contract.Report, error) {
	src, ok := s.opts.Source(c.svc.Name)
	if !ok {
		return nil, nil, nil
	}
	schema, err := src.ContractSchema(ctx, maxAge)
	if err != nil {
		return nil, nil, err
	}
	lt := schema.Table(c.table)
	if lt == nil || lt.Name != c.table {
		rep := contract.Diff(c.locked, nil)
		return nil, &rep, nil
	}
	s.mu.Lock()
	ls, ok := s.live[lt]
	s.mu.Unlock()
	if !ok {
		shape := contract.FromTable(lt)
		ls = &liveShape{shape: shape, hash: shape.Hash()}
		s.mu.Lock()
		if s.live == nil || len(s.live) >= maxCached {
			s.live = map[*dialects.Table]*liveShape{}
		}
		s.live[lt] = ls
		s.mu.Unlock()
	}
	if ls.hash == c.active.SchemaHash {
		return ls.shape, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls.report == nil || ls.driftS != c.active.ID {
		rep := contract.Diff(c.locked, ls.shape)
		ls.report, ls.driftS = &rep, c.active.ID
	}
	return ls.shape, ls.report, nil
}

// refuse is the 400 of a write to a drifted table under strict
// enforcement, with the drift items in context.
func refuse(c *check, rep *contract.Report) error {
	return apierr.BadRequest("Schema contract: table '%s/%s' has drifted from its active contract (version %d); "+
		"writes are refused under strict runtime enforcement. Re-lock or promote the table to accept its current shape.",
		c.svc.Name, c.table, c.active.ContractVersion).WithContext(map[string]any{
		"service": c.svc.Name, "table": c.table, "active_snapshot_version": c.active.ContractVersion,
		"has_breaking": rep.HasBreaking, "summary": rep.Summary, "changes": rep.Changes,
	})
}

// shape runs next with its response buffered and drops from the records
// the fields the contracts do not have.
func (s *stage) shape(w http.ResponseWriter, r *http.Request, next http.Handler, c *check) error {
	buf := &bufferWriter{header: http.Header{}, max: s.opts.MaxBody}
	next.ServeHTTP(buf, r)
	if buf.over {
		return apierr.InternalMsg("Schema contract: the response is too large to shape (over %d bytes).", s.opts.MaxBody)
	}
	for k, v := range buf.header {
		w.Header()[k] = v
	}
	status := buf.status
	if status == 0 {
		status = http.StatusOK
	}
	body := buf.body.Bytes()
	mt, _, _ := mime.ParseMediaType(buf.header.Get("Content-Type"))
	if status >= 200 && status < 300 && mt == "application/json" && len(body) > 0 {
		if shaped, ok := s.reshape(body, c); ok {
			body = shaped
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return nil
}

// reshape decodes, shapes and encodes a JSON body; false when nothing
// changed or the body is not JSON.
func (s *stage) reshape(body []byte, c *check) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	sh := &contract.Shaper{Lookup: func(table string) *contract.Table {
		a := c.snap.ContractSnapshot(c.svc.ID, table)
		if a == nil {
			return nil
		}
		t, err := s.parsed(a)
		if err != nil {
			return nil
		}
		return t
	}}
	if !sh.Body(v, c.locked) {
		return nil, false
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

// bufferWriter holds a response for shaping, up to max bytes.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
	max    int64
	over   bool
}

func (b *bufferWriter) Header() http.Header { return b.header }

func (b *bufferWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	if int64(b.body.Len()+len(p)) > b.max {
		b.over = true
		return 0, fmt.Errorf("enforce: response over %d bytes", b.max)
	}
	return b.body.Write(p)
}
