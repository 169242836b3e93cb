// Package session is the pipeline stage that signs the user in for a
// request: it verifies the session token sent (header
// X-Platform-Session-Token, X-DreamFactory-Session-Token,
// Authorization: Bearer, or query session_token) through a [Verifier] and adds
// the user to the caller identity the apikey stage started: user id, e-mail
// and name, session id, the administrator flag, and the user's role for the
// app, which replaces the app's default role.
//
// With Options.Basic set, a request without a token but with
// Authorization: Basic (e-mail and password) is signed in for itself alone,
// through a [BasicVerifier]: no session is opened, and wrong credentials are
// a 401.
//
// A missing token lets the request through without a user (the RBAC stage
// decides what an API key alone reaches). An invalid, expired or revoked
// token is a 401 with DreamFactory's messages; a user whose role for the app
// is inactive gets 403 `Role is not active.`. As in DreamFactory, a token
// sent to a login route is ignored ([LoginRoute]; the refresh handler checks
// its possibly expired token itself), and an inner call made by an event
// script, or marked by caller.WithInner (an MCP tool call), keeps the
// identity it inherited.
//
// session imports apierr, caller and service; the identity engine reaches
// it only through the Verifier interface, so a stack with no system
// database can have sessions of its own.
package session
