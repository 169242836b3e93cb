package limiter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrUnknownLimit is returned for a limit id the Engine was not built with.
var ErrUnknownLimit = errors.New("limiter: unknown limit")

// ErrUserRequired is returned when reading the counter of an each_user limit
// without a user id.
var ErrUserRequired = errors.New("limiter: a user id is required for an each_user limit")

// Request describes one API call to be counted.
type Request struct {
	// UserID is the authenticated user; 0 (or negative) means anonymous.
	// each_user limits apply only to authenticated users.
	UserID int64
	// RoleID is the caller's role; 0 means none.
	RoleID int64
	// ServiceID is the id of the service the URL names.
	ServiceID int64
	// ServiceName is the service's name. It is not used for matching (ids
	// are authoritative); it is carried for the caller's logs.
	ServiceName string
	// Endpoint is the percent-decoded resource path below the service, such
	// as "_table/contact/17"; it is bucketed (see Bucket) before matching.
	Endpoint string
	// Verb is the HTTP method, in any case.
	Verb string
}

// Outcome is the state of one applicable limit after counting a request.
type Outcome struct {
	// Limit is the limit (normalised; see Limit.Normalized).
	Limit Limit
	// Key is the counter key; in Redis it is stored as "<prefix>:<Key>".
	Key string
	// Count is the number of requests counted in the current window,
	// including this one and rejected ones.
	Count int64
	// Remaining is Limit.Rate minus Count, never below 0.
	Remaining int64
	// Reset is when the window ends, in Unix seconds, rounded up: from then
	// on the counter starts again from zero.
	Reset int64
	// Exceeded is true when Count is above Limit.Rate: this limit rejects
	// the request.
	Exceeded bool
}

// Decision is the result of Engine.Evaluate.
type Decision struct {
	// Allowed is false when at least one applicable limit is exceeded.
	Allowed bool
	// Outcomes has one entry per applicable limit, in the order the limits
	// were given to New; empty when no limit applies.
	Outcomes []Outcome
	// Limit, Remaining and Reset are the values for the X-RateLimit-Limit,
	// X-RateLimit-Remaining and X-RateLimit-Reset headers, taken from the
	// most restrictive applicable limit (see Engine.Evaluate). All three are
	// 0 when no limit applies; then send no headers.
	Limit     int64
	Remaining int64
	Reset     int64
	// RetryAfter is the Retry-After value in seconds (at least 1) when the
	// request is rejected, 0 when it is allowed.
	RetryAfter int64
}

// Applied reports whether at least one limit applied to the request.
func (d Decision) Applied() bool { return len(d.Outcomes) > 0 }

// Exceeded returns the outcomes of the limits that rejected the request (the
// 429 response's context lists them).
func (d Decision) Exceeded() []Outcome {
	var out []Outcome
	for _, o := range d.Outcomes {
		if o.Exceeded {
			out = append(out, o)
		}
	}
	return out
}

// Counter is the current state of one counter, for system/limit_cache.
type Counter struct {
	// LimitID is the limit's id.
	LimitID int64
	// UserID is the user of an each_user counter; 0 for other types.
	UserID int64
	// Key is the counter key; in Redis it is stored as "<prefix>:<Key>".
	Key string
	// Max is the limit's rate.
	Max int64
	// Attempts is the number of requests counted in the current window.
	Attempts int64
	// Remaining is Max minus Attempts, never below 0.
	Remaining int64
	// Reset is when the current window ends (Unix seconds); for a counter
	// with no request yet, now plus the period.
	Reset int64
}

// Engine evaluates requests against a fixed set of limits. It is immutable
// and safe for concurrent use; build a new one (over the same Store) when
// the limits change.
type Engine struct {
	store  *Store
	limits []Limit
	rules  []*rule
	byID   map[int64]*rule
	// global holds the active rules that name no service; byService holds,
	// for every service some active rule names, the global rules and that
	// service's rules merged in the original order.
	global    ruleSet
	byService map[int64]ruleSet
}

// ruleSet holds rules in the order given to New, indexed so that a
// request looks only at the rules that may apply to it: the rules of a
// specific user or role are found by the request's user and role ids, so
// the limits of other users and roles cost nothing.
type ruleSet struct {
	general    []*rule            // other rules without a user or role of their own
	byEndpoint map[string][]*rule // those of an endpoint without "*", by bucketed endpoint
	byUser     map[int64][]*rule  // specific-user rules, by user id
	byRole     map[int64][]*rule  // role rules, by role id
	endpoints  bool               // some rule needs the bucketed endpoint
}

