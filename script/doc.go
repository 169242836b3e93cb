// Package script runs event scripts: the engine behind the handlers/script
// stage, with no HTTP in it (like policy and limiter).
//
// An [Engine] holds the active scripts of one configuration, compiled once
// (and cached across configurations by engine and content hash, so a
// reload that keeps a script does not compile it again). [Names] builds the
// event names a request fires, templated then resolved, as DreamFactory
// does; [Engine.Run] runs the script attached to one name over the event
// object and returns the event as the script left it.
//
// A script sees two globals, as in DreamFactory: event (event.request
// with method, parameters, headers, payload, uri, service, resource;
// event.response with status_code, content, headers in post_process) and
// platform (platform.api.get/post/put/patch/delete(path, payload) through
// the caller's [Platform], and platform.session).
//
// Lua (gopher-lua) runs in-process in a sandbox: only the base, table,
// string and math libraries; no dofile, loadfile, load, loadstring,
// require, module, collectgarbage, getfenv, setfenv, rawset or
// getmetatable; no io, os or debug; library tables read-only so one run
// cannot change what the next sees; global assignments stay in a fresh
// environment per run. Interpreter states are pooled (a state that failed
// is discarded). Bounds: a time limit per run (Options.Timeout, default 5
// s; past it the run fails with "Script error: time limit exceeded"), a
// call stack of 200 frames (deep recursion fails with "stack overflow"),
// string.rep capped at 1 MiB. gopher-lua has no instruction counter and no
// memory cap, so a script that allocates in a loop is stopped by the time
// limit only; payloads reaching a script are bounded by the server's body
// cap.
//
// Errors: error({status_code = 403, message = "…"}) in Lua is an [Abort]
// with that status and message; any other failure is a [Failure] whose
// message begins "Script error:".
package script
