package script

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// jsMaxCallStack bounds the JavaScript call depth; past it a run fails
// with a stack overflow.
const jsMaxCallStack = 500

// jsMaxElems bounds the arrays the capped builtins (join, fill,
// Array.from) accept in one step.
const jsMaxElems = 1 << 20

// jsPrefix opens the function every JavaScript script is wrapped in, on
// the script's first line so that line numbers stay the script's own. The
// wrapper makes declarations local to the run and lets a script return a
// value (DreamFactory's script_result).
const jsPrefix = "(function (event, platform) {"

// jsLang compiles JavaScript scripts.
type jsLang struct{}

func (jsLang) compile(name, src string) (runner, error) {
	prg, err := goja.Compile(name, jsPrefix+src+"\n})", false)
	if err != nil {
		return nil, fmt.Errorf("syntax error: %s", jsSyntaxMessage(err, name, src))
	}
	return &jsScript{prg: prg}, nil
}

// jsLinePos finds goja's "Line N:C" in a syntax error.
var jsLinePos = regexp.MustCompile(`Line (\d+):(\d+) `)

// jsSyntaxMessage gives a compile error as "Line N:C message", with the
// column of the first line corrected for the wrapper and an error past the
// script's end (in the wrapper's closing line) put on its last line.
func jsSyntaxMessage(err error, name, src string) string {
	msg := strings.TrimPrefix(err.Error(), "SyntaxError: ")
	msg = strings.TrimPrefix(msg, name+": ")
	m := jsLinePos.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	line, _ := strconv.Atoi(msg[m[2]:m[3]])
	col, _ := strconv.Atoi(msg[m[4]:m[5]])
	if last := strings.Count(src, "\n") + 1; line > last {
		line = last
		col = len(src) - strings.LastIndex(src, "\n")
	} else if line == 1 {
		col = max(col-len(jsPrefix), 1)
	}
	return msg[:m[0]] + fmt.Sprintf("Line %d:%d ", line, col) + msg[m[1]:]
}

// jsScript is one compiled JavaScript script.
type jsScript struct{ prg *goja.Program }

// jsVM is one pooled sandboxed runtime: its platform object (frozen,
// built once: api and a session read on first use in each run), the
// wrapper functions of the scripts it has run, and the run in progress.
type jsVM struct {
	rt       *goja.Runtime
	api      *goja.Object
	platform *goja.Object
	freeze   goja.Callable
	// fns holds the wrapper function of each script this runtime ran,
	// frozen (a function object is shared by the runs of its script).
	fns map[*jsScript]goja.Callable
	// accessors holds the getter and setter of each lazy event key.
	accessors map[string][2]goja.Value
	// untouched is what a lazy key's getter gives while the event is read
	// back: the script never read or replaced the key.
	untouched *goja.Object

	// The run in progress.
	ctx         context.Context
	p           Platform
	ev          *goja.Object
	lazy        []jsLazy
	session     goja.Value
	readingBack bool
	// deadline is the context's deadline pushed back by the time building
	// this runtime took: start-up does not count against the time limit.
	deadline time.Time
	// interrupted is set by the watchdog (under its lock) when it
	// interrupts the run.
	interrupted bool
}

// jsLazy is one key of the event object whose value (an object or an
// array) is converted only when the script first reads it.
type jsLazy struct {
	key string
	val any
	js  goja.Value // the converted value, once read
}

// jsBuilt counts the runtimes built, for tests.
var jsBuilt atomic.Int64

// jsMaxFns bounds the wrapper functions a runtime keeps.
const jsMaxFns = 256

// readOnlyKey marks the context of a run whose script may not modify the
// event: its result is not read back.
type readOnlyKey struct{}

// jsPoolSize bounds the idle runtimes kept for reuse.
const jsPoolSize = 64

// jsFree holds idle sandboxed runtimes. Building one costs milliseconds
// (freezing every intrinsic materialises them all), so unlike a sync.Pool
// it keeps them across garbage collections. A runtime serves one run at a
// time and is discarded after a run that failed or was interrupted.
var jsFree = make(chan *jsVM, jsPoolSize)

