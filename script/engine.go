package script

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout is the time limit of one script run when Options.Timeout
// is zero.
const DefaultTimeout = 5 * time.Second

// Script is one event script as the system API stores it.
type Script struct {
	// Name is the event name the script is attached to.
	Name string
	// Type is the engine: "lua", "javascript" or "v8js", "nodejs",
	// "python3" ("python"), "php".
	Type string
	// Content is the script's source.
	Content string
	// AllowModification lets the script change the request or the response
	// (DreamFactory's allow_event_modification).
	AllowModification bool
}

// Abort is a script's deliberate refusal: in Lua
// error({status_code = 403, message = "…"}). The request ends with Status
// and Message.
type Abort struct {
	Status  int
	Message string
}

func (a *Abort) Error() string { return fmt.Sprintf("script aborted: %d %s", a.Status, a.Message) }

// Failure is any other script error; its message begins "Script error:".
type Failure struct {
	Message string
	Err     error
}

func (f *Failure) Error() string { return "Script error: " + f.Message }

// Unwrap returns the underlying error.
func (f *Failure) Unwrap() error { return f.Err }

// ErrTimeLimit is wrapped by the Failure of a script past its time limit.
var ErrTimeLimit = errors.New("time limit exceeded")

// ErrUnavailable is wrapped by the error of a script whose engine is not
// available on this machine.
var ErrUnavailable = errors.New("script engine unavailable")

// Platform is what a script reaches through its platform object.
type Platform interface {
	// API makes an inner call (platform.api.get and its siblings): method,
	// a path below /api/v2/ such as "db/_table/todo?limit=5", and an
	// optional payload. It returns the status and the decoded content.
	API(ctx context.Context, method, path string, payload any) (status int, content any, err error)
	// Session is platform.session: user, app and role.
	Session() map[string]any
}

// Substituter is implemented by a Platform that replaces lookups
// ({name}, DreamFactory's syntax) in a script's content before it runs,
// as DreamFactory does with every lookup that applies to the caller,
// private ones included. Substitute returns the content to run and
// whether it differs from src. The engine asks only for scripts that
// Options.HasLookups found tokens in.
type Substituter interface {
	Substitute(src string) (string, bool)
}

// Lazy is a part of an event built when a script first reads it (the
// stage gives the request's parameters and headers so): Lua converts it
// only then, the other engines get it built ([Resolve]) before the run.
// Lazy values count at the event's first two levels (event.request.x).
type Lazy interface {
	// Value builds the part: JSON-shaped data, the same on every call.
	Value() any
}

// Resolve replaces the Lazy values of ev and of its objects with what they
// build, in place; an event handed to another goroutine (a queued script)
// or kept past a change of the request it was made from is resolved
// first.
func Resolve(ev map[string]any) {
	for k, v := range ev {
		switch x := v.(type) {
		case Lazy:
			ev[k] = x.Value()
		case map[string]any:
			for k2, v2 := range x {
				if lz, ok := v2.(Lazy); ok {
					x[k2] = lz.Value()
				}
			}
		}
	}
}

// Result is what a run leaves behind: the event as the script left it.
type Result struct {
	// Request is event.request after the run.
	Request map[string]any
	// Response is event.response after the run; nil when the script did
	// not set one (pre_process).
	Response map[string]any
	// Returned is the value the script returned as JSON-shaped data (nil
	// when it returned nothing); a scripted service answers with it.
	Returned any
}

// runner runs one compiled script of one engine.
type runner interface {
	run(ctx context.Context, ev map[string]any, p Platform) (Result, error)
}

// language compiles scripts of one engine.
type language interface {
	compile(name, src string) (runner, error)
}

// languages are the in-process engines by type name.
var languages = map[string]language{
	"lua":        luaLang{},
	"javascript": jsLang{},
}

// canonical maps DreamFactory's spellings to the engine's type name.
func canonical(typ string) string {
	switch t := strings.ToLower(strings.TrimSpace(typ)); t {
	case "v8js", "js":
		return "javascript"
	case "python":
		return "python3"
	default:
		return t
	}
}

// TypeInfo describes one script engine for GET /system/script_type.
type TypeInfo struct {
	Name        string `json:"name"`
	Label       string `json:"label"`
	Description string `json:"description"`
	Available   bool   `json:"available"`
	Sandboxed   bool   `json:"sandboxed"`
}

