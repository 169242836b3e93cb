// Package user is the backend of the `user` service type (a singleton,
// group User): the sign-in resources of non-administrators under
// /api/v2/{service}/:
//
//	GET             /                 the resources below
//	POST            /session          log in          (identity Login)
//	GET             /session          session info    (SessionInfo)
//	PUT             /session          refresh token   (Refresh)
//	DELETE          /session          log out         (Logout)
//	POST            /register         open registration, when enabled
//	POST            /password         reset request, reset with code or
//	                                  answer, change when signed in
//	GET, POST       /profile          the signed-in user's profile
//
// The work is done by the identity engine (proxy/identity); this package
// puts it on the wire ([SignIn]: request bodies in, answers and the error
// envelope out, the one mapping of identity.Kind to statuses in
// [APIError]), for users here and for administrators under the system
// service's admin/ (proxy.New hands system [NewSignIn] with admin set). It
// also reads the service's configuration (allow_open_registration,
// open_reg_role_id, the e-mail service and template ids; other keys are
// kept as sent). Mail goes through the Mailer of [Options], which names the
// configured e-mail service and template in each message.
//
// user imports apierr, caller, service, store and identity; never another
// backend, a stage or the proxy root.
package user
