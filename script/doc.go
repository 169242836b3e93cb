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
// JavaScript (type "javascript", "v8js" accepted as a synonym) runs
// in-process on goja (ECMAScript 5.1 with most of ES2015+; no Node.js
// APIs). Each script is wrapped in a function of (event, platform), so
// declarations are local to the run and a returned {content,
// status_code} is the response (DreamFactory's script_result); line
// numbers stay the script's own. goja itself has no require, module
// loader, file system, process, timers, fetch or XMLHttpRequest; the
// sandbox adds nothing but event and platform. Runtimes are pooled (a
// runtime that failed or was interrupted is discarded, at most 64 idle
// ones are kept) and, so that one run cannot change what the next sees,
// every intrinsic reachable from the global object, the hidden iterator
// and generator prototypes and the global object itself are frozen when
// a runtime is built (in sloppy mode a write to a builtin or an
// undeclared global silently does nothing; in strict mode it throws).
// Bounds: the time limit (Runtime.Interrupt when the run's context ends:
// "Script error: time limit exceeded"; it stops JavaScript between
// instructions, not inside one builtin call); a call depth of 500
// ("Script error: stack overflow"); String.prototype.repeat, padStart and
// padEnd capped at 1 MiB results, Array.prototype.join and fill and
// Array.from at 1 Mi elements; no ArrayBuffer, SharedArrayBuffer, DataView
// or typed arrays (one call could allocate gigabytes); values passed back
// to Go are at most 64 levels deep and arrays 1 Mi elements long. goja has
// no allocation accounting, so a heap watchdog samples the Go heap every 5
// ms while a JavaScript run is in progress and interrupts the runs in
// progress when it passes 90% of GOMEMLIMIT (or, without one, the heap at
// the first run plus 1 GiB): "Script error: memory limit exceeded". That
// catches a string or array grown in a loop (s += s); it cannot stop a
// single builtin call that allocates on its own, and since the heap is the
// process's, every run in progress at that moment fails, not only the
// culprit.
//
// Errors: error({status_code = 403, message = "…"}) in Lua and throw
// {status_code: 403, message: "…"} in JavaScript are an [Abort] with that
// status and message; any other failure is a [Failure] whose message
// begins "Script error:". [Check] compiles a script and returns its syntax
// error naming the line, which the system API turns into a 400 on save.
package script
