# Portcullis script runner for Python 3: one worker process, one script run
# at a time, JSON lines on stdin/stdout (see script/external.go).
#
# Sandbox: scripts run with a reduced set of builtins (no open, input,
# breakpoint, exit) whose __import__ gives only the modules listed in
# ALLOWED, all loaded before the sandbox is armed. Once armed, an audit
# hook (PEP 578, which cannot be removed) refuses opening files, new
# imports, processes (os.system, subprocess, exec*, spawn*, fork), signals,
# sockets, ctypes and changes to the file system, so an escape from the
# reduced builtins still meets it. The address space is capped
# (RLIMIT_AS), so an allocating script fails with MemoryError.
import sys
import json
import math
import re
import time
import datetime
import _strptime  # noqa: F401  (datetime.strptime imports it lazily)
import random
import string
import hashlib
import base64
import uuid
import decimal
import collections
import itertools
import functools
import operator
import copy
import textwrap
import urllib.parse
import builtins
import resource
import traceback

ALLOWED = {
    "json", "math", "re", "time", "datetime", "random", "string", "hashlib", "base64", "uuid", "decimal",
    "collections", "itertools", "functools", "operator", "copy", "textwrap", "urllib.parse", "urllib",
}

proto_in = sys.stdin.buffer
proto_out = sys.stdout.buffer
# print() in a script goes to stderr, which Portcullis logs.
sys.stdout = sys.stderr

try:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
except (ValueError, OSError):
    pass


def send(m):
    proto_out.write(json.dumps(m, default=str).encode("utf-8") + b"\n")
    proto_out.flush()


def read():
    line = proto_in.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


