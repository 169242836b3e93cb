// Package caller carries who is calling and what they were granted through a
// request's context.
//
// The pipeline fills it in stages: the API key stage sets the app and its
// default role, the session stage adds the signed-in user (and the user's role
// for that app), and the RBAC stage writes the [Grant] that a backend reads to
// drop fields and restrict rows. Backends never read HTTP headers for
// identity: they ask this package.
//
// A request's values live in one [State], placed in its context once by
// the first stage that sets one (the request-id stage in Portcullis's
// pipeline) and filled in by the stages after it, so that a stage adds no
// context and no request copy of its own. The With* functions still wrap a
// context in the ordinary way, for tests and for inner calls; the getters
// read either.
//
// It also owns DreamFactory's lookup syntax ({user.id}, {urlencode(name)}),
// [ReplaceLookups], shared by the RBAC engine (row filters) and remote
// backends (injected headers and parameters).
//
// caller is a leaf: it imports only the standard library.
package caller
