// Package apidocs is the backend of the `swagger` service type, the
// built-in api_docs service: OpenAPI 3 documents of every service, and the
// interactive API docs page.
//
// # Documents
//
//	GET /api/v2/api_docs            the combined document of every service
//	GET /api/v2/api_docs/{service}  one service's document
//	GET /api/v2/{service}/_spec     the same (the proxy root serves it
//	                                with [Builder.ServeService])
//
// A backend describes its API by implementing [service.Documenter]: the
// whole API as an administrator sees it, paths relative to the service
// root, built on service.NewDocument with its shared components (the error
// envelope {"error":{"code","message","context","status_code"}}, the error
// responses, the API key and session token security schemes). Backends
// that do not implement it are documented with an empty paths object.
//
// The [Builder] turns that into what the caller may see:
//
//  1. The service must exist, be active and be reached by the caller's
//     role with some verb ([service.AccessChecker.Reaches]); otherwise
//     404 or 403. The combined document leaves such services out.
//  2. Every operation the role does not allow
//     ([service.AccessChecker.Allowed] with the path as a template, such
//     as "_table/{table_name}", and the verb) is dropped, and so is a path
//     left without operations. Administrators see everything.
//  3. Components nothing refers to any more are dropped, so a document
//     never shows the schema of a table the role cannot reach; the shared
//     components always stay.
//  4. info comes from the service record (label, description) and
//     Portcullis's version; servers is the service's URL below /api/v2
//     (after the prefix the server is mounted under, read from the
//     request).
//  5. The document is encoded, loaded with kin-openapi (internal
//     references only) and validated; a document that fails is a 500
//     naming the problem, never served. The SHA-256 of each document that
//     passed is remembered (512 at most), so the same document is
//     validated once: for a 200-table database that is 1.4 s of the first
//     request, and 0.4 s is left for the later ones (2 loaded cores).
//
// The combined document has the paths of each service below /{service},
// each operation tagged with the service name (the tags list the
// services), operation ids prefixed "{service}.", and every component but
// the shared ones renamed "{service}.{component}". A service whose
// document cannot be made now (its database does not answer) is left out
// and named in info.description.
//
// Documents depend on the caller's role, so they are sent with
// Cache-Control: private, no-store.
//
// # The page
//
// [UI] serves the API docs page (the proxy root mounts it at /api/docs/,
// outside /api/v2; it needs no API key itself): Swagger UI from the
// github.com/swaggo/files/v2 module, embedded in the binary, with a bar
// where a user pastes an API key and optionally a session token, picks a
// service (the list comes from the combined document's tags) and loads
// the document; "Try it out" calls send the same credentials, to the
// page's own origin only. A Content-Security-Policy keeps everything on
// that origin: no CDN. #key=…&token=…&service=… in the address fills the
// form and loads at once (the fragment never reaches a server and is
// cleared).
//
// apidocs imports the leaves, proxy/service, proxy/store and kin-openapi;
// never another backend, a stage or the proxy root.
package apidocs
