package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// maxRep bounds string.rep's result, the one library call that allocates
// in proportion to its arguments in a single step.
const maxRep = 1 << 20

// maxDepth bounds the nesting of values passed between Go and Lua (a
// table that contains itself ends there).
const maxDepth = 64

// luaLang compiles Lua scripts.
type luaLang struct{}

func (luaLang) compile(name, src string) (runner, error) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, fmt.Errorf("syntax error: %s", strings.TrimSpace(lastLine(err.Error())))
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, fmt.Errorf("syntax error: %w", err)
	}
	// A main chunk is a vararg function without a local arg (Lua 5.1's
	// compatibility table), so the table the interpreter would build for
	// it on every run could never be read.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return &luaScript{proto: proto}, nil
}

// lastLine returns the part of a parse error that names line and token.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[:i] + " " + strings.TrimSpace(s[i+1:])
	}
	return s
}

// luaScript is one compiled Lua script.
type luaScript struct{ proto *lua.FunctionProto }

// luaPoolSize bounds the idle interpreter states kept for reuse.
const luaPoolSize = 64

// luaFree holds idle sandboxed states. Unlike a sync.Pool it keeps them
// across garbage collections (building one costs some hundred
// allocations). A state serves one run at a time and is discarded after a
// run that failed.
var luaFree = make(chan *luaState, luaPoolSize)

func getLuaState() *luaState {
	select {
	case st := <-luaFree:
		return st
	default:
		return newSandbox()
	}
}

func putLuaState(st *luaState) {
	select {
	case luaFree <- st:
	default:
		st.L.Close()
	}
}

// luaState is one pooled sandboxed interpreter with what every run reuses:
// the globals, platform.api (read-only, its functions reading the run in
// progress) and the metatables. What belongs to one run (its context,
// platform, event and the sources of its lazy tables) is in run, reset
// when the run ends, so nothing of a run reaches the next.
type luaState struct {
	L        *lua.LState
	globals  *lua.LTable // the library; event and platform of the run in progress
	envMeta  *lua.LTable // a run's environment: reads fall through to globals
	lazyMeta *lua.LTable // tables converted from Go objects on first read
	arrays   *lua.LTable // marks tables made from JSON arrays
	api      *lua.LTable // platform.api, read-only
	run      luaRun
}

// luaRun is the part of a state that belongs to the run in progress.
type luaRun struct {
	ctx context.Context
	p   Platform
	// lazy holds the Go object behind each table not converted yet.
	lazy map[*lua.LTable]lazySource
}

// lazySource is the Go object behind a lazy table: a key is converted on
// first read (and then held by the table itself), or never when the
// script sets it first (done).
type lazySource struct {
	src   map[string]any
	done  map[string]struct{}
	depth int
}

// platformSource is the Go side of every run's platform table: api is the
// state's platform.api, session is converted from Platform.Session on
// first read.
var platformSource = map[string]any{"api": luaSpecial(luaAPI), "session": luaSpecial(luaSession)}

// luaSpecial marks the values of platformSource.
type luaSpecial int

const (
	luaAPI luaSpecial = iota
	luaSession
)