// Types lists the engines and whether each is available here.
func Types() []TypeInfo {
	out := []TypeInfo{
		{Name: "lua", Label: "Lua", Description: "Lua 5.1 (gopher-lua), in-process and sandboxed.", Sandboxed: true},
		{Name: "javascript", Label: "JavaScript", Description: "ECMAScript 5.1 and much of ES6+ (goja), in-process and sandboxed; v8js is accepted as a synonym.", Sandboxed: true},
		{Name: "nodejs", Label: "Node.js", Description: "Node.js (node) in long-lived worker processes, with the permission model.", Sandboxed: true},
		{Name: "python3", Label: "Python 3", Description: "Python 3 (python3) in long-lived worker processes, with an audit-hook sandbox.", Sandboxed: true},
		{Name: "php", Label: "PHP", Description: "PHP (php) in long-lived worker processes, with open_basedir and disabled functions.", Sandboxed: true},
	}
	for i := range out {
		_, out[i].Available = languages[out[i].Name]
		if _, ext := extEngines[out[i].Name]; ext {
			_, out[i].Available = Interpreter(out[i].Name)
		}
	}
	return out
}

// Check compiles src as a script of type typ and returns the syntax error,
// naming its line, if any. An external engine checks in its worker; one
// that is not installed checks nothing.
func Check(typ, src string) error {
	l, ok := languages[canonical(typ)]
	if !ok {
		return nil
	}
	if c, ok := l.(interface{ check(src string) error }); ok {
		return c.check(src)
	}
	_, err := l.compile("script", src)
	return err
}

// compiled caches compiled scripts by engine and content hash, so a reload
// that keeps a script does not compile it again.
var compiled sync.Map // type + NUL + hex sha256 → runner

func compileCached(typ, name, src string) (runner, error) {
	key := fmt.Sprintf("%s\x00%x", typ, sha256.Sum256([]byte(src)))
	if r, ok := compiled.Load(key); ok {
		return r.(runner), nil
	}
	l, ok := languages[typ]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, typ)
	}
	r, err := l.compile(name, src)
	if err != nil {
		return nil, err
	}
	compiled.Store(key, r)
	return r, nil
}

// Options configure an Engine.
type Options struct {
	// Timeout is the time limit of one run; zero means DefaultTimeout.
	Timeout time.Duration
	// HasLookups reports whether a script's content holds lookup tokens;
	// the content of those is handed to the run's Platform, when it is a
	// [Substituter], before each run. Nil means no script has any.
	HasLookups func(src string) bool
}

// maxVariants bounds the compiled variants kept per script whose lookups
// were substituted (one per distinct set of values, such as one per user
// with {user.id}); past it the variants kept are dropped and compiling
// starts over, so memory stays bounded whatever the number of callers.
const maxVariants = 64

// entry is one active script, compiled.
type entry struct {
	Script
	r   runner
	err error // compile error or unavailable engine: every run fails with it

	lookups  bool // content holds lookup tokens: substituted per run
	mu       sync.Mutex
	variants map[string]runner // substituted content → compiled
}

// variant returns the runner of the substituted content src, compiled on
// first use and kept (at most maxVariants per script).
func (en *entry) variant(src string) (runner, error) {
	en.mu.Lock()
	r, ok := en.variants[src]
	en.mu.Unlock()
	if ok {
		return r, nil
	}
	l, ok := languages[en.Type]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, en.Type)
	}
	r, err := l.compile(en.Name, src)
	if err != nil {
		return nil, err
	}
	en.mu.Lock()
	if en.variants == nil || len(en.variants) >= maxVariants {
		en.variants = make(map[string]runner)
	}
	en.variants[src] = r
	en.mu.Unlock()
	return r, nil
}

// Engine holds the active scripts of one configuration, compiled. It is
// immutable and safe for concurrent use.
type Engine struct {
	byName   map[string]*entry
	services map[string]bool // services with at least one script
	timeout  time.Duration
}

