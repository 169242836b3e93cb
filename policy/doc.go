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
// Each role gets small Casbin enforcers, each built from a fresh model
// (model.NewModelFromString; a model holds policy, so enforcers never share
// one): one per service the role's entries name, holding that service's
// entries and the all-services entries, and one with the all-services
// entries alone for every other service. A decision thus scans only lines
// that can match, since Casbin has no index and tries lines one by one.
// An enforcer is built when a decision first needs it, not by New: with
// thousands of roles and services most are never used, and building them
// all made start-up and every reload cost seconds and hundreds of
// megabytes.
//
// The model uses Casbin's priority effect: the first matching policy line
// in priority order decides. Each entry becomes an allow line carrying its
// verb mask, and each distinct pattern also becomes a "fence", a deny line
// that matches any verb. Lines are ordered class by class: the allow lines
// of ClassExact, then its fences, then the allow lines of ClassComponent,
// its fences, and so on. The first line to match is therefore an allow
// line of the most specific class that has the verb, or else that class's
// fence, which refuses the verb without letting a broader class answer.
// Within a class, allow lines run from the longest wildcard prefix to the
// shortest and, among equals, from the entry listed last to the first, so
// the line that matches first also names the entry whose grant applies.
// The matcher tests the component first (compMatch: equality, or Casbin's
// keyMatch against component+"/" so that "_table/*" covers "_table"), then
// the service, then the requestor and verb masks (bitAny). EnforceEx
// reports the matched line, from which Go reads the class and the entry.
//
// Go does the rest: validating and normalising records and requests,
// ordering the policy lines, the decision cache, the role's active flag,
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
// the key space is unbounded; the bound caps memory, and components longer
// than 1024 bytes are decided but not cached. Within a role, no entry
// looks past a certain number of leading path segments (two for
// "_table/contact", one for "_table/*"), and components that agree on
// those segments and are longer get the same decision; the key keeps only
// those segments, so "_table/contact/5" and "_table/contact/6" share one
// entry and record ids do not flood the cache.
//
// # Differences from DreamFactory
//
//   - An entry with component "*" is its own class, between component
//     wildcards and all-services entries, as the reference describes.
//     DreamFactory's code lets such an entry fall into the wildcard class
//     (strpos finds "*" at 0), where its verbs would be OR-ed with
//     "_table/*" and the like.
//   - Service names are compared exactly; DreamFactory lower-cases them.
//   - Request components are cleaned: trailing and repeated slashes and
//     "." and ".." segments cannot be used to step around an exact entry.
//   - Grants come from all-services entries too; DreamFactory applies no
//     row filters at that level.
//   - An unknown lookup in a filter value is an error, where DreamFactory
//     leaves the token in place.
//
// Package policy imports Casbin, the standard library and proxy/caller
// only. It knows nothing of HTTP: the handlers/rbac stage turns a refused
// Decision into a 403 and puts the Grant in the request context.
package policy