// newSandbox makes a state with only the base, table, string and math
// libraries, without the loaders, the registry tricks or the garbage
// collector control, and with the libraries read-only.
func newSandbox() *luaState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, RegistrySize: 4096, RegistryMaxSize: 1 << 20})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, n := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module", "collectgarbage",
		"newproxy", "_printregs", "getfenv", "setfenv", "rawset", "getmetatable", "_G", "print"} {
		L.SetGlobal(n, lua.LNil)
	}
	L.SetGlobal("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("rep", L.NewFunction(luaRep))
	for _, n := range []string{"string", "table", "math"} {
		L.SetGlobal(n, readOnly(L, L.GetGlobal(n).(*lua.LTable)))
	}
	st := &luaState{L: L, globals: L.G.Global, arrays: L.NewTable(), run: luaRun{lazy: map[*lua.LTable]lazySource{}}}
	st.envMeta = L.NewTable()
	st.envMeta.RawSetString("__index", st.globals)
	st.lazyMeta = L.NewTable()
	st.lazyMeta.RawSetString("__index", L.NewFunction(st.lazyIndex))
	st.lazyMeta.RawSetString("__newindex", L.NewFunction(st.lazyNewIndex))
	// What reads a table whole sees the keys not converted yet.
	pairsNext := st.globals.RawGetString("pairs").(*lua.LFunction).Upvalues[0].Value()
	st.globals.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		st.fill(t)
		L.Push(pairsNext)
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	}))
	for _, n := range []string{"next", "rawget", "setmetatable"} {
		orig := st.globals.RawGetString(n).(*lua.LFunction).GFunction
		st.globals.RawSetString(n, L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				st.fill(t)
			}
			return orig(L)
		}))
	}
	api := L.NewTable()
	for _, m := range []string{"get", "post", "put", "patch", "delete"} {
		api.RawSetString(m, L.NewFunction(st.apiCall(m)))
	}
	st.api = readOnly(L, api)
	return st
}

// readOnly returns a proxy of t whose writes raise an error.
func readOnly(L *lua.LState, t *lua.LTable) *lua.LTable {
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("library tables are read-only")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(p, mt)
	return p
}

