// Package rbac is the pipeline stage that enforces role-based access: it
// decides, with the policy engine, whether the caller's role may call the
// request's verb on the target service component, answers 403 when it may
// not, and otherwise puts the matched entry's grant (allowed fields and row
// filters, lookups filled in) into the context for the backend.
//
// # Where it runs
//
// API key → session → RBAC → limits → script hooks → backend. It reads the
// caller (caller.IdentityFrom: app, role, user, admin flag, requestor) and
// the target (service.TargetFrom: service record, resource path, verb after
// verb tunnelling). The role is the one the earlier stages put in the
// identity: the signed-in user's role for the app, else the app's default
// role.
//
// # Decisions, in order
//
//  1. A system administrator (Identity.Admin) is unrestricted: no check,
//     no grant.
//  2. An access exception needs no role and carries no grant (see below).
//  3. No identity at all: 401 [MsgNoCaller] (the API key stage normally
//     answers first).
//  4. No role and no session (an API key whose app has no default role):
//     401 [MsgNoSession], the spec's 401 for a missing session token, so
//     that a client shows its login form (DreamFactory answers 403 "Role
//     not found", which its admin UI treats as a dead end). A signed-in
//     user with no role, or a role id that does not exist: 403 "Role not
//     found. …", a lack of access rather than of credentials.
//  5. An inactive role: 403 "Access Forbidden. The role … is not active."
//  6. The engine's decision (policy.Authorizer.Authorize) for the service
//     name, the resource path and the verb, with the API requestor bit,
//     or the script bit when Identity.Requestor is caller.Script: a
//     refusal is 403 in DreamFactory's words, naming the verb, the
//     component and the service ("Access Forbidden. DELETE access to
//     component '_table/contact' of service 'db' is not allowed by this
//     user's role."). HEAD is allowed, under GET's grant, wherever the
//     role allows GET (it shows what GET shows, without the body); other
//     verbs need their own bit (OPTIONS 32, …).
//  7. A fallback for refused GETs, as DreamFactory has it: `_schema` (the
//     table list) of a service where the role may GET any component. It
//     carries no grant and does not apply to the system service. `_spec`
//     (the service's API document) has none: the spec wants an entry for
//     `_spec` or `*` on that service, else 403 "spec endpoint not
//     granted".
//  8. API documents: `api_docs/{service}` (the swagger service) needs the
//     role's access to the api_docs service as usual and, in addition,
//     access with some verb to {service}; otherwise 403, so a role never
//     reads the document of a service it cannot call.
//  9. System resources: an entry for all services (no service id) never
//     reaches the system service; only entries that name it do (see
//     below).
//  10. Allowed: the grant's filter values get their lookups replaced
//     ({user.id}, {user.email}, {role.id}, {app.id}, … and named lookups
//     with precedence global < app < role < user, private ones excluded);
//     a lookup with no value for this caller (say {user.id} with an API
//     key alone) refuses the call with 403 rather than running it without
//     its row filter. The grant goes into the context (the request's
//     caller.State: caller.GrantFrom reads it), and the call is marked as
//     granted by a role (caller.RoleGranted).
//
// Administrators and exceptions get neither a grant nor the mark, and a
// grant or mark that an enclosing call left in the context (an event
// script's inner call) is cleared.
//
// # Access exceptions
//
// DreamFactory's isAccessException list (df-system and df-user
// ServiceProvider), matched by service type and by the exact resource path
// the backend serves:
//
//   - system service: admin/session, every verb (administrator sign-in,
//     the own session, refresh, sign-out); admin/password, POST (reset
//     request and reset); environment, GET (what a client reads before
//     signing in).
//   - user service: session, every verb (sign-in, the own session,
//     refresh, sign-out); password, POST (reset, and change when signed
//     in); register, POST (open registration); profile, GET, POST, PUT
//     and PATCH (the own profile).
//   - oidc, oauth_google, oauth_azure_ad, oauth_microsoft-live,
//     oauth_github, oauth_linkedin, oauth_bitbucket, oauth_facebook and
//     oauth_generic services: sso, GET and POST (the
//     sign-in redirect and the provider's callback; the backend checks
//     state, code and ID token or user info).
//   - saml services: sso, GET and POST (the redirect to the identity
//     provider); acs, POST (its answer; the backend checks signature,
//     issuer, audience, destination, validity, InResponseTo and replay);
//     metadata, GET (the SP metadata to register at the identity provider).
//
// The backends behind them decide who may do what: the profile and a
// password change need a signed-in user (the user service answers 401
// without one), the session resources work on the caller's own token only,
// and registration must be open. DreamFactory also exempts services whose
// name ends in "_oauth" (its OAuth sign-in services); a name alone must
// never open a service, so Portcullis exempts the sso resource of the
// sign-in types instead.
//
// # System resources and roles
//
// As in DreamFactory, a role may grant system components to users who are
// not administrators: an entry for the system service with component
// "user/*" lets a help-desk role manage users, "role" with GET lets it read
// roles. The system backend admits administrators and calls this stage
// marked as granted by a role (caller.RoleGranted); everyone else gets 403
// there, apart from the exceptions above. Unlike DreamFactory, an entry
// for all services does not reach the system service: "all services, GET"
// is a common convenience that would otherwise expose every app's API key
// and every service's credentials. Grants' fields and row filters apply to
// the table API; the system backend does not apply them to its records.
//
// # Policy and lookups
//
// Options.Policy returns the Authorizer in force; the proxy root rebuilds
// it from the system database on every configuration reload (Policy turns
// a store.Snapshot into one, failing closed on records it cannot read),
// so a changed role reaches every instance within the reload interval.
// Embedders without a system database use Static with roles written in Go,
// and FixedService when no router puts a target in the context.
//
// rbac imports apierr, caller, service, store and the policy engine; never
// another stage, a backend or the proxy root.
package rbac
