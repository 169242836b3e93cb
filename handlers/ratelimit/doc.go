// Package ratelimit is the pipeline stage that enforces the rate limits of
// the limiter engine: it counts every request that reaches it against the
// limits that apply, answers 429 when one of them is exceeded, and adds the
// X-RateLimit-* headers to every response a limit applied to.
//
// # Where it runs
//
// The stage runs after RBAC and before the script hooks: API key → session
// → RBAC → limits → script. It reads the caller from the context
// (caller.IdentityFrom: UserID, RoleID, Admin, Requestor) and the target
// from service.TargetFrom (Service.ID, Resource as the endpoint, Verb after
// verb tunnelling). System administrators and calls made by event scripts
// are exempt (spec, Limits 8): they are not counted and get no headers. A
// request without an identity counts as anonymous (instance, role-less,
// service and endpoint limits still apply); a request without a target (a
// stack built without the proxy router) only meets limits that name no
// service.
//
// # Responses
//
// A rejected request gets 429 in the error envelope with DreamFactory's
// message [MsgExceeded] ("API limit(s) exceeded. ", trailing space
// included, byte for byte, so clients written for DreamFactory that compare
// the message keep working) and, in context, one [Exceeded] entry per limit
// that rejected it. The headers come from the engine's Decision: Retry-After
// (seconds until every exceeded window has reopened, at least 1),
// X-RateLimit-Limit, X-RateLimit-Remaining (0) and X-RateLimit-Reset (Unix
// time). An allowed request to which a limit applied carries the same
// X-RateLimit-* headers for the most restrictive applicable limit, without
// Retry-After.
//
// # When the counters cannot be reached
//
// Engine.Evaluate fails only when the store cannot count (Redis down). By
// default the stage then fails open: the request goes on uncounted and the
// error is logged (at most once per [ErrorLogInterval], with the number of
// failures in between) and counted in the portcullis_ratelimit_errors_total
// metric. Limits protect capacity, not access: authentication and RBAC ran
// before this stage and still hold, so a Redis outage should not become an
// outage of the whole API (Envoy's and Kong's rate limiters make the same
// default choice). Options.FailClosed answers 503 with Retry-After instead,
// for deployments where an unthrottled API is worse than an unavailable one.
//
// # Limits source
//
// Options.Limits returns the Engine in force; it is called once per request
// and must be cheap (the proxy root returns the Engine of its current
// configuration, rebuilt over the same limiter.Store on every reload).
// Programs that embed the stage without a system database use [Static].
//
// ratelimit imports the leaves (apierr, caller), proxy/service and the
// limiter engine; never another stage, a backend or the proxy root.
package ratelimit