// luaRep is string.rep capped at maxRep bytes.
func luaRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*int64(n) > maxRep {
		L.RaiseError("string.rep: result larger than %d bytes", maxRep)
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// The event and platform objects are lazy tables: each starts empty, with
// the Go object behind it in run.lazy, and converts a key on first read
// (__index), storing it in the table so later reads are plain. A key the
// script sets first is never converted (__newindex). pairs, next, rawget
// and setmetatable convert the whole table first; reading a table back
// takes the keys never converted from the Go object as they are. So an
// empty hook converts nothing and reads nothing back.

// lazyTable returns a table converted from src on demand.
func (st *luaState) lazyTable(src map[string]any, depth int) *lua.LTable {
	t := st.L.CreateTable(0, 0) // no map until a key is converted or set
	t.Metatable = st.lazyMeta
	st.run.lazy[t] = lazySource{src: src, depth: depth}
	return t
}

// lazyIndex is a lazy table's __index: the key converted from the Go
// object, unless the script set it already.
func (st *luaState) lazyIndex(L *lua.LState) int {
	t := L.CheckTable(1)
	k, ok := L.Get(2).(lua.LString)
	ls, lazy := st.run.lazy[t]
	if !ok || !lazy {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(st.convertKey(t, ls, string(k)))
	return 1
}

// convertKey converts key of a lazy table and stores it in the table.
func (st *luaState) convertKey(t *lua.LTable, ls lazySource, key string) lua.LValue {
	if _, done := ls.done[key]; done {
		return lua.LNil
	}
	gv, has := ls.src[key]
	if !has {
		return lua.LNil
	}
	st.markDone(t, ls, key)
	lv, err := st.toLua(gv, ls.depth+1)
	if err != nil {
		st.L.RaiseError("%s: %v", key, err)
	}
	t.RawSetString(key, lv)
	return lv
}

// markDone records that key of a lazy table is the table's own now.
func (st *luaState) markDone(t *lua.LTable, ls lazySource, key string) {
	if ls.done == nil {
		ls.done = make(map[string]struct{}, len(ls.src))
		st.run.lazy[t] = ls
	}
	ls.done[key] = struct{}{}
}

// lazyNewIndex is a lazy table's __newindex: a key set before it was read
// is the script's, never converted.
func (st *luaState) lazyNewIndex(L *lua.LState) int {
	t := L.CheckTable(1)
	k, v := L.Get(2), L.Get(3)
	if ks, ok := k.(lua.LString); ok {
		if ls, lazy := st.run.lazy[t]; lazy {
			if _, has := ls.src[string(ks)]; has {
				st.markDone(t, ls, string(ks))
			}
		}
	}
	L.RawSet(t, k, v)
	return 0
}

// fill converts what is left of a lazy table, which becomes a plain one.
func (st *luaState) fill(t *lua.LTable) {
	ls, lazy := st.run.lazy[t]
	if !lazy {
		return
	}
	for k := range ls.src {
		if _, done := ls.done[k]; !done {
			st.convertKey(t, ls, k)
			ls = st.run.lazy[t]
		}
	}
	delete(st.run.lazy, t)
	t.Metatable = lua.LNil
}

func (s *luaScript) run(ctx context.Context, ev map[string]any, p Platform) (res Result, err error) {
	st := getLuaState()
	L := st.L
	ok := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
		L.RemoveContext()
		st.globals.RawSetString("event", lua.LNil)
		st.globals.RawSetString("platform", lua.LNil)
		st.run.ctx, st.run.p = nil, nil
		clear(st.run.lazy)
		if ok {
			L.SetTop(0)
			putLuaState(st)
		} else {
			L.Close()
		}
	}()
	L.SetContext(ctx)
	st.run.ctx, st.run.p = ctx, p
	// The run's globals go to env; reads of the others fall through to
	// the state's globals, where event and platform are this run's.
	env := L.CreateTable(0, 0)
	env.Metatable = st.envMeta
	event := st.lazyTable(ev, 0)
	st.globals.RawSetString("event", event)
	st.globals.RawSetString("platform", st.lazyTable(platformSource, 0))
	fn := L.NewFunctionFromProto(s.proto)
	fn.Env = env
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return Result{}, st.luaError(err)
	}
	if ctx.Value(readOnlyKey{}) != nil {
		// Without allow_event_modification the result is not read back.
		ok = true
		return Result{}, nil
	}
	ret := L.Get(-1)
	evv := env.RawGetString("event")
	if evv == lua.LNil {
		evv = event
	}
	if evt, isTable := evv.(*lua.LTable); isTable {
		// A part of the event the script never read is left out: nil is
		// "unchanged".
		if _, lazy := st.run.lazy[evt]; lazy {
			for _, k := range []string{"request", "response"} {
				lv := evt.RawGetString(k)
				if lv == lua.LNil {
					continue
				}
				v, err := st.fromLua(lv, 1)
				if err != nil {
					return Result{}, err
				}
				m, _ := v.(map[string]any)
				if k == "request" {
					res.Request = m
				} else {
					res.Response = m
				}
			}
		} else {
			out, err := st.fromLua(evt, 0)
			if err != nil {
				return Result{}, err
			}
			if m, isMap := out.(map[string]any); isMap {
				res.Request, _ = m["request"].(map[string]any)
				res.Response, _ = m["response"].(map[string]any)
			}
		}
	}
	if ret != lua.LNil {
		v, err := st.fromLua(ret, 0)
		if _, isTable := ret.(*lua.LTable); isTable && err != nil {
			return Result{}, err
		}
		res.Returned = v
		if m, isMap := v.(map[string]any); isMap {
			if _, has := m["content"]; has {
				res.Response = m
			} else if _, has := m["status_code"]; has {
				res.Response = m
			}
		}
	}
	ok = true
	return res, nil
}

// luaError turns a failed PCall into an *Abort (error{status_code=…,
// message=…}) or a plain error.
func (st *luaState) luaError(err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err
	}
	if t, ok := ae.Object.(*lua.LTable); ok {
		st.fill(t)
		a := &Abort{Status: 500}
		if n, ok := t.RawGetString("status_code").(lua.LNumber); ok && n >= 400 && n <= 599 {
			a.Status = int(n)
		} else if n, ok := t.RawGetString("code").(lua.LNumber); ok && n >= 400 && n <= 599 {
			a.Status = int(n)
		}
		if m, ok := t.RawGetString("message").(lua.LString); ok {
			a.Message = string(m)
		} else {
			a.Message = "Script aborted the request."
		}
		return a
	}
	if ae.Cause != nil {
		return ae.Cause
	}
	msg := ae.Object.String()
	return errors.New(msg)
}

