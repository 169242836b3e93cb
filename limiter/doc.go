// Package limiter is Portcullis's rate-limits engine: the spec's ten limit
// types, which limits apply to a request, endpoint bucketing, counter keys,
// the five periods, and the counters themselves: in memory (ulule/limiter's
// memory store's model, in a table of this package) or in ulule/limiter's
// Redis store. It knows nothing of HTTP: the handlers/ratelimit stage turns
// a Decision into a 429 and headers, and proxy/system serves
// system/limit_cache through Engine.Counters and the reset methods.
//
// It imports only the standard library, ulule/limiter/v3 and go-redis/v9;
// never another Portcullis package.
//
// # Pieces
//
//   - Limit mirrors the system record (/api/v2/system/limit). Limit.Validate
//     reports every problem at once; Limit.Normalized clears the fields the
//     type does not use; Limit.KeyText gives DreamFactory's unique key_text.
//   - Store holds the counters: NewMemoryStore (this process only) or
//     NewRedisStore (shared by every process on the same Redis and prefix).
//     A Store outlives Engines, so counters survive a change of limits.
//     The memory store is this package's own table (memstore.go) rather
//     than ulule's memory store, counting exactly as ulule's does (checked
//     against it on random sequences): an Engine keeps each counter it
//     found with the counter's key, so a count costs a lock and no key
//     hashing, and a request reads the clock once for all its counters
//     instead of twice per counter. The Redis store is ulule's.
//   - Engine is built by New from the limits; it is immutable and safe for
//     concurrent use. Engine.Evaluate counts a Request and returns a
//     Decision.
//
// # Which limits apply
//
// A limit applies to a request when it is active, its Verb is empty or equal
// (case-insensitively) to the request's, and its type's conditions hold:
//
//   - instance: every request, anonymous ones included;
//   - instance.user / .user.service / .user.service.endpoint: the request's
//     UserID equals the limit's;
//   - instance.each_user / .each_user.service / .each_user.service.endpoint:
//     the request is authenticated (UserID > 0), each user with their own
//     counter, unless overridden (below);
//   - instance.role: the request's RoleID equals the limit's;
//   - the *.service* types: the request's ServiceID equals the limit's;
//   - the *.endpoint types: the request's endpoint matches the limit's
//     endpoint pattern (see Bucket and NormalizeEndpoint).
//
// A specific-user limit overrides the matching each_user limit at the same
// level: when an active instance.user[.service[.endpoint]] limit for user U
// has the same service, the same endpoint pattern and the same verb as an
// active instance.each_user[...] limit, the each_user limit neither applies
// to nor counts U's requests (the period does not need to match: the
// specific limit replaces the generic policy for that user). Users without
// such a limit keep the each_user limit. Unlike DreamFactory, a limit with a
// verb does not override the same limit without one: both apply, so a
// verb-specific limit can only tighten a general one.
//
// # Endpoints
//
// Bucket canonicalises a request endpoint (lower-cased ASCII, no empty or
// dot segments, numeric ids as :id, UUIDs as :uuid, hex runs of MinHashLen
// or more as :hash). A limit's endpoint is canonicalised the same way and
// then matches exactly, or by prefix when it ends in "*" ("_table/*"
// matches "_table" and everything below it). Matching happens on a stack
// buffer: it allocates nothing for endpoints up to 128 bytes.
//
// # Counting
//
// Windows are fixed and start at a counter's first request (ulule's model):
// minute 60 s, hour, day 24 h, 7-day and 30-day (custom ulule Rates, since
// NewRateFromFormatted has no weeks). Each applicable limit's counter is
// incremented atomically (on Redis, one Lua script call per request counts
// every applicable limit: ulule's increment script extended to several keys;
// a Redis Cluster falls back to one call per counter), and a request
// is rejected when any counter went above its rate. Every applicable limit
// counts every request, rejected ones included, as DreamFactory does; so
// with one limit of rate N exactly N concurrent requests pass, and no limit
// ever lets more than its rate through.
//
// Counter keys (stored in Redis as "<prefix>:<key>") are
//
//	<type>:<limit id>:<period>:<epoch>.<generation>[:<user id>]
//
// for example "instance.each_user.service:12:minute:0.0:5". The limit id
// keeps two limits apart, the period starts a fresh counter when a limit's
// period changes (a changed rate keeps its counter, as in DreamFactory), the
// user id appears for each_user types only. The generation is the limit's
// reset count and the epoch the store's ResetAll count: a reset bumps one
// number (a Redis hash, "<prefix>:generation", shared by all processes) and
// the old keys are never read again; they expire with their window. Each
// process re-reads the generations at most every RedisOptions.RefreshInterval
// (default 1 s), which bounds how long another process's reset takes to be
// seen. The memory store frees the keys of non-each_user limits on reset;
// each_user keys of the old generation stay until their window ends.
//
// # Headers
//
// Decision.Limit, Remaining, Reset and RetryAfter are the values of
// X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset and
// Retry-After, from the most restrictive applicable limit (the exceeded one
// whose window ends last when rejected; the one with the fewest remaining
// requests when allowed). Reset is a Unix time rounded up to the second, so
// a client waiting until then finds the window open.
//
// # limit_cache
//
// Engine.Counters and Engine.Counter read counters without counting.
// The stores cannot enumerate keys, so each_user counters are read for
// the user ids the caller names (DreamFactory lists one per active non-admin
// user). Engine.ResetLimit and Engine.ResetAll (or the same on Store, for
// limits the Engine does not know) reset them; call Store.ResetLimit when a
// limit is deleted.
package limiter
