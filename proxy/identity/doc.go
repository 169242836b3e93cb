// Package identity is the identity engine: it checks credentials, issues,
// verifies and revokes session tokens (signed JWTs), throttles failed
// attempts, applies the password rules (change, reset codes, security
// answers), keeps profiles and runs open registration. It has no HTTP in
// it, the way policy and limiter have none: [Engine] takes decoded fields
// and returns answers and [Error]s of a [Kind]. The user backend
// (proxy/user) puts it on the wire under /user/… and, for the system
// backend, under /system/admin/…; the session stage verifies tokens
// through a small interface that proxy.New fills with [Engine.SignIn].
// Sign-in providers (LDAP, OIDC, SAML) belong here too, beside the
// password check of [Engine.Login].
//
// # Tokens
//
// A session token is an HS256 JWT signed with the secret kept in the system
// database (setting [store.SettingJWTSecret], created by init, read once and
// cached), so every instance sharing that database accepts every other's
// tokens. Its claims are DreamFactory's: user_id, jti (a random id), iat,
// nbf (= iat), exp, sub (the MD5 hex of the user's e-mail, so an e-mail
// change retires old tokens) and forever (always false), plus
// browser_session for a duration-0 login. Parsing always pins the method to
// HS256, decodes strictly (no twin encodings of one token) and requires exp;
// a small leeway (Options.Leeway, 5 s) absorbs clock skew between instances.
//
// Every issued token is also a row of the session table (store.Session,
// keyed by jti). Logout, refresh (the old token), password change and reset
// mark rows revoked, and a password change also moves the user's
// TokensValidAfter, so revocation holds for real on every instance.
//
// # Revocation latency
//
// Verification must stay cheap on the hot path: after the signature and
// time checks, the row and user lookup is cached in process for
// Options.CacheTTL (default 1 s). A logout through this process is seen at
// once by every Engine built on the same *store.Store (they share the
// cache); other instances see it within CacheTTL. Deactivating a user is
// seen within the same bound.
//
// # Lifetime and duration 0
//
// A login lives Options.TokenTTL (24 h) by default, or `duration` minutes
// (1 … Options.MaxDuration, 30 days). `duration: 0` asks for a session that
// ends when the browser closes. A server cannot see a browser close, so such
// a token is flagged browser_session and is kept alive by use: it ends after
// Options.BrowserIdle (2 h, Laravel's session lifetime) without a request,
// and in any case after TokenTTL. The response carries
// X-Platform-Session-Lifetime: browser (otherwise the lifetime in minutes);
// clients should keep such a token in memory only, never in persistent
// storage.
//
// # Throttling
//
// Failed logins (and wrong old passwords, reset codes or security answers)
// are counted per account (the e-mail, lowercased) and per client address
// (IPv6 grouped by /64) in a [Throttle]. The first few failures in a window
// are free (5 per account, 20 per address, in one hour); after that each
// failure blocks the key for a delay that doubles from 1 s up to 15 minutes.
// A blocked attempt is a Throttled error with RetryAfter (429 with
// Retry-After on the wire) and its password is not
// checked, so guessing gains nothing. A successful login clears the
// account's count. Counters live in process memory, shared by every Engine
// on the same store; with several instances each keeps its own.
//
// # Secrets
//
// Passwords, tokens, reset codes and API keys never appear in logs or
// error messages: logs name users by id.
//
// identity imports caller, store, golang-jwt, bcrypt and the standard
// library: never net/http, apierr, a backend, a stage or the proxy root.
package identity
