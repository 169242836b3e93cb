// Package cors is the pipeline stage that answers CORS preflights and adds
// CORS headers from the configured rules (DreamFactory's /system/cors
// records).
//
// Among the enabled rules whose path matches the request path (without the
// leading slash), the one with the longest path wins. A path is a glob where
// `*` matches anything (api/v2/*), or, when it starts with `^`, a
// case-insensitive regular expression. Without a matching rule no CORS
// header is added and a preflight passes on to the API (which answers it as
// any OPTIONS request). A preflight whose method the rule does not allow is
// refused with 405.
package cors