// getJSVM returns an idle runtime, or a new one and how long building it
// took.
func getJSVM() (*jsVM, time.Duration) {
	select {
	case vm := <-jsFree:
		return vm, 0
	default:
		start := time.Now()
		vm := newJSSandbox()
		return vm, time.Since(start)
	}
}

func putJSVM(vm *jsVM) {
	select {
	case jsFree <- vm:
	default:
	}
}

// jsHarden caps the builtins that allocate in proportion to an argument in
// one step, then freezes every intrinsic reachable from the global object
// (and the hidden ones: iterator and generator prototypes) and the global
// object itself, so one run cannot change what the next one sees.
const jsHarden = `(function (maxStr, maxElems) {
  "use strict";
  function cap(obj, name, check) {
    var orig = obj[name];
    Object.defineProperty(obj, name, {value: function () { check(this, arguments); return orig.apply(this, arguments); },
      writable: true, configurable: true, enumerable: false});
  }
  function len(o) { var n = o == null ? 0 : Number(o.length); return n > 0 ? n : 0; }
  cap(String.prototype, "repeat", function (s, a) {
    if (String(s).length * Number(a[0]) > maxStr) throw new RangeError("String.prototype.repeat: result longer than " + maxStr);
  });
  ["padStart", "padEnd"].forEach(function (n) {
    cap(String.prototype, n, function (s, a) {
      if (Number(a[0]) > maxStr) throw new RangeError("String.prototype." + n + ": result longer than " + maxStr);
    });
  });
  cap(Array.prototype, "join", function (o) {
    if (len(o) > maxElems) throw new RangeError("Array.prototype.join: more than " + maxElems + " elements");
  });
  cap(Array.prototype, "fill", function (o) {
    if (len(o) > maxElems) throw new RangeError("Array.prototype.fill: more than " + maxElems + " elements");
  });
  cap(Array, "from", function (_, a) {
    if (a[0] != null && typeof a[0] === "object" && !(Symbol.iterator in a[0]) && len(a[0]) > maxElems)
      throw new RangeError("Array.from: more than " + maxElems + " elements");
  });
  ["ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
   "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
   "WeakRef", "FinalizationRegistry"].forEach(function (n) { delete globalThis[n]; });
  var seen = new Set();
  function freeze(o) {
    if (o === null || (typeof o !== "object" && typeof o !== "function") || seen.has(o)) return;
    seen.add(o);
    Object.freeze(o);
    Reflect.ownKeys(o).forEach(function (k) {
      var d = Object.getOwnPropertyDescriptor(o, k);
      if (!d) return;
      if ("value" in d) freeze(d.value); else { freeze(d.get); freeze(d.set); }
    });
    freeze(Object.getPrototypeOf(o));
  }
  var hidden = [
    function () { return Object.getPrototypeOf(function* () {}); },
    function () { return Object.getPrototypeOf((function* () {})()); },
    function () { return Object.getPrototypeOf(async function () {}); },
    function () { return Object.getPrototypeOf([][Symbol.iterator]()); },
    function () { return Object.getPrototypeOf(new Map()[Symbol.iterator]()); },
    function () { return Object.getPrototypeOf(new Set()[Symbol.iterator]()); },
    function () { return Object.getPrototypeOf(""[Symbol.iterator]()); },
    function () { return Object.getPrototypeOf(/a/[Symbol.matchAll]("a")); },
    function () { return (function () { return arguments; })(); }
  ];
  hidden.forEach(function (f) { try { freeze(f()); } catch (e) {} });
  freeze(globalThis);
})`

