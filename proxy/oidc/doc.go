// Package oidc is the sign-in through another provider: the `oidc` type
// (OpenID Connect with any provider, DreamFactory's df-oidc) and the
// OAuth 2.0 provider types of df-oauth, all on one flow with the identity
// engine's session as the result:
//
//   - oauth_google: OpenID Connect, discovery at https://accounts.google.com.
//   - oauth_azure_ad: OpenID Connect, <authority_url>/<tenant_id>/v2.0
//     (Microsoft Entra ID); with common or organizations the document's
//     issuer is the template .../{tenantid}/v2.0 and a token's issuer must
//     be it filled with the token's own tid.
//   - oauth_microsoft-live: the same with the consumers tenant.
//   - oauth_github: plain OAuth 2.0; the user from the REST API's /user and
//     the verified primary address from /user/emails.
//   - oauth_linkedin: OpenID Connect, discovery at
//     https://www.linkedin.com/oauth.
//   - oauth_bitbucket: plain OAuth 2.0; /2.0/user and the confirmed
//     primary address from /2.0/user/emails.
//   - oauth_facebook: plain OAuth 2.0; the Graph API's /me (no e-mail
//     verification flag, so users are keyed by their Facebook id).
//   - oauth_generic (not in DreamFactory): plain OAuth 2.0 with a
//     configured user-info endpoint and field mapping.
//
// Built-in endpoints can be overridden in the configuration (GitHub
// Enterprise, other Microsoft clouds, tests). Provider addresses must be
// https, or http on a loopback host.
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
//     instance derives from the token secret, bound to the service, 10
//     minutes) and the code exchanged with the PKCE verifier, redirects
//     not followed. OpenID Connect types verify the ID token (signature
//     against the provider's keys, issuer, audience, expiry, nonce) and,
//     when it carries no e-mail, ask the user-info endpoint (whose answer
//     must be about the same subject); plain OAuth types ask the user-info
//     endpoint with the access token.
//  3. The user is found or created (identity.SignInExternal: the service's
//     default_role through every app) and a session opened. As in
//     DreamFactory a browser ends at a page: 302 to the remembered
//     redirect, else to the landing page of the app the callback came
//     through (its launch URL when it is a URL or a file of a storage
//     service: DreamFactory's default redirect URL, since Portcullis serves
//     no page at /), with ?session_token=; a failed callback goes there
//     with ?error=<message>. Without such a page, and for a script (an
//     XMLHttpRequest, or a POST of the provider's answer), the answer is
//     the session response as for a password login, or the error.
//
// The e-mail rule. The account is keyed by e-mail, so an address is used
// only when the provider vouches for it: email_verified true (Microsoft:
// or xms_edov), GitHub's primary address marked verified (Bitbucket's
// confirmed), the generic
// type's verification field true (or trust_email). Then the user is
// <local>+<service>@<domain> and a later sign-in links to it. An address
// the provider says is not verified (email_verified false, GitHub's
// primary unverified, the generic field false) refuses the sign-in with
// 401. An address the provider says nothing about, or no address, is not
// used: the user is <subject>+<service>@<service>.com, keyed by the
// provider's stable id, and links to no other account.
//
// Errors: a bad configuration is a 400 on save; a provider that cannot be
// reached, fails, or refuses the service's client credentials is 502; a
// refused code, a bad or forged ID token, a bad state or nonce, an
// unverified e-mail, the provider's own error are 401 with the reason.
// Failed callbacks count against the client's address in the password
// sign-in's throttle, and a blocked address gets 429.
package oidc