class Obj(dict):
    """A dict whose keys also read and write as attributes (event.request.payload)."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None

    def __setattr__(self, k, v):
        self[k] = v

    def __delattr__(self, k):
        try:
            del self[k]
        except KeyError:
            raise AttributeError(k) from None


def wrap(v):
    if isinstance(v, dict):
        return Obj((k, wrap(x)) for k, x in v.items())
    if isinstance(v, list):
        return [wrap(x) for x in v]
    return v


class ScriptAbort(Exception):
    """raise ScriptAbort(403, "message") ends the request with that status."""

    def __init__(self, status_code, message=""):
        super().__init__(message)
        self.status_code = status_code
        self.message = message


class Api:
    """platform.api: calls go back to Portcullis and wait for the reply."""

    def _call(self, method, path, payload=None):
        if not isinstance(path, str):
            raise TypeError("platform.api.%s: path must be a string" % method.lower())
        send({"type": "call", "method": method, "path": path, "payload": payload})
        r = read()
        if r.get("error"):
            raise RuntimeError(r["error"])
        return Obj(status_code=r.get("status_code"), content=wrap(r.get("content")))

    def get(self, path, payload=None):
        return self._call("GET", path, payload)

    def post(self, path, payload=None):
        return self._call("POST", path, payload)

    def put(self, path, payload=None):
        return self._call("PUT", path, payload)

    def patch(self, path, payload=None):
        return self._call("PATCH", path, payload)

    def delete(self, path, payload=None):
        return self._call("DELETE", path, payload)


API = Api()


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0 or name not in ALLOWED:
        raise ImportError("import of %s is not allowed in scripts" % name)
    return __import__(name, globals, locals, fromlist, level)


SAFE_BUILTINS = {k: v for k, v in vars(builtins).items()
                 if k not in ("open", "input", "breakpoint", "exit", "quit", "help", "copyright", "credits",
                              "license", "__loader__", "__spec__", "__import__")}
SAFE_BUILTINS["__import__"] = guarded_import
SAFE_BUILTINS["ScriptAbort"] = ScriptAbort

BLOCKED = {"open", "import", "os.system", "subprocess.Popen", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
           "os.exec", "os.kill", "os.killpg", "signal.pthread_kill", "pty.spawn", "os.listdir", "os.scandir",
           "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.symlink",
           "os.link", "os.utime", "os.chdir", "os.chflags", "os.putenv", "os.unsetenv", "os.startfile",
           "os.add_dll_directory", "shutil.copyfile", "shutil.copytree", "shutil.move", "shutil.rmtree",
           "shutil.chown", "mmap.__new__", "sys.addaudithook", "sys.setprofile", "sys.settrace",
           "code.__new__", "urllib.Request", "webbrowser.open", "glob.glob", "ctypes.dlopen", "resource.setrlimit",
           "sys._current_frames", "cpython.remote_debugger_script"}
BLOCKED_PREFIXES = ("socket.", "ctypes.", "subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "winreg.",
                    "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntplib.", "telnetlib.", "http.client.")
armed = False


def hook(event, args):
    if armed and (event in BLOCKED or event.startswith(BLOCKED_PREFIXES)):
        raise PermissionError("%s is not allowed in scripts" % event)


sys.addaudithook(hook)

compiled = {}


def compile_script(src):
    try:
        return compile(src, "script", "exec"), False
    except SyntaxError as e:
        if "'return' outside function" not in str(e):
            raise
    body = "def __portcullis_script__():\n" + textwrap.indent(src, "    ") + "\n"
    return compile(body, "script", "exec"), True


def syntax_message(e):
    line = getattr(e, "lineno", None)
    return "syntax error on line %s: %s" % (line, e.msg) if line else "syntax error: %s" % e


def failure(e, offset=0):
    st = getattr(e, "status_code", None)
    if st is None and e.args and isinstance(e.args[0], dict):
        d = e.args[0]
        st = d.get("status_code", d.get("code"))
        msg = d.get("message", "")
    else:
        msg = getattr(e, "message", None) or (str(e.args[0]) if e.args else "")
    if isinstance(st, int) and 400 <= st <= 599:
        return {"type": "done", "abort": {"status_code": st, "message": str(msg)}}
    line = None
    for frame, lineno in traceback.walk_tb(e.__traceback__):
        if frame.f_code.co_filename == "script":
            line = lineno - offset
    text = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    return {"type": "done", "failure": text + (" (line %d)" % line if line else "")}


def run(msg):
    key = msg.get("key")
    entry = compiled.get(key)
    if entry is None:
        try:
            entry = compile_script(msg.get("source", ""))
        except SyntaxError as e:
            return {"type": "done", "failure": syntax_message(e)}
        if len(compiled) > 500:
            compiled.clear()
        compiled[key] = entry
    code, as_function = entry
    event = wrap(msg.get("event") or {})
    platform = Obj(api=API, session=wrap(msg.get("session") or {}))
    g = {"__builtins__": SAFE_BUILTINS, "__name__": "__script__", "event": event, "platform": platform}
    try:
        exec(code, g)
        result = g["__portcullis_script__"]() if as_function else None
    except MemoryError:
        return {"type": "done", "failure": "MemoryError: the script used too much memory"}
    except RecursionError:
        return {"type": "done", "failure": "RecursionError: maximum recursion depth exceeded"}
    except BaseException as e:  # noqa: BLE001 (a script may raise SystemExit too)
        return failure(e, 1 if as_function else 0)
    out = {"type": "done", "event": event}
    if result is not None:
        out["result"] = result
    return out


def main():
    global armed
    sys.setrecursionlimit(500)
    armed = True
    send({"type": "ready"})
    while True:
        msg = read()
        if msg.get("type") == "check":
            try:
                compile_script(msg.get("source", ""))
                send({"type": "done"})
            except SyntaxError as e:
                send({"type": "done", "failure": syntax_message(e)})
            continue
        out = run(msg)
        try:
            send(out)
        except (TypeError, ValueError) as e:
            send({"type": "done", "failure": "the script left a value that is not JSON: %s" % e})


main()