// apiCall is platform.api.{m}(path, payload): an inner call through the
// Platform of the run in progress.
func (st *luaState) apiCall(m string) lua.LGFunction {
	method := strings.ToUpper(m)
	return func(L *lua.LState) int {
		path := L.CheckString(1)
		var payload any
		if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
			v, err := st.fromLua(L.Get(2), 0)
			if err != nil {
				L.RaiseError("platform.api.%s: %v", m, err)
			}
			payload = v
		}
		p, ctx := st.run.p, st.run.ctx
		if p == nil || ctx == nil {
			L.RaiseError("platform.api is not available here")
		}
		status, content, err := p.API(ctx, method, path, payload)
		if err != nil {
			L.RaiseError("platform.api.%s %s: %v", m, path, err)
		}
		r := L.CreateTable(0, 2)
		r.RawSetString("status_code", lua.LNumber(status))
		cv, err := st.toLua(content, 0)
		if err != nil {
			L.RaiseError("platform.api.%s %s: %v", m, path, err)
		}
		r.RawSetString("content", cv)
		L.Push(r)
		return 1
	}
}

// toLua converts a JSON-shaped Go value to Lua; an object becomes a lazy
// table.
func (st *luaState) toLua(v any, depth int) (lua.LValue, error) {
	if depth > maxDepth {
		return lua.LNil, errors.New("value nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(x), nil
	case string:
		return lua.LString(x), nil
	case float64:
		return lua.LNumber(x), nil
	case int:
		return lua.LNumber(x), nil
	case int64:
		return lua.LNumber(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return lua.LString(x.String()), nil
		}
		return lua.LNumber(f), nil
	case []any:
		t := st.L.CreateTable(len(x), 0)
		for _, e := range x {
			lv, err := st.toLua(e, depth+1)
			if err != nil {
				return lua.LNil, err
			}
			t.Append(lv)
		}
		t.Metatable = st.arrays
		return t, nil
	case map[string]any:
		return st.lazyTable(x, depth), nil
	case Lazy:
		return st.toLua(x.Value(), depth)
	case luaSpecial:
		switch x {
		case luaAPI:
			return st.api, nil
		default:
			var sess map[string]any
			if st.run.p != nil {
				sess = st.run.p.Session()
			}
			if sess == nil {
				return st.L.NewTable(), nil
			}
			return st.toLua(sess, depth)
		}
	case []string:
		a := make([]any, len(x))
		for i, s := range x {
			a[i] = s
		}
		return st.toLua(a, depth)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return st.toLua(m, depth)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return lua.LNil, err
		}
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			return lua.LNil, err
		}
		return st.toLua(g, depth)
	}
}

// fromLua converts a Lua value to a JSON-shaped Go value: a table with a
// sequence part is an array, any other table an object. The keys of a
// lazy table never converted are its Go object's, as they are.
func (st *luaState) fromLua(v lua.LValue, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("value nested too deeply (a table that contains itself?)")
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		if n := x.MaxN(); n > 0 || x.Metatable == st.arrays {
			out := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				e, err := st.fromLua(x.RawGetInt(i), depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, e)
			}
			return out, nil
		}
		out := map[string]any{}
		if ls, lazy := st.run.lazy[x]; lazy {
			for k, e := range ls.src {
				if _, done := ls.done[k]; done {
					continue
				}
				switch x := e.(type) {
				case luaSpecial:
					continue // platform's: not data
				case Lazy:
					e = x.Value()
				}
				out[k] = e
			}
		}
		var err error
		x.ForEach(func(k, e lua.LValue) {
			if err != nil {
				return
			}
			var key string
			switch kk := k.(type) {
			case lua.LString:
				key = string(kk)
			case lua.LNumber:
				key = strconv.FormatFloat(float64(kk), 'f', -1, 64)
			default:
				return
			}
			out[key], err = st.fromLua(e, depth+1)
		})
		return out, err
	default:
		return nil, nil // functions, userdata, threads: not data
	}
}