// newJSSandbox makes a runtime with the capped builtins, frozen
// intrinsics and a bounded call stack. goja has no require, module
// loader, file system, process, timers or network of its own; nothing is
// added but what each run passes in (event, platform).
func newJSSandbox() *jsVM {
	jsBuilt.Add(1)
	rt := goja.New()
	rt.SetMaxCallStackSize(jsMaxCallStack)
	v, err := rt.RunString(jsHarden)
	if err == nil {
		if f, ok := goja.AssertFunction(v); ok {
			_, err = f(goja.Undefined(), rt.ToValue(maxRep), rt.ToValue(jsMaxElems))
		}
	}
	vm := &jsVM{rt: rt, fns: map[*jsScript]goja.Callable{}, accessors: map[string][2]goja.Value{}, untouched: rt.NewObject()}
	if err == nil {
		vm.freeze, _ = goja.AssertFunction(rt.Get("Object").ToObject(rt).Get("freeze"))
		vm.api = jsAPI(vm)
		_, err = vm.freeze(goja.Undefined(), vm.api)
	}
	if err == nil {
		vm.platform = rt.NewObject()
		err = vm.platform.DefineDataProperty("api", vm.api, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	if err == nil {
		err = vm.platform.DefineAccessorProperty("session", rt.ToValue(vm.getSession), nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	if err == nil {
		_, err = vm.freeze(goja.Undefined(), vm.platform)
	}
	if err != nil {
		panic(fmt.Sprintf("script: building the JavaScript sandbox: %v", err)) // a bug, not input
	}
	return vm
}

// getSession is the getter of platform.session: the run's session,
// converted on first read.
func (vm *jsVM) getSession(goja.FunctionCall) goja.Value {
	if vm.session != nil {
		return vm.session
	}
	var sess map[string]any
	if vm.p != nil {
		sess = vm.p.Session()
	}
	sv, err := toJS(vm.rt, sess, 0)
	if err != nil {
		panic(vm.rt.NewGoError(fmt.Errorf("platform.session: %w", err)))
	}
	if goja.IsNull(sv) {
		sv = vm.rt.NewObject()
	}
	vm.session = sv
	return sv
}

// fn returns the wrapper function of s in this runtime: made by running
// the program once, then frozen and kept, so a run makes no function.
func (vm *jsVM) fn(s *jsScript) (goja.Callable, error) {
	if f, ok := vm.fns[s]; ok {
		return f, nil
	}
	fv, err := vm.rt.RunProgram(s.prg)
	if err != nil {
		return nil, err
	}
	f, ok := goja.AssertFunction(fv)
	if !ok {
		return nil, errors.New("script did not compile to a function")
	}
	if _, err := vm.freeze(goja.Undefined(), fv); err != nil {
		return nil, err
	}
	if _, err := vm.freeze(goja.Undefined(), fv.ToObject(vm.rt).Get("prototype")); err != nil {
		return nil, err
	}
	if len(vm.fns) >= jsMaxFns {
		clear(vm.fns)
	}
	vm.fns[s] = f
	return f, nil
}

// event builds the event object of a run: scalars set at once, objects
// and arrays behind an accessor that converts them on first read (and then
// replaces itself with a plain data property), so that a script pays for
// the parts of the event it reads.
func (vm *jsVM) event(ev map[string]any) (*goja.Object, error) {
	rt := vm.rt
	o := rt.NewObject()
	vm.ev = o
	vm.lazy = vm.lazy[:0]
	for k, v := range ev {
		switch v.(type) {
		case map[string]any, []any:
			acc, err := vm.accessor(k)
			if err != nil {
				return nil, err
			}
			vm.lazy = append(vm.lazy, jsLazy{key: k, val: v})
			if err := o.DefineAccessorProperty(k, acc[0], acc[1], goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
				return nil, err
			}
		default:
			jv, err := toJS(rt, v, 0)
			if err != nil {
				return nil, err
			}
			if err := o.Set(k, jv); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// accessor returns the getter and setter of lazy event key k, made once
// per runtime.
func (vm *jsVM) accessor(k string) ([2]goja.Value, error) {
	if acc, ok := vm.accessors[k]; ok {
		return acc, nil
	}
	if len(vm.accessors) >= jsMaxFns {
		return [2]goja.Value{}, fmt.Errorf("event: too many keys")
	}
	rt := vm.rt
	get := func(call goja.FunctionCall) goja.Value {
		l := vm.lazyEntry(call.This, k)
		if l == nil {
			return goja.Undefined()
		}
		if l.js == nil {
			if vm.readingBack {
				return vm.untouched
			}
			jv, err := toJS(rt, l.val, 0)
			if err != nil {
				panic(rt.NewGoError(fmt.Errorf("event.%s: %w", k, err)))
			}
			l.js = jv
		}
		// From now on a plain property (where the script has not frozen
		// the event).
		_ = vm.ev.DefineDataProperty(k, l.js, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		return l.js
	}
	set := func(call goja.FunctionCall) goja.Value {
		if l := vm.lazyEntry(call.This, k); l != nil {
			l.js = call.Argument(0)
			_ = vm.ev.DefineDataProperty(k, l.js, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		}
		return goja.Undefined()
	}
	acc := [2]goja.Value{rt.ToValue(get), rt.ToValue(set)}
	vm.accessors[k] = acc
	return acc, nil
}

// lazyEntry returns the lazy key k of the run in progress when this is its
// event object.
func (vm *jsVM) lazyEntry(this goja.Value, k string) *jsLazy {
	if o, ok := this.(*goja.Object); !ok || o != vm.ev {
		return nil
	}
	for i := range vm.lazy {
		if vm.lazy[i].key == k {
			return &vm.lazy[i]
		}
	}
	return nil
}

// readBack converts the event object as the script left it; a lazy key
// the script never read or replaced comes back as the caller's value.
func (vm *jsVM) readBack(o *goja.Object) (map[string]any, error) {
	out := map[string]any{}
	for _, k := range o.Keys() {
		vm.readingBack = true
		v := o.Get(k)
		vm.readingBack = false
		if v == vm.untouched {
			if l := vm.lazyEntry(o, k); l != nil {
				out[k] = l.val
			}
			continue
		}
		e, err := fromJSValue(vm.rt, v, 1)
		if err != nil {
			return nil, err
		}
		if _, skip := e.(jsSkip); skip {
			continue
		}
		out[k] = e
	}
	return out, nil
}

// endRun forgets the run in progress.
func (vm *jsVM) endRun() {
	vm.ctx, vm.p, vm.ev, vm.session, vm.readingBack, vm.deadline = nil, nil, nil, nil, false, time.Time{}
	clear(vm.lazy)
	vm.lazy = vm.lazy[:0]
}

func (s *jsScript) run(ctx context.Context, ev map[string]any, p Platform) (res Result, err error) {
	if ctx.Err() != nil {
		return Result{}, ErrTimeLimit
	}
	vm, built := getJSVM()
	rt := vm.rt
	reusable := false
	vm.ctx, vm.p = ctx, p
	if d, ok := ctx.Deadline(); ok {
		vm.deadline = d.Add(built)
	}
	heapWatch.enter(vm)
	defer func() {
		interrupted := heapWatch.leave(vm)
		vm.endRun()
		if r := recover(); r != nil {
			err = jsError(r)
			reusable = false
		}
		if reusable && !interrupted {
			rt.ClearInterrupt()
			putJSVM(vm)
			return
		}
		// A runtime the watchdog interrupted may not have seen the
		// interrupt yet, and one a Go panic went through may be in any
		// state: it is dropped, and a new one takes its place now (the
		// failing run pays for it, not the next one).
		putJSVM(newJSSandbox())
	}()
	fn, err := vm.fn(s)
	if err != nil {
		return Result{}, jsError(err)
	}
	evObj, err := vm.event(ev)
	if err != nil {
		return Result{}, err
	}
	ret, err := fn(goja.Undefined(), evObj, vm.platform)
	if err != nil {
		// A thrown exception leaves the runtime as it was (everything a
		// run shares is frozen); an interrupt or a stack overflow does
		// not.
		_, reusable = err.(*goja.Exception)
		return Result{}, jsError(err)
	}
	if ctx.Value(readOnlyKey{}) != nil {
		reusable = true
		return Result{}, nil
	}
	m, err := vm.readBack(evObj)
	if err != nil {
		return Result{}, err
	}
	res.Request, _ = m["request"].(map[string]any)
	res.Response, _ = m["response"].(map[string]any)
	if r, isObj := ret.(*goja.Object); isObj && r.ClassName() == "Array" {
		if v, err := fromJS(rt, r, 0); err == nil {
			res.Returned = v
		}
	} else if !isObj && ret != nil && !goja.IsUndefined(ret) && !goja.IsNull(ret) {
		res.Returned = ret.Export()
	}
	if r, isObj := ret.(*goja.Object); isObj && r.ClassName() == "Object" {
		v, err := fromJS(rt, r, 0)
		if err != nil {
			return Result{}, err
		}
		res.Returned = v
		if m, isMap := v.(map[string]any); isMap {
			_, hasContent := m["content"]
			_, hasStatus := m["status_code"]
			if hasContent || hasStatus {
				res.Response = m
			}
		}
	}
	reusable = true
	return res, nil
}

// jsError turns what a run threw into an *Abort (throw {status_code: 403,
// message: "…"}), the time limit or memory error, or a plain error.
func jsError(x any) error {
	var ex *goja.Exception
	switch e := x.(type) {
	case *goja.InterruptedError:
		if err, ok := e.Value().(error); ok {
			return err
		}
		return fmt.Errorf("interrupted: %v", e.Value())
	case *goja.StackOverflowError:
		return errors.New("stack overflow (maximum call stack size exceeded)")
	case *goja.Exception:
		ex = e
	case error:
		if errors.As(e, &ex) {
			break
		}
		return e
	default:
		return fmt.Errorf("%v", x)
	}
	if o, ok := ex.Value().(*goja.Object); ok && o.ClassName() == "Object" {
		a := &Abort{Status: 500}
		if n, ok := jsStatus(o.Get("status_code")); ok {
			a.Status = n
		} else if n, ok := jsStatus(o.Get("code")); ok {
			a.Status = n
		}
		if m := o.Get("message"); m != nil && !goja.IsUndefined(m) && !goja.IsNull(m) {
			a.Message = m.String()
		} else {
			a.Message = "Script aborted the request."
		}
		return a
	}
	msg := ex.Value().String()
	if ex.Value() == nil {
		msg = ex.Error()
	}
	return errors.New(msg)
}

// jsStatus reads an error status between 400 and 599.
func jsStatus(v goja.Value) (int, bool) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0, false
	}
	f := v.ToFloat()
	if f >= 400 && f <= 599 && f == math.Trunc(f) {
		return int(f), true
	}
	return 0, false
}

// jsAPI builds platform.api of a runtime: get, post, put, patch and
// delete(path, payload) making inner calls through the Platform of the
// run in progress.
func jsAPI(vm *jsVM) *goja.Object {
	rt := vm.rt
	api := rt.NewObject()
	for _, m := range []string{"get", "post", "put", "patch", "delete"} {
		method := strings.ToUpper(m)
		_ = api.Set(m, func(call goja.FunctionCall) goja.Value {
			path := call.Argument(0)
			if goja.IsUndefined(path) || goja.IsNull(path) {
				panic(rt.NewTypeError("platform.api.%s: a path is required", m))
			}
			var payload any
			if a := call.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
				v, err := fromJS(rt, a, 0)
				if err != nil {
					panic(rt.NewGoError(fmt.Errorf("platform.api.%s: %w", m, err)))
				}
				payload = v
			}
			p, ctx := vm.p, vm.ctx
			if p == nil || ctx == nil {
				panic(rt.NewGoError(errors.New("platform.api is not available here")))
			}
			status, content, err := p.API(ctx, method, path.String(), payload)
			if err != nil {
				panic(rt.NewGoError(fmt.Errorf("platform.api.%s %s: %w", m, path.String(), err)))
			}
			r := rt.NewObject()
			_ = r.Set("status_code", status)
			cv, err := toJS(rt, content, 0)
			if err != nil {
				panic(rt.NewGoError(fmt.Errorf("platform.api.%s %s: %w", m, path.String(), err)))
			}
			_ = r.Set("content", cv)
			return r
		})
	}
	return api
}

// toJS converts a JSON-shaped Go value to a fresh JavaScript value (never
// a wrapper around the Go value, so a script's changes stay in its run).
func toJS(rt *goja.Runtime, v any, depth int) (goja.Value, error) {
	if depth > maxDepth {
		return goja.Null(), errors.New("value nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		return goja.Null(), nil
	case bool, string, float64, int, int64:
		return rt.ToValue(x), nil
	case []any:
		items := make([]any, len(x))
		for i, e := range x {
			jv, err := toJS(rt, e, depth+1)
			if err != nil {
				return goja.Null(), err
			}
			items[i] = jv
		}
		return rt.NewArray(items...), nil
	case map[string]any:
		// Keys in sorted order, so that what a script enumerates or
		// stringifies is the same on every run (a Go map has no order).
		o := rt.NewObject()
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e := x[k]
			jv, err := toJS(rt, e, depth+1)
			if err != nil {
				return goja.Null(), err
			}
			if err := o.Set(k, jv); err != nil {
				return goja.Null(), err
			}
		}
		return o, nil
	default:
		g, err := jsonShape(x)
		if err != nil {
			return goja.Null(), err
		}
		return toJS(rt, g, depth)
	}
}

// jsSkip marks a value JSON leaves out (functions, symbols, undefined in
// an object).
type jsSkip struct{}

// fromJS converts a JavaScript value to a JSON-shaped Go value: arrays to
// []any, other objects to map[string]any of their own enumerable
// properties, functions and symbols left out, dates as RFC 3339 strings.
func fromJS(rt *goja.Runtime, v goja.Value, depth int) (any, error) {
	x, err := fromJSValue(rt, v, depth)
	if _, skip := x.(jsSkip); skip {
		return nil, err
	}
	return x, err
}

func fromJSValue(rt *goja.Runtime, v goja.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("value nested too deeply (an object that contains itself?)")
	}
	if v == nil || goja.IsUndefined(v) {
		return jsSkip{}, nil
	}
	if goja.IsNull(v) {
		return nil, nil
	}
	o, isObj := v.(*goja.Object)
	if !isObj {
		switch e := v.Export().(type) {
		case float64:
			if math.IsNaN(e) || math.IsInf(e, 0) {
				return nil, nil
			}
			if e == math.Trunc(e) && math.Abs(e) < 1<<53 {
				return int64(e), nil
			}
			return e, nil
		case int64, string, bool:
			return e, nil
		case *big.Int:
			return e.String(), nil
		default:
			return jsSkip{}, nil // symbols
		}
	}
	switch o.ClassName() {
	case "Function":
		return jsSkip{}, nil
	case "Array":
		n := o.Get("length").ToInteger()
		if n > jsMaxElems {
			return nil, fmt.Errorf("array of %d elements is too long", n)
		}
		out := make([]any, 0, n)
		for i := int64(0); i < n; i++ {
			e, err := fromJSValue(rt, o.Get(fmt.Sprint(i)), depth+1)
			if err != nil {
				return nil, err
			}
			if _, skip := e.(jsSkip); skip {
				e = nil
			}
			out = append(out, e)
		}
		return out, nil
	case "Date":
		if t, ok := o.Export().(time.Time); ok {
			return t.UTC().Format(time.RFC3339Nano), nil
		}
	}
	out := map[string]any{}
	for _, k := range o.Keys() {
		e, err := fromJSValue(rt, o.Get(k), depth+1)
		if err != nil {
			return nil, err
		}
		if _, skip := e.(jsSkip); skip {
			continue
		}
		out[k] = e
	}
	return out, nil
}