// add appends r (rules are added in order).
func (set *ruleSet) add(r *rule) {
	switch {
	case r.ti.user:
		if set.byUser == nil {
			set.byUser = map[int64][]*rule{}
		}
		set.byUser[r.limit.UserID] = append(set.byUser[r.limit.UserID], r)
	case r.ti.role:
		if set.byRole == nil {
			set.byRole = map[int64][]*rule{}
		}
		set.byRole[r.limit.RoleID] = append(set.byRole[r.limit.RoleID], r)
	case r.ti.level == levelEndpoint && !r.pat.wildcard:
		// Matches one bucketed endpoint only: found by it, so that the
		// limits of other endpoints cost a request nothing.
		if set.byEndpoint == nil {
			set.byEndpoint = map[string][]*rule{}
		}
		ep := string(r.pat.exact)
		set.byEndpoint[ep] = append(set.byEndpoint[ep], r)
	default:
		set.general = append(set.general, r)
	}
	set.endpoints = set.endpoints || r.ti.level == levelEndpoint
}

// rule is a compiled limit.
type rule struct {
	limit     Limit
	order     int // index in Engine.rules
	ti        typeInfo
	pat       pattern
	overrides map[int64]struct{} // users with a matching specific-user limit (each_user only)
	keyBase   string             // "<type>:<id>:<period>:"
	cache     atomic.Pointer[keyCache]
	// users holds, for an each_user rule, the last key built for each
	// slot of user ids (uid mod userSlots): a fixed size, however many
	// users there are; a user whose slot holds another user's key gets a
	// new string, as without the cache.
	users *[userSlots]atomic.Pointer[keyCache]
}

// userSlots is the number of user keys an each_user rule keeps.
const userSlots = 256

// New compiles limits into an Engine counting in store (a new memory store
// when store is nil; pass the same Store to every Engine that replaces this
// one, or the counters start again). Every limit must have a unique positive
// ID and pass Validate, inactive ones included; New reports every problem at
// once. The slice is copied.
func New(limits []Limit, store *Store) (*Engine, error) {
	if store == nil {
		store = NewMemoryStore(MemoryOptions{})
	}
	e := &Engine{
		store:     store,
		limits:    make([]Limit, 0, len(limits)),
		byID:      make(map[int64]*rule, len(limits)),
		byService: map[int64]ruleSet{},
	}
	var errs []error
	for _, l := range limits {
		if l.ID <= 0 {
			errs = append(errs, fmt.Errorf("limit %q: id must be positive, got %d", l.Name, l.ID))
			continue
		}
		if _, dup := e.byID[l.ID]; dup {
			errs = append(errs, fmt.Errorf("limit %d: duplicate id", l.ID))
			continue
		}
		if err := l.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("limit %d (%s): %w", l.ID, l.Name, err))
			continue
		}
		l = l.Normalized()
		r := &rule{limit: l, ti: l.Type.info()}
		if r.ti.level == levelEndpoint {
			p, err := compilePattern(l.Endpoint)
			if err != nil { // unreachable: Validate compiled it
				errs = append(errs, fmt.Errorf("limit %d (%s): %w", l.ID, l.Name, err))
				continue
			}
			r.pat = p
		}
		r.keyBase = string(l.Type) + ":" + strconv.FormatInt(l.ID, 10) + ":" + string(l.Period) + ":"
		if r.ti.eachUser {
			r.users = new([userSlots]atomic.Pointer[keyCache])
		}
		e.byID[l.ID] = r
		r.order = len(e.rules)
		e.rules = append(e.rules, r)
		e.limits = append(e.limits, l)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	e.linkOverrides()
	e.index()
	return e, nil
}

// linkOverrides records, on each active each_user rule, the users whose
// active specific-user limit at the same level (same service, same
// endpoint pattern, same verb) overrides it.
func (e *Engine) linkOverrides() {
	for _, each := range e.rules {
		if !each.ti.eachUser || !each.limit.Active {
			continue
		}
		for _, spec := range e.rules {
			if !spec.ti.user || !spec.limit.Active || spec.ti.level != each.ti.level ||
				spec.limit.Verb != each.limit.Verb {
				continue
			}
			if each.ti.level >= levelService && spec.limit.ServiceID != each.limit.ServiceID {
				continue
			}
			if each.ti.level == levelEndpoint && spec.pat.canonical != each.pat.canonical {
				continue
			}
			if each.overrides == nil {
				each.overrides = map[int64]struct{}{}
			}
			each.overrides[spec.limit.UserID] = struct{}{}
		}
	}
}