// New compiles scripts into an engine. A script that does not compile is
// kept, and fails its requests with its error, so one bad script never
// disables the others.
func New(scripts []Script, o Options) *Engine {
	e := &Engine{byName: map[string]*entry{}, services: map[string]bool{}, timeout: o.Timeout}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	for _, s := range scripts {
		s.Type = canonical(s.Type)
		en := &entry{Script: s}
		en.r, en.err = compileCached(s.Type, s.Name, s.Content)
		en.lookups = o.HasLookups != nil && o.HasLookups(s.Content)
		e.byName[s.Name] = en
		svc, _, _ := strings.Cut(s.Name, ".")
		e.services[svc] = true
	}
	return e
}

// Empty reports whether the engine holds no script.
func (e *Engine) Empty() bool { return e == nil || len(e.byName) == 0 }

// HasService reports whether any script is attached to an event of
// service: the one lookup a request with no script pays.
func (e *Engine) HasService(service string) bool { return e != nil && e.services[service] }

// Lookup returns the script attached to event name.
func (e *Engine) Lookup(name string) (Script, bool) {
	if e == nil {
		return Script{}, false
	}
	en, ok := e.byName[name]
	if !ok {
		return Script{}, false
	}
	return en.Script, true
}

// Names lists the event names that have a script, sorted.
func (e *Engine) Names() []string {
	if e == nil {
		return nil
	}
	out := make([]string, 0, len(e.byName))
	for n := range e.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Run runs the script attached to event name over ev (the event object:
// "request" and, in post_process, "response"). ok is false when no script
// is attached. The error is an *Abort, a *Failure, or wraps
// ErrUnavailable.
func (e *Engine) Run(ctx context.Context, name string, ev map[string]any, p Platform) (res Result, ok bool, err error) {
	if e == nil {
		return Result{}, false, nil
	}
	en, found := e.byName[name]
	if !found {
		return Result{}, false, nil
	}
	if en.err != nil {
		if errors.Is(en.err, ErrUnavailable) {
			return Result{}, true, en.err
		}
		return Result{}, true, &Failure{Message: en.err.Error(), Err: en.err}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	if !en.AllowModification {
		ctx = context.WithValue(ctx, readOnlyKey{}, true)
	}
	if en.Type != "lua" {
		Resolve(ev)
	}
	r := en.r
	if sub, ok := p.(Substituter); ok && en.lookups {
		if src, changed := sub.Substitute(en.Content); changed {
			if r, err = en.variant(src); err != nil {
				if errors.Is(err, ErrUnavailable) {
					return Result{}, true, err
				}
				return Result{}, true, &Failure{Message: err.Error(), Err: err}
			}
		}
	}
	res, err = r.run(ctx, ev, p)
	if err != nil {
		var a *Abort
		if errors.As(err, &a) {
			return Result{}, true, a
		}
		if errors.Is(err, ErrUnavailable) {
			return Result{}, true, err
		}
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Result{}, true, &Failure{Message: ErrTimeLimit.Error(), Err: ErrTimeLimit}
		}
		var f *Failure
		if errors.As(err, &f) {
			return Result{}, true, f
		}
		return Result{}, true, &Failure{Message: err.Error(), Err: err}
	}
	return res, true, nil
}

// Fired returns the scripts a request fires, found by the names of
// [Names] in their order: pre_process; post_process then the bare event's
// (which runs after them); queued. The slices share buf's array when it has
// room (eight scripts). It builds no name string: a request pays a few map
// lookups.
func (e *Engine) Fired(buf []Script, service, resource, verb string) (pre, post, queued []Script) {
	if e == nil || len(e.byName) == 0 {
		return nil, nil, nil
	}
	var names, name [256]byte
	base, i := appendNames(names[:0], service, resource, verb, "")
	find := func(dst []Script, phase Phase) []Script {
		for _, n := range [2][]byte{base[:i], base[i:]} {
			if len(n) == 0 {
				continue
			}
			b := append(name[:0], n...)
			if phase != "" {
				b = append(append(b, '.'), phase...)
			}
			if en, ok := e.byName[string(b)]; ok {
				dst = append(dst, en.Script)
			}
		}
		return dst
	}
	pre = find(buf[0:0:min(2, cap(buf))], Pre)
	post = find(buf[min(2, cap(buf)):min(2, cap(buf)):min(6, cap(buf))], Post)
	post = find(post, "")
	queued = find(buf[min(6, cap(buf)):min(6, cap(buf)):min(8, cap(buf))], Queued)
	return pre, post, queued
}
