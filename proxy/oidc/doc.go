// Package oidc is the `oidc` service type: sign-in through an OpenID
// Connect provider (DreamFactory's df-oidc), with the identity engine's
// session as the result.
//
// The flow is the authorization code flow with PKCE (S256):
//
//  1. GET or POST /api/v2/user/session?service=<name> (or GET
//     /api/v2/<name>/sso) answers 302 to the provider's authorization
//     endpoint, or {"response":{"redirect":true,"url":…}} with
//     X-Requested-With: XMLHttpRequest. An optional redirect=<url> (a path
//     on this host, or a URL on the host of redirect_url) is where the
//     browser goes at the end.
//  2. The provider sends the browser back to the configured redirect_url,
//     normally /api/v2/user/session?oauth_callback=true&service=<name>
//     (with &api_key=<key> unless the instance runs with --compat
//     dreamfactory). The state is checked (sealed with a key every
//     instance derives from the token secret, 10 minutes), the code is
//     exchanged with the PKCE verifier, and the ID token is verified
//     (signature against the provider's keys, issuer, audience, expiry,
//     nonce).
//  3. The user is found or created (identity.SignInExternal: e-mail
//     <local>+<service>@<domain>, the service's default_role through every
//     app) and a session opened: the session response as for a password
//     login, or a 302 to the remembered redirect with ?session_token=.
//
// Errors: a bad configuration is a 400 on save; a provider that cannot be
// reached or answers nonsense is 502; a refused code, a bad or forged ID
// token, a bad state or nonce are 401 with the reason.
package oidc