// index builds the per-service rule lists.
func (e *Engine) index() {
	for _, r := range e.rules {
		if !r.limit.Active {
			continue
		}
		if r.ti.level == levelInstance {
			e.global.add(r)
			continue
		}
		e.byService[r.limit.ServiceID] = ruleSet{}
	}
	for sid := range e.byService {
		var set ruleSet
		for _, r := range e.rules {
			if !r.limit.Active || (r.ti.level != levelInstance && r.limit.ServiceID != sid) {
				continue
			}
			set.add(r)
		}
		e.byService[sid] = set
	}
}

// Store returns the store the Engine counts in.
func (e *Engine) Store() *Store { return e.store }

// Limits returns a copy of the Engine's limits, normalised, in the order
// given to New.
func (e *Engine) Limits() []Limit { return append([]Limit(nil), e.limits...) }

// rulesFor returns the rules that may apply to requests to a service.
func (e *Engine) rulesFor(serviceID int64) ruleSet {
	if set, ok := e.byService[serviceID]; ok && serviceID != 0 {
		return set
	}
	return e.global
}

// applies reports whether r applies to req, ep being req's bucketed endpoint
// (only read for endpoint rules).
func (r *rule) applies(req *Request, ep []byte) bool {
	l := &r.limit
	if l.Verb != "" && !strings.EqualFold(req.Verb, l.Verb) {
		return false
	}
	switch {
	case r.ti.user:
		if req.UserID != l.UserID {
			return false
		}
	case r.ti.eachUser:
		if req.UserID <= 0 {
			return false
		}
		if r.overrides != nil {
			if _, overridden := r.overrides[req.UserID]; overridden {
				return false
			}
		}
	case r.ti.role:
		if req.RoleID != l.RoleID {
			return false
		}
	}
	if r.ti.level >= levelService && req.ServiceID != l.ServiceID {
		return false
	}
	if r.ti.level == levelEndpoint && !r.pat.match(ep) {
		return false
	}
	return true
}

// collect appends to dst the rules applying to req.
func (e *Engine) collect(dst []*rule, req *Request, epBuf []byte) []*rule {
	set := e.rulesFor(req.ServiceID)
	var ep []byte
	if set.endpoints {
		ep = appendBucket(epBuf[:0], req.Endpoint)
	}
	n := len(dst)
	for _, r := range set.general {
		if r.applies(req, ep) {
			dst = append(dst, r)
		}
	}
	merged := false
	var byEndpoint []*rule
	if set.byEndpoint != nil {
		byEndpoint = set.byEndpoint[string(ep)]
	}
	for _, rules := range [3][]*rule{byEndpoint, set.byUser[req.UserID], set.byRole[req.RoleID]} {
		for _, r := range rules {
			if r.applies(req, ep) {
				dst = append(dst, r)
				merged = true
			}
		}
	}
	if merged {
		// Back to the order given to New (a handful of rules: insertion).
		found := dst[n:]
		for i := 1; i < len(found); i++ {
			for j := i; j > 0 && found[j].order < found[j-1].order; j-- {
				found[j], found[j-1] = found[j-1], found[j]
			}
		}
	}
	return dst
}

// Match returns the limits that apply to req, without counting anything.
func (e *Engine) Match(req Request) []Limit {
	var buf [128]byte
	var out []Limit
	for _, r := range e.collect(nil, &req, buf[:]) {
		out = append(out, r.limit)
	}
	return out
}

// key returns r's counter key under the generations g, for user uid
// (each_user rules only).
func (r *rule) key(g *generations, uid int64) string { return r.keyEntry(g, uid).key }

// keyEntry returns the cache entry of r's counter key under the
// generations g, for user uid (each_user rules only), where a memory
// store keeps the key's counter.
func (r *rule) keyEntry(g *generations, uid int64) *keyCache {
	gen := g.of(r.limit.ID)
	if !r.ti.eachUser {
		if c := r.cache.Load(); c != nil && c.epoch == g.epoch && c.gen == gen {
			return c
		}
		c := &keyCache{epoch: g.epoch, gen: gen, key: r.buildKey(g.epoch, gen, 0)}
		r.cache.Store(c)
		return c
	}
	slot := &r.users[uint64(uid)%userSlots]
	if c := slot.Load(); c != nil && c.uid == uid && c.epoch == g.epoch && c.gen == gen {
		return c
	}
	c := &keyCache{epoch: g.epoch, gen: gen, uid: uid, key: r.buildKey(g.epoch, gen, uid)}
	slot.Store(c)
	return c
}

