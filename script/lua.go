package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

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

// states pools sandboxed interpreter states; a state serves one run at a
// time and is discarded after a run that failed.
var states = sync.Pool{New: func() any { return newSandbox() }}

// arrayMark is the metatable of tables made from JSON arrays, so that an
// empty one goes back to JSON as [] rather than {}.
var arrayMarkKey = "__portcullis_array"

// newSandbox makes a state with only the base, table, string and math
// libraries, without the loaders, the registry tricks or the garbage
// collector control, and with the libraries read-only.
func newSandbox() *lua.LState {
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
	L.G.Registry.RawSetString(arrayMarkKey, L.NewTable())
	return L
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

func (s *luaScript) run(ctx context.Context, ev map[string]any, p Platform) (res Result, err error) {
	L := states.Get().(*lua.LState)
	ok := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
		L.RemoveContext()
		if ok {
			L.SetTop(0)
			states.Put(L)
		} else {
			L.Close()
		}
	}()
	L.SetContext(ctx)
	env := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", L.Get(lua.GlobalsIndex))
	L.SetMetatable(env, mt)
	evv, err := toLua(L, ev, 0)
	if err != nil {
		return Result{}, err
	}
	env.RawSetString("event", evv)
	env.RawSetString("platform", platformTable(L, ctx, p))
	fn := L.NewFunctionFromProto(s.proto)
	fn.Env = env
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return Result{}, luaError(err)
	}
	if ctx.Value(readOnlyKey{}) != nil {
		// Without allow_event_modification the result is not read back.
		ok = true
		return Result{}, nil
	}
	ret := L.Get(-1)
	out, err := fromLua(L, env.RawGetString("event"), 0)
	if err != nil {
		return Result{}, err
	}
	if m, isMap := out.(map[string]any); isMap {
		res.Request, _ = m["request"].(map[string]any)
		res.Response, _ = m["response"].(map[string]any)
	}
	if ret != lua.LNil {
		if _, isTable := ret.(*lua.LTable); !isTable {
			res.Returned, _ = fromLua(L, ret, 0)
		}
	}
	if rt, isTable := ret.(*lua.LTable); isTable {
		v, err := fromLua(L, rt, 0)
		if err != nil {
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
func luaError(err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err
	}
	if t, ok := ae.Object.(*lua.LTable); ok {
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

// platformTable builds the platform object of one run.
func platformTable(L *lua.LState, ctx context.Context, p Platform) *lua.LTable {
	t := L.NewTable()
	api := L.NewTable()
	for _, m := range []string{"get", "post", "put", "patch", "delete"} {
		method := strings.ToUpper(m)
		api.RawSetString(m, L.NewFunction(func(L *lua.LState) int {
			path := L.CheckString(1)
			var payload any
			if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
				v, err := fromLua(L, L.Get(2), 0)
				if err != nil {
					L.RaiseError("platform.api.%s: %v", m, err)
				}
				payload = v
			}
			if p == nil {
				L.RaiseError("platform.api is not available here")
			}
			status, content, err := p.API(ctx, method, path, payload)
			if err != nil {
				L.RaiseError("platform.api.%s %s: %v", m, path, err)
			}
			r := L.NewTable()
			r.RawSetString("status_code", lua.LNumber(status))
			cv, err := toLua(L, content, 0)
			if err != nil {
				L.RaiseError("platform.api.%s %s: %v", m, path, err)
			}
			r.RawSetString("content", cv)
			L.Push(r)
			return 1
		}))
	}
	t.RawSetString("api", api)
	var sess map[string]any
	if p != nil {
		sess = p.Session()
	}
	sv, _ := toLua(L, sess, 0)
	if sv == lua.LNil {
		sv = L.NewTable()
	}
	t.RawSetString("session", sv)
	return t
}

// toLua converts a JSON-shaped Go value to Lua.
func toLua(L *lua.LState, v any, depth int) (lua.LValue, error) {
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
		t := L.CreateTable(len(x), 0)
		for _, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return lua.LNil, err
			}
			t.Append(lv)
		}
		if mt, ok := L.G.Registry.RawGetString(arrayMarkKey).(*lua.LTable); ok {
			L.SetMetatable(t, mt)
		}
		return t, nil
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return lua.LNil, err
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []string:
		a := make([]any, len(x))
		for i, s := range x {
			a[i] = s
		}
		return toLua(L, a, depth)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return toLua(L, m, depth)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return lua.LNil, err
		}
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			return lua.LNil, err
		}
		return toLua(L, g, depth)
	}
}

// fromLua converts a Lua value to a JSON-shaped Go value: a table with a
// sequence part is an array, any other table an object.
func fromLua(L *lua.LState, v lua.LValue, depth int) (any, error) {
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
		mark, _ := L.G.Registry.RawGetString(arrayMarkKey).(*lua.LTable)
		if n := x.MaxN(); n > 0 || (mark != nil && L.GetMetatable(x) == mark) {
			out := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				e, err := fromLua(L, x.RawGetInt(i), depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, e)
			}
			return out, nil
		}
		out := map[string]any{}
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
			out[key], err = fromLua(L, e, depth+1)
		})
		return out, err
	default:
		return nil, nil // functions, userdata, threads: not data
	}
}
