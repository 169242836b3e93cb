// Package saml is the `saml` service type: sign-in through a SAML 2.0
// identity provider (DreamFactory's df-saml), with the identity engine's
// session as the result. It uses github.com/crewjam/saml.
//
// The service provider's URLs start with the instance's public URL
// (proxy.Config.PublicURL, else the request's host): entity id
// <base>/api/v2/<name>/metadata, ACS <base>/api/v2/<name>/acs?api_key=<key>
// (the browser posts the IdP's answer without headers, so the app's API key
// rides in the URL, as in OIDC's redirect_url).
//
// The flow is Web Browser SSO with an HTTP-Redirect AuthnRequest and an
// HTTP-POST response:
//
//  1. GET /api/v2/<name>/metadata answers the SP metadata (text/xml) to
//     register at the identity provider.
//  2. GET /api/v2/<name>/sso or GET|POST /api/v2/user/session?service=<name>
//     answers 302 to the IdP's single sign-on URL with a SAMLRequest, or
//     {"response":{"redirect":true,"url":…}} with X-Requested-With:
//     XMLHttpRequest. The RelayState is sealed with a key every instance
//     derives from the token secret: the request id, an expiry (10
//     minutes) and where the browser goes at the end (redirect=, a path on
//     this host or a URL on this host or the host of relay_state; else
//     the configured relay_state).
//  3. POST /api/v2/<name>/acs (form or JSON: SAMLResponse, RelayState)
//     verifies the answer: a signed response or signed assertion against
//     the IdP's certificate (one is required), the issuer, destination
//     and recipient (the ACS URL), InResponseTo (the sealed request id),
//     IssueInstant, NotBefore and NotOnOrAfter, the audience (the SP's
//     entity id), and refuses an answer already used (the request id and
//     the assertion id are recorded in the system database until they
//     expire, so a replay is refused on every instance). Unsolicited
//     (IdP-initiated) answers are refused.
//  4. The user is found or created (identity.SignInExternal: e-mail
//     <local>+<service>@<domain> from the mapped e-mail attribute or an
//     e-mail NameID, else <nameid>+<service>@<service>.com; the service's
//     default_role through every app) and a session opened: a 302 to the
//     redirect (else the service's relay_state, else, for the browser's
//     form post, the landing page of the app it came through: its launch
//     URL when it is a URL or a file of a storage service) with the token
//     in place of _token_ or as ?session_token=; without any, the session
//     response as for a password login (DreamFactory's answer without a
//     RelayState).
//
// Errors: a bad configuration is a 400 on save; IdP metadata that cannot
// be read is 502; every refused answer is 401 with the reason; a request
// without SAMLResponse is 400 (DreamFactory's "Invalid SAML Response
// provided").
package saml