// buildKey formats "<type>:<id>:<period>:<epoch>.<gen>" and, for each_user
// rules, ":<user id>".
func (r *rule) buildKey(epoch, gen uint64, uid int64) string {
	var buf [128]byte
	b := append(buf[:0], r.keyBase...)
	b = strconv.AppendUint(b, epoch, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, gen, 10)
	if r.ti.eachUser {
		b = append(b, ':')
		b = strconv.AppendInt(b, uid, 10)
	}
	return string(b)
}

// Evaluate counts req against every applicable limit and decides whether it
// may go on.
//
// Every applicable limit counts the request, atomically in the store, even
// when another one rejects it (as DreamFactory does): a request is allowed
// when no counter went above its rate. With one applicable limit of rate N,
// exactly N requests of a window are allowed however many arrive at once;
// with several, no limit ever allows more than its rate.
//
// The header values come from the most restrictive applicable limit: when
// the request is rejected, the exceeded limit whose window ends last (so
// Retry-After is the wait after which every exceeded window has reopened;
// ties go to the smaller rate); when it is allowed, the limit with the
// fewest remaining requests (ties go to the later reset, then the smaller
// rate).
//
// Administrators and requests made by event scripts are exempt: the caller
// does not call Evaluate for them. An error means the store could not count
// (Redis unreachable); the request was then not judged.
func (e *Engine) Evaluate(ctx context.Context, req Request) (Decision, error) {
	return e.EvaluateInto(ctx, req, nil)
}

// EvaluateInto is Evaluate with Decision.Outcomes in the backing array of
// outcomes when it has room for them (its length is ignored), so that a
// caller that keeps the Decision no longer than its own frame can pass an
// array of its stack and count a request without allocating.
func (e *Engine) EvaluateInto(ctx context.Context, req Request, outcomes []Outcome) (Decision, error) {
	var epBuf [128]byte
	var ruleBuf [16]*rule
	app := e.collect(ruleBuf[:0], &req, epBuf[:])
	if len(app) == 0 {
		return Decision{Allowed: true}, nil
	}
	// The request's one clock read: every counter of the request counts
	// at the same instant.
	now := time.Now()
	gens, err := e.store.snapshot(ctx, now)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Allowed: true}
	if cap(outcomes) >= len(app) {
		d.Outcomes = outcomes[:len(app)]
	} else {
		d.Outcomes = make([]Outcome, len(app))
	}
	var batch struct {
		keys           []string
		periods        []Period
		counts, resets []int64
	}
	if len(app) > 1 && e.store.batchable() {
		// One round trip to Redis for all the request's limits.
		n := len(app)
		batch.keys, batch.periods = make([]string, n), make([]Period, n)
		batch.counts, batch.resets = make([]int64, n), make([]int64, n)
		for i, r := range app {
			batch.keys[i], batch.periods[i] = r.key(gens, req.UserID), r.limit.Period
		}
		if err := e.store.hitMany(ctx, batch.keys, batch.periods, batch.counts, batch.resets); err != nil {
			return Decision{}, err
		}
	}
	for i, r := range app {
		var key string
		var count, reset int64
		if batch.keys != nil {
			key, count, reset = batch.keys[i], batch.counts[i], batch.resets[i]
		} else {
			kc := r.keyEntry(gens, req.UserID)
			key = kc.key
			count, reset, err = e.store.hit(ctx, key, kc, r.limit.Period, now)
			if err != nil {
				return Decision{}, err
			}
		}
		o := &d.Outcomes[i]
		// Field by field: a composite literal is built aside and copied.
		o.Limit = r.limit
		o.Key, o.Count, o.Remaining, o.Reset = key, count, max(r.limit.Rate-count, 0), reset
		o.Exceeded = count > r.limit.Rate
		if o.Exceeded {
			d.Allowed = false
		}
	}
	best := -1
	for i := range d.Outcomes {
		o := &d.Outcomes[i]
		if !d.Allowed && !o.Exceeded {
			continue
		}
		if best < 0 || moreRestrictive(o, &d.Outcomes[best], d.Allowed) {
			best = i
		}
	}
	b := &d.Outcomes[best]
	d.Limit, d.Remaining, d.Reset = b.Limit.Rate, b.Remaining, b.Reset
	if !d.Allowed {
		d.RetryAfter = retryAfter(b.Reset, now, b.Limit.Period)
	}
	return d, nil
}

