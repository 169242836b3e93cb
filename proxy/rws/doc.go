// Package rws is the remote HTTP service backend: a reverse proxy from
// /api/v2/{service}/… to a configured base URL, behind the platform's API
// keys, sessions, roles and limits. It forwards a request with one
// exchange, following httputil.ReverseProxy's rules (hop-by-hop headers,
// trailers, 1xx answers, flushing, aborting a broken stream) without its
// per-request copies of the request and its headers; protocol upgrades
// (WebSocket) go through httputil.ReverseProxy itself.
//
// It is a [service.Type] for Portcullis ([Type], service type "rws") and,
// through [New], an http.Handler usable alone in front of any URL, with its
// configuration in Go:
//
//	p, err := rws.New(rws.Config{BaseURL: "https://api.example.com/v1"})
//	if err != nil { … }
//	defer p.Close()
//	mux.Handle("/weather/", http.StripPrefix("/weather", p))
//
// # What is forwarded
//
// The method, the path below the service (as the client escaped it, a
// trailing slash kept; a "." or ".." segment, even percent-encoded, is
// refused with 400 so no request climbs above the base URL's path), the
// query after the base URL's own query, the body (streamed, never
// buffered), and the client's headers, except:
//
//   - hop-by-hop headers and the client's Forwarded / X-Forwarded-*
//     (the proxy sets X-Forwarded-For to the client's address and
//     X-Forwarded-Host and X-Forwarded-Proto to what the client used; it
//     does not trust a chain the client sent);
//   - platform credentials, never: X-Platform-API-Key,
//     X-Platform-Session-Token, every X-DreamFactory-* header and the
//     api_key and session_token query parameters;
//   - Authorization and Cookie, which carry the client's credentials for
//     the platform (a session bearer token) or its origin. They are
//     forwarded only when a header entry names them with
//     pass_from_client, and even then an Authorization bearer that is the
//     caller's platform session is dropped;
//   - X-HTTP-Method and X-Method-Override, which the platform has
//     already applied.
//
// X-Forwarded-Prefix tells the upstream the public path its base URL is
// exposed at ("/api/v2/weather", with any mount prefix before it), for the
// links it writes; the client's value is replaced.
//
// Inside a pipeline the request id the platform assigned (the X-Request-Id
// its request-id stage put on the response) replaces the client's, so logs
// on both sides can be joined.
//
// Configured headers and parameters replace the client's of the same name,
// so a client cannot spoof an injected identity. Their values may hold
// DreamFactory lookups: {user.id}, {user.email}, {user.name},
// {user.display_name}, {user.is_sys_admin}, {role.id}, {role.name},
// {app.id}, {app.name}, {df.host_url}, {df.version}, named lookups
// ({tenant}, with global < app < role < user precedence, private ones
// included, as DreamFactory substitutes them in service configuration) and
// modifiers such as {urlencode(user.email)}. A value whose lookup has no
// value for this caller (no signed-in user, say) is not sent at all, and
// the client's header or parameter of that name is still removed. Lookups
// that would forward a platform credential ({session.token},
// {app.api_key}) are refused by the configuration check.
//
// A header or parameter entry applies to the verbs in its action mask; an
// absent or zero mask means every verb (DreamFactory skips such an entry).
//
// # Responses and errors
//
// Upstream answers pass through as they are, status and headers included,
// streamed, with their content coding (the proxy neither asks the upstream
// for gzip on a client's behalf nor unzips): event streams and responses of unknown length are flushed as
// each chunk arrives. Headers the pipeline set before the backend ran
// (X-Request-Id, X-RateLimit-*, CORS) win over the upstream's of the same
// name, and when the pipeline has set CORS headers all of the upstream's
// Access-Control-* headers are dropped, so the two never mix. A failed
// exchange answers in the error envelope: 503 when the upstream cannot be
// reached (connection refused, host name that does not resolve,
// unreachable network), 504 when it does not answer within the service's
// timeout, 502 for anything else (a reset, a TLS failure, an answer that is
// not HTTP, an address the allow list forbids). A timeout that strikes
// while the body is being streamed aborts the connection, so the client
// sees a truncated response rather than a complete-looking one.
//
// Each service has its own Transport (dial and TLS handshake 10 s, a pool
// of kept-alive connections) and its timeout bounds the whole exchange;
// timeout 0 lifts that bound for long-lived streams. A header timeout
// shorter than that bounds the wait for the response headers alone (504,
// "did not answer in time").
//
// # The direct transport
//
// A request without a body to a plain-HTTP base URL (no TLS, an ASCII
// host, no environment proxy) is exchanged in the handler's own goroutine
// rather than through http.Transport, whose connections each run a
// writing and a reading goroutine and hand every request and answer
// between them and the caller (three hand-offs per exchange, each a
// wake-up, plus a context and a timer of their own). It speaks the same
// HTTP/1.1 with the same functions (the request written by
// http.Request.Write, the answer read by http.ReadResponse), over the same
// dialer and allow list, with the Transport's buffer sizes, header-size
// limit, idle-pool bounds and idle timeout, and its retry rules (a
// kept-alive connection that fails before the first byte of the answer is
// retried on another for a replayable request, or when nothing was
// written). What differs is only how it waits: the time limits are the
// connection's deadlines, the client's going away moves them to the past,
// and an idle connection is checked, without waiting, for a hang-up or
// bytes nobody asked for before it is used again (the Transport's reading
// goroutine notices both while the connection is idle). The request is
// written as http.Request.Write writes it, without its formatting
// allocations, and an exchange is pooled with its request, header map and
// body. In the bench's rws scenario (2026-11-25) this took about 130k of
// 496k instructions (callgrind, BenchmarkOverHTTP) and 39 of 120
// allocations (8.1 KB of 11.7) off each proxied request, and 2 syscalls
// (futex and nanosleep wake-ups). TestDirectMatchesTransport compares the
// two transports byte for byte, on the upstream's side and on the
// client's; TestWriteRequestMatchesWrite the two request writers.
// Requests with a body, upgrades and https upstreams (TLS settings,
// HTTP/2) keep the Transport.
//
// # Upstream allow list
//
// With UpstreamAllow (the --upstream-allow flag) the proxy connects only
// to addresses inside the listed CIDRs or IPs, or to hosts named by a
// host-name entry ("api.example.com", "*.example.com"). The check runs in
// the Transport's dialer on the address actually dialled: a host not named
// by an entry is resolved once, there, and only its allowed addresses are
// dialled, so DNS rebinding cannot reach a forbidden address. A host-name
// entry trusts that name's DNS; use CIDRs to pin addresses. Environment
// proxies (HTTP_PROXY) are ignored when an allow list is set. A forbidden
// address answers 502 "… the upstream allow list does not permit", with
// the address in the log only.
//
// # Caching
//
// With cache_enabled, 200 answers to GET are kept for cache_ttl seconds
// (default 300) in a per-service LRU bounded in entries, bytes and entry
// size, filled while the response streams to the first client. The key is
// the service, the forwarded path and query, the caller's role, every
// injected or passed-through header value and the negotiation headers
// (Accept, Accept-Encoding, Accept-Language, Origin): two callers share an
// entry only when the upstream would have received the same request.
// Responses with Set-Cookie, Cache-Control no-store, no-cache or private,
// or a Vary on any other header are not kept. A client's
// "Cache-Control: no-cache" skips the lookup. Hits carry X-Cache: HIT and
// Age. [Proxy.FlushCache] empties it (DELETE /system/cache).
//
// # API document
//
// The config key "openapi" may hold the remote service's OpenAPI 3.0
// document, as a JSON object or as JSON or YAML text ([ParseDoc]); its
// paths are relative to base_url. The configuration check loads it with
// kin-openapi (internal references only, 2 MiB at most) and validates it.
// The api_docs service then shows it with the platform's security in place
// of the document's own (the proxy sends the remote credentials itself).
// Without it the service is documented generically: every verb on the root
// and on any path below it is forwarded.
//
// rws imports the proxy leaves, proxy/service and proxy/store; never
// another backend, a stage or the proxy root.
package rws
