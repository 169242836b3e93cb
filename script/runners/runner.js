// Portcullis script runner for Node.js: one worker process, one script run
// at a time, JSON lines on stdin/stdout (see script/external.go).
// Started with --experimental-permission: no file writes, no reads but this
// file, no child processes, no workers, no native addons. Network is not
// covered by Node 20's permission model: the runner removes fetch and the
// network modules from reach (scripts run in a vm context without require;
// Module._load refuses everything once the runner is loaded).
'use strict';
const fs = require('fs');
const vm = require('vm');
const Module = require('module');

const writeErr = (s) => { try { fs.writeSync(2, s + '\n'); } catch (e) { /* stderr gone */ } };

// Close the ways out: the loader, fetch and the other network globals.
Module._load = function () { throw new Error('require is not allowed in scripts'); };
for (const k of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response', 'Headers', 'FormData']) {
  try { delete globalThis[k]; } catch (e) { /* not configurable */ }
}
try { process.mainModule = undefined; } catch (e) { /* read-only */ }
for (const k of ['binding', '_linkedBinding', 'dlopen', 'kill', 'chdir', 'setuid', 'setgid', 'setgroups', 'seteuid', 'setegid']) {
  try { process[k] = undefined; } catch (e) { /* read-only */ }
}
for (const k of ['log', 'info', 'warn', 'error', 'debug']) console[k] = (...a) => writeErr(a.join(' '));

// Synchronous line I/O on fds 0 and 1.
const inBuf = Buffer.alloc(1 << 16);
let pending = [];
let pendingText = '';
function readLine() {
  for (;;) {
    const nl = pendingText.indexOf('\n');
    if (nl >= 0) {
      const line = pendingText.slice(0, nl);
      pendingText = pendingText.slice(nl + 1);
      return line;
    }
    let n;
    try {
      n = fs.readSync(0, inBuf, 0, inBuf.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN') { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2); continue; }
      if (e.code === 'EOF') return null;
      throw e;
    }
    if (n === 0) return null;
    pending.push(Buffer.from(inBuf.subarray(0, n)));
    // Decode only complete UTF-8 lines: keep bytes after the last newline.
    const all = Buffer.concat(pending);
    const last = all.lastIndexOf(10);
    if (last < 0) { pending = [all]; continue; }
    pendingText += all.subarray(0, last + 1).toString('utf8');
    pending = [all.subarray(last + 1)];
  }
}
function send(m) {
  const b = Buffer.from(JSON.stringify(m) + '\n', 'utf8');
  let off = 0;
  while (off < b.length) {
    try { off += fs.writeSync(1, b, off, b.length - off); } catch (e) {
      if (e.code === 'EAGAIN') { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2); continue; }
      throw e;
    }
  }
}

// platform.api: calls go back to Portcullis and wait for the reply; the
// reply travels as text so that the script only ever holds objects of its
// own context (an object of the runner's realm would lead to its Function
// constructor and so to process).
function apiCall(method, path, payload) {
  if (typeof path !== 'string') return JSON.stringify({ error: 'platform.api.' + method.toLowerCase() + ': path must be a string' });
  let body = null;
  if (payload !== undefined && payload !== null) {
    try { body = JSON.parse(JSON.stringify(payload)); } catch (e) { return JSON.stringify({ error: 'platform.api: payload is not JSON: ' + e.message }); }
  }
  send({ type: 'call', method, path, payload: body });
  const line = readLine();
  if (line === null) process.exit(0);
  return line;
}
function log(text) { writeErr(String(text)); }

// The script's side, built inside each context: platform.api, console, and
// a JSON parser of that realm.
const prelude = `(function (call, log) {
  'use strict';
  const str = (a) => a.map((x) => { if (typeof x === 'string') return x; try { return JSON.stringify(x); } catch (e) { return String(x); } }).join(' ');
  const c = { log: (...a) => log(str(a)), info: (...a) => log(str(a)), warn: (...a) => log(str(a)), error: (...a) => log(str(a)), debug: (...a) => log(str(a)) };
  globalThis.console = Object.freeze(c);
  const one = (m) => (path, payload) => {
    const r = JSON.parse(call(m, path, payload));
    if (r.error) throw new Error(String(r.error));
    return { status_code: r.status_code, content: r.content };
  };
  const api = Object.freeze({ get: one('GET'), post: one('POST'), put: one('PUT'), patch: one('PATCH'), delete: one('DELETE') });
  return Object.freeze({ api, parse: (s) => JSON.parse(s) });
})`;

// Compiled scripts by content key: each has its own context, so globals a
// script sets stay with that script.
const compiled = new Map();
function compile(name, src) {
  return new vm.Script('(async function (event, platform) {' + src + '\n})', { filename: name });
}
function get(key, name, src) {
  let c = compiled.get(key);
  if (!c) {
    const script = compile(name, src);
    const ctx = vm.createContext({}, { codeGeneration: { strings: false, wasm: false } });
    const tools = vm.runInContext(prelude, ctx)(apiCall, log);
    const fn = script.runInContext(ctx);
    c = { fn, tools };
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, c);
  }
  return c;
}
function syntaxMessage(e) {
  const m = /:(\d+)\n/.exec(String(e.stack || ''));
  return 'syntax error' + (m ? ' on line ' + m[1] : '') + ': ' + e.message;
}
// failure maps what a script threw: an object with a status_code (or
// code) from 400 to 599 aborts with it; anything else is a script error.
// Values thrown from the script's context are not instances of this
// realm's Error, so they are read by shape.
function failure(e) {
  if (e !== null && typeof e === 'object') {
    const st = Number(e.status_code !== undefined ? e.status_code : e.code);
    if (st >= 400 && st <= 599) return { type: 'done', abort: { status_code: st, message: e.message == null ? '' : String(e.message) } };
    if (typeof e.message === 'string') {
      const loc = /script:(\d+):\d+/.exec(String(e.stack || ''));
      return { type: 'done', failure: e.message + (loc ? ' (line ' + loc[1] + ')' : '') };
    }
  }
  return { type: 'done', failure: String(e) };
}

async function main() {
  send({ type: 'ready' });
  for (;;) {
    const line = readLine();
    if (line === null) return;
    let msg;
    try { msg = JSON.parse(line); } catch (e) { writeErr('bad message: ' + e.message); process.exit(2); }
    if (msg.type === 'check') {
      try { compile('script', msg.source); send({ type: 'done' }); } catch (e) { send({ type: 'done', failure: syntaxMessage(e) }); }
      continue;
    }
    let c;
    try { c = get(msg.key, 'script', msg.source); } catch (e) { send({ type: 'done', failure: syntaxMessage(e) }); continue; }
    // The event and the session are parsed in the script's own realm.
    const event = c.tools.parse(JSON.stringify(msg.event || {}));
    const platform = c.tools.parse('{}');
    platform.api = c.tools.api;
    platform.session = c.tools.parse(JSON.stringify(msg.session || {}));
    try {
      const result = await c.fn(event, platform);
      const out = { type: 'done', event };
      if (result !== undefined) out.result = result;
      send(out);
    } catch (e) {
      send(failure(e));
    }
  }
}
main().then(() => process.exit(0), (e) => { writeErr('runner: ' + (e && e.stack || e)); process.exit(1); });