// retryAfter is the Retry-After of a window that reopens at reset (Unix
// seconds, rounded up): the whole seconds until then, at least 1 and never
// more than the window itself (rounding must not turn a minute into 61).
func retryAfter(reset int64, now time.Time, p Period) int64 {
	secs := reset - now.Unix()
	if w := int64(p.Duration() / time.Second); w > 0 && secs > w {
		secs = w
	}
	return max(secs, 1)
}

// moreRestrictive reports whether a should supply the headers rather than b.
func moreRestrictive(a, b *Outcome, allowed bool) bool {
	if !allowed {
		if a.Reset != b.Reset {
			return a.Reset > b.Reset
		}
		return a.Limit.Rate < b.Limit.Rate
	}
	if a.Remaining != b.Remaining {
		return a.Remaining < b.Remaining
	}
	if a.Reset != b.Reset {
		return a.Reset > b.Reset
	}
	return a.Limit.Rate < b.Limit.Rate
}

// Counter reads, without counting, the counter of one limit; userID selects
// the user of an each_user limit and is ignored for other types.
func (e *Engine) Counter(ctx context.Context, limitID, userID int64) (Counter, error) {
	r, ok := e.byID[limitID]
	if !ok {
		return Counter{}, fmt.Errorf("%w: %d", ErrUnknownLimit, limitID)
	}
	if r.ti.eachUser && userID <= 0 {
		return Counter{}, fmt.Errorf("%w (limit %d)", ErrUserRequired, limitID)
	}
	now := time.Now()
	gens, err := e.store.snapshot(ctx, now)
	if err != nil {
		return Counter{}, err
	}
	return e.peek(ctx, r, gens, userID, now)
}

func (e *Engine) peek(ctx context.Context, r *rule, g *generations, userID int64, now time.Time) (Counter, error) {
	if !r.ti.eachUser {
		userID = 0
	}
	key := r.key(g, userID)
	count, reset, err := e.store.peek(ctx, key, r.limit.Period, now)
	if err != nil {
		return Counter{}, err
	}
	return Counter{
		LimitID:   r.limit.ID,
		UserID:    userID,
		Key:       key,
		Max:       r.limit.Rate,
		Attempts:  count,
		Remaining: max(r.limit.Rate-count, 0),
		Reset:     reset,
	}, nil
}

// Counters reads, without counting, the counters of every limit (active or
// not), in the order given to New. An each_user limit has one counter per
// id in userIDs (DreamFactory lists every active non-admin user) and none
// when userIDs is empty: the stores cannot enumerate the users that have a
// counter, so the caller, who knows its users, names them.
func (e *Engine) Counters(ctx context.Context, userIDs []int64) ([]Counter, error) {
	now := time.Now()
	gens, err := e.store.snapshot(ctx, now)
	if err != nil {
		return nil, err
	}
	var out []Counter
	for _, r := range e.rules {
		if !r.ti.eachUser {
			c, err := e.peek(ctx, r, gens, 0, now)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			continue
		}
		for _, uid := range userIDs {
			if uid <= 0 {
				continue
			}
			c, err := e.peek(ctx, r, gens, uid, now)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// ResetLimit starts every counter of one limit afresh (every user's, for an
// each_user limit); see Store.ResetLimit. The id need not be known to the
// Engine (a deleted limit's counters can be cleared too).
func (e *Engine) ResetLimit(ctx context.Context, limitID int64) error {
	r := e.byID[limitID]
	var old string
	if r != nil && !r.ti.eachUser {
		gens, err := e.store.snapshot(ctx, time.Now())
		if err != nil {
			return err
		}
		old = r.key(gens, 0)
	}
	if err := e.store.ResetLimit(ctx, limitID); err != nil {
		return err
	}
	if old != "" {
		// Best effort: the old key is never read again and expires with its
		// window anyway; deleting it only frees it sooner.
		_ = e.store.drop(ctx, old, r.limit.Period)
	}
	return nil
}

// ResetAll starts every counter afresh; see Store.ResetAll.
func (e *Engine) ResetAll(ctx context.Context) error {
	gens, err := e.store.snapshot(ctx, time.Now())
	if err != nil {
		return err
	}
	if err := e.store.ResetAll(ctx); err != nil {
		return err
	}
	for _, r := range e.rules {
		if !r.ti.eachUser {
			// Best effort, as in ResetLimit.
			_ = e.store.drop(ctx, r.key(gens, 0), r.limit.Period)
		}
	}
	return nil
}
