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
// Lookups: as DreamFactory does, the lookups that apply to the caller
// (private ones included, and built-ins such as {user.id}) are replaced in
// a script's content before it runs, when the Platform is a
// [Substituter] and Options.HasLookups found tokens in it; a token
// without a value stays as it is. Each distinct substituted content is
// compiled once and kept (at most 64 per script), so a script using
// {user.id} compiles once per user until the bound drops the variants.
// A script without tokens pays nothing.
//
// Lua (gopher-lua) runs in-process in a sandbox: only the base, table,
// string and math libraries; no dofile, loadfile, load, loadstring,
// require, module, collectgarbage, getfenv, setfenv, rawset or
// getmetatable; no io, os or debug; library tables read-only so one run
// cannot change what the next sees; global assignments stay in a fresh
// environment per run. Interpreter states are pooled (at most 64 idle,
// kept across garbage collections; a state that failed is discarded), each
// with its platform.api built once; what belongs to a run (context,
// platform, event) is reset when it ends. The event and platform are lazy
// tables converted key by key on first read (pairs, next, rawget and
// setmetatable see them whole), [Lazy] parts of the event are built only
// then, and a part never read is not read back, so an empty hook converts
// nothing. Bounds: a time limit per run (Options.Timeout, default 5
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
// sandbox adds nothing but event and platform. Runtimes are pooled (one
// that was interrupted, overflowed its stack or that a Go panic went
// through is replaced, by the run that failed; one whose script threw is
// reused, so an abort costs microseconds; at most 64 idle ones are kept) and, so that one run cannot change what the
// next sees, every intrinsic reachable from the global object, the hidden
// iterator and generator prototypes and the global object itself are
// frozen when a runtime is built (in sloppy mode a write to a builtin or
// an undeclared global silently does nothing; in strict mode it throws).
// platform (api and session) is built once per runtime and frozen;
// platform.session is the run's own, converted on first read. The wrapper
// function of a script is made once per runtime and frozen too. The event
// object is made per run: its scalars at once, its objects (request,
// response) on first read, so an empty hook converts nothing; a script
// without allow_event_modification has its event not read back at all
// (the stage would ignore it), and a part a script never read comes back
// as the caller's value.
// Bounds: the time limit (a watchdog polling every 5 ms while JavaScript
// runs are in progress interrupts a run whose context has ended, so a run
// ends at most one poll past its limit: "Script error: time limit
// exceeded"; building a runtime does not count against it; it stops
// JavaScript between instructions, not inside one builtin call); a call
// depth of 500 ("Script error: stack overflow"); String.prototype.repeat,
// padStart and padEnd capped at 1 MiB results, Array.prototype.join and
// fill and Array.from at 1 Mi elements; no ArrayBuffer, SharedArrayBuffer,
// DataView or typed arrays (one call could allocate gigabytes); values
// passed back to Go are at most 64 levels deep and arrays 1 Mi elements
// long. goja has no allocation accounting, so the same watchdog samples
// the Go heap at each poll and interrupts the runs in progress when it
// passes 90% of GOMEMLIMIT (or, without one, the heap at the first run
// plus 1 GiB): "Script error: memory limit exceeded". That catches a
// string or array grown in a loop (s += s); it cannot stop a single
// builtin call that allocates on its own, and since the heap is the
// process's, every run in progress at that moment fails, not only the
// culprit. The watchdog stops a second after the last run, so an idle
// server does not wake up for it.
//
// External engines: nodejs, python3 and php run in long-lived worker
// processes of their interpreter (node, python3, php on PATH, or the one
// set with [SetInterpreter]), started on first use, at most [SetWorkers]
// runs of one engine at once (DefaultWorkers; a run made from a
// platform.api call of a running script passes the bound, so a chain
// cannot wait on itself), never a process per request. They speak JSON
// lines over stdin/stdout with a runner program embedded in this package
// (runners/): the script sees event and platform as in Lua, as JSON;
// platform.api calls come back over the pipe and run through the caller's
// [Platform]. A run past its time limit kills its worker ("Script error:
// time limit exceeded"); a worker that dies or breaks the protocol fails
// its own run and is replaced on the next one. An engine whose interpreter
// is missing fails with an error wrapping [ErrUnavailable] that names it
// (the stage answers 503). Workers get an environment with PATH and LANG
// only, and start in a private directory holding the runners.
//
// What each external sandbox holds, honestly:
//
//   - nodejs: node --experimental-permission (Node 20) with reads allowed
//     only on the runner: no file reads or writes, no child processes, no
//     worker threads, no native addons, whatever the script reaches. The
//     permission model does not cover the network in Node 20, so the runner
//     keeps it out of reach: scripts run in a vm context of their own (no
//     require, no process, eval and new Function disabled, every object the
//     script holds made in its own realm), fetch and the other network
//     globals are removed, Module._load refuses every module once the
//     runner is loaded, and process.binding, dlopen and kill are removed.
//     The vm context is not a security boundary on its own; a script that
//     escaped it would still meet the permission model, but could open a
//     socket through a loaded module. Heap: --max-old-space-size=256 (an
//     allocating script kills its worker only). Scripts are wrapped in an
//     async function: top-level return and await work; platform.api calls
//     are synchronous.
//   - python3: python3 -I -S; scripts run with reduced builtins (no open,
//     input, exit) whose __import__ gives only json, math, re, time,
//     datetime, random, string, hashlib, base64, uuid, decimal, collections,
//     itertools, functools, operator, copy, textwrap and urllib.parse; an
//     audit hook (PEP 578, which cannot be removed) then refuses opening
//     files, new imports, os.system, subprocess, exec/spawn/fork, kill,
//     sockets, ctypes, mmap and changes to the file system, so a script that
//     climbs out of its builtins (through __subclasses__) still meets it.
//     The address space is capped at 1 GiB (RLIMIT_AS): an allocating
//     script fails with MemoryError. event and its parts are dicts that
//     also read as attributes (event.request.payload); a top-level return
//     is allowed; raise ScriptAbort(403, "…") aborts.
//   - php: php -n (no ini files, no optional extensions) with open_basedir
//     on the runner directory, disable_functions for processes, network,
//     DNS, file reads and writes, the environment and mail,
//     disable_classes for the file and FFI classes, allow_url_fopen off and
//     memory_limit 256M. A script sees $event (by reference) and $platform
//     ($platform['api']->get(…), $platform['session']); throw new
//     ScriptAbort(403, "…") (or any exception whose code is 400-599)
//     aborts; echo output goes to the log.
//
// Script output (console.log, print, echo) goes to the debug log.
//
// Errors: error({status_code = 403, message = "…"}) in Lua and throw
// {status_code: 403, message: "…"} in JavaScript are an [Abort] with that
// status and message; any other failure is a [Failure] whose message
// begins "Script error:". [Check] compiles a script and returns its syntax
// error naming the line, which the system API turns into a 400 on save.
package script
