// Package policy is Portcullis's role-based access engine: it decides whether
// a role may call a verb on a service component, and which fields and rows
// the matching access entry allows.
//
// # Records
//
// The input mirrors DreamFactory's role and role_service_access records
// (Role, Access). The system store converts its rows into these; New checks
// them (see Access.Validate) and builds an immutable Authorizer. Rebuilding
// means building a new Authorizer and swapping it atomically; an Authorizer
// is never changed after New and is safe for concurrent use.
//
// # Matching
//
// Matching follows DreamFactory's Session::getServicePermissions. The
// request's component (the resource path after the service) is normalised
// by NormalizeComponent. Entries whose requestor mask lacks the caller's
// requestor bit are ignored. Every other entry that matches falls into one
// class, most specific first:
//
//  1. ClassExact: entry for this service whose component equals the
//     request's (an empty entry component matches only the service root).
//  2. ClassComponent: entry for this service whose component ends in "*"
//     and whose prefix before the "*" begins component+"/": "_table/*"
//     covers "_table", "_table/contact" and "_table/contact/5";
//     "_table/contact/*" covers "_table/contact" but not "_table/contacts".
//  3. ClassService: entry for this service with component "*".
//  4. ClassAllServices: entry for all services (no service id) with
//     component "*", or with an empty component for a root request.
//
// Only the most specific class that has any matching entry counts, and the
// verb masks of its entries are OR-ed; a broader class never adds verbs and
// never takes them away. So "*"=GET plus "_table/contact"=POST gives POST,
// and only POST, on "_table/contact". An entry with verb mask 0 therefore
// shuts its component off from broader grants.
//
// Service names are compared exactly (the platform's service names are
// case-sensitive); components are compared without regard to case, as
// DreamFactory does.
//
// # What Casbin does and what Go does
//
// Each role gets its own small Casbin enforcer, built from a fresh model
// (model.NewModelFromString) and the role's entries. The model uses
// Casbin's priority effect, which takes the first matching policy line in
// priority order. Each entry becomes an allow line carrying its verb mask,
// and each matching pattern also becomes a "fence" deny line that matches
// any verb. The lines are ordered class by class: the allow lines of
// ClassExact, then its fences, then the allow lines of ClassComponent, its
// fences, and so on. The first line to match therefore is an allow line of
// the most specific class that has the verb, or that class's fence, which
// refuses the verb without letting a broader class answer. Casbin's
// built-in keyMatch does the wildcard test and a custom function (bitAny)
// tests the verb and requestor masks. EnforceEx reports the matched line,
// from which Go reads the entry's fields and filters.
//
// Go does the rest: validating and normalising records and requests,
// ordering the policy lines, the decision cache, the role's active flag and
// the messages, and the helpers Reachable and ServiceReachable.
//
// # Grants
//
// An allowed decision carries the matched entry's Fields, Filters and
// FilterOp as a *caller.Grant (nil when the entry restricts nothing). When
// several entries of the winning class allow the verb, the grant is taken
// from the most specific one (the longest wildcard prefix) and, among
// equals, the one listed last, as DreamFactory's getServiceFilters does.
// Filter values may hold lookups such as {user.id}; SubstituteLookups
// replaces them per request.
//
// # Cache
//
// Decisions are cached in a bounded, sharded LRU keyed by
// role|service|component|verb|requestor. Components come from callers, so
// the key space is unbounded; the bound caps memory. Components longer than
// 1024 bytes are decided but not cached.
//
// Package policy imports Casbin, the standard library and proxy/caller
// only. It knows nothing of HTTP: the handlers/rbac stage turns a refused
// Decision into a 403 and puts the Grant in the request context.
package policy
