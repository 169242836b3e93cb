package script

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// External engines: nodejs, python3 and php run in long-lived worker
// processes of their interpreter, started on first use, one script run at a
// time each, speaking JSON lines over stdin and stdout with a runner program
// embedded here (runners/). A run sends {"type":"run"} with the script and
// the event; the worker may send {"type":"call"} messages (platform.api),
// which are answered with {"type":"reply"}, and ends with {"type":"done"}.
// A run past its time limit kills its worker; a worker that dies or breaks
// the protocol fails its own run only and is replaced on the next one.

//go:embed runners/runner.js runners/runner.py runners/runner.php
var runnerFS embed.FS

// maxMessage bounds one line a worker sends.
const maxMessage = 256 << 20

// DefaultWorkers is the number of concurrent runs per external engine
// (and of workers kept) when SetWorkers was not called.
const DefaultWorkers = 4

// extEngine is one external interpreter kind.
type extEngine struct {
	typ    string // nodejs, python3, php
	bin    string // default interpreter on PATH
	runner string // file name under runners/
}

var extEngines = map[string]*extEngine{
	"nodejs":  {typ: "nodejs", bin: "node", runner: "runner.js"},
	"python3": {typ: "python3", bin: "python3", runner: "runner.py"},
	"php":     {typ: "php", bin: "php", runner: "runner.php"},
}

func init() {
	for name, e := range extEngines {
		languages[name] = extLang{e}
	}
}

// interpreters holds the configured interpreter path per engine ("" means
// the default name looked up on PATH) and the pools built from them.
var (
	extMu        sync.Mutex
	interpreters = map[string]string{}
	pools        = map[string]*pool{}
	workersMax   = DefaultWorkers
	runnerDir    string
)

// SetInterpreter sets the interpreter binary of an external engine
// ("nodejs", "python3", "php"); an empty path restores the default (node,
// python3 or php on PATH). Workers of the previous interpreter are stopped.
func SetInterpreter(typ, path string) error {
	typ = canonical(typ)
	if _, ok := extEngines[typ]; !ok {
		return fmt.Errorf("script: %q is not an external engine", typ)
	}
	extMu.Lock()
	defer extMu.Unlock()
	interpreters[typ] = path
	if p := pools[typ]; p != nil {
		p.close()
		delete(pools, typ)
	}
	return nil
}

// SetWorkers sets how many runs of one external engine may run at once
// (each in its own worker process); n <= 0 restores DefaultWorkers. It
// applies to pools started afterwards.
func SetWorkers(n int) {
	extMu.Lock()
	defer extMu.Unlock()
	if n <= 0 {
		n = DefaultWorkers
	}
	workersMax = n
}

// Interpreter returns the interpreter binary an external engine would use
// and whether it is installed.
func Interpreter(typ string) (string, bool) {
	typ = canonical(typ)
	e, ok := extEngines[typ]
	if !ok {
		return "", false
	}
	extMu.Lock()
	name := interpreters[typ]
	extMu.Unlock()
	if name == "" {
		name = e.bin
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return name, false
	}
	return p, true
}

// StopWorkers stops every external worker (they start again on the next
// run). Tests and a shutting-down server call it.
func StopWorkers() {
	extMu.Lock()
	defer extMu.Unlock()
	for k, p := range pools {
		p.close()
		delete(pools, k)
	}
}

// holders counts the servers holding the external workers (HoldWorkers).
var holders int

// HoldWorkers marks a user of the external workers, such as a server, and
// returns its release: when the last holder releases, every worker is
// stopped ([StopWorkers]), so that a closed server leaves no interpreter
// process behind while other servers of the same process keep theirs.
// release may be called more than once; only the first call counts.
func HoldWorkers() (release func()) {
	extMu.Lock()
	holders++
	extMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			extMu.Lock()
			holders--
			last := holders == 0
			extMu.Unlock()
			if last {
				StopWorkers()
			}
		})
	}
}

// poolFor returns the pool of typ, starting it (not its workers) when
// needed; the error wraps ErrUnavailable when the interpreter is missing.
func poolFor(e *extEngine) (*pool, error) {
	bin, ok := Interpreter(e.typ)
	if !ok {
		return nil, fmt.Errorf("%w: %s needs the %q interpreter, which is not installed on this machine", ErrUnavailable, e.typ, bin)
	}
	extMu.Lock()
	defer extMu.Unlock()
	if p := pools[e.typ]; p != nil {
		return p, nil
	}
	if runnerDir == "" {
		d, err := writeRunners()
		if err != nil {
			return nil, fmt.Errorf("script: writing the %s runner: %w", e.typ, err)
		}
		runnerDir = d
	}
	if e.typ == "python3" {
		bin = realPython(bin)
	}
	p := &pool{eng: e, bin: bin, dir: runnerDir, sem: make(chan struct{}, workersMax), idle: make(chan *worker, workersMax)}
	pools[e.typ] = p
	return p, nil
}

// realPython returns the interpreter behind bin (a pyenv shim or a
// wrapper script starts slowly and needs the caller's environment), or bin
// when it cannot tell.
func realPython(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-I", "-S", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return bin
	}
	if p := strings.TrimSpace(string(out)); p != "" && filepath.IsAbs(p) {
		return p
	}
	return bin
}

// writeRunners writes the embedded runners to a private directory (the
// only files the sandboxed interpreters may read).
func writeRunners() (string, error) {
	d, err := os.MkdirTemp("", "portcullis-scripts-")
	if err != nil {
		return "", err
	}
	ents, err := runnerFS.ReadDir("runners")
	if err != nil {
		return "", err
	}
	for _, en := range ents {
		b, err := runnerFS.ReadFile("runners/" + en.Name())
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(d, en.Name()), b, 0o444); err != nil {
			return "", err
		}
	}
	return d, nil
}

// pool is the workers of one engine: at most cap(sem) runs at once (nested
// runs, made from a platform.api call of a running script, pass the bound
// so that a chain of scripts cannot wait on itself), at most cap(idle)
// workers kept between runs.
type pool struct {
	eng     *extEngine
	bin     string
	dir     string
	sem     chan struct{}
	idle    chan *worker
	closed  atomic.Bool
	warming atomic.Bool
}

func (p *pool) close() {
	p.closed.Store(true)
	for {
		select {
		case w := <-p.idle:
			w.kill()
		default:
			return
		}
	}
}

type nestedKey struct{}

// get returns a worker for one run, starting one when none is idle
// (fresh is then true: its start-up did not count against the run).
func (p *pool) get(ctx context.Context) (w *worker, release func(), fresh bool, err error) {
	release = func() {}
	if ctx.Value(nestedKey{}) == nil {
		select {
		case p.sem <- struct{}{}:
			release = func() { <-p.sem }
		case <-ctx.Done():
			return nil, nil, false, ctx.Err()
		}
	}
	for {
		select {
		case w := <-p.idle:
			if w.alive() {
				return w, release, false, nil
			}
			continue
		default:
		}
		break
	}
	w, err = p.start()
	if err != nil {
		release()
		return nil, nil, false, err
	}
	return w, release, true, nil
}

// warm starts one worker in the background when the pool has none, so
// that the first request of a new configuration does not wait for the
// interpreter to start.
func (p *pool) warm() {
	if !p.warming.CompareAndSwap(false, true) {
		return
	}
	go func() {
		w, err := p.start()
		if err != nil {
			slog.Debug("script worker warm-up failed", "engine", p.eng.typ, "err", err)
			return
		}
		p.put(w)
	}()
}

// put keeps a healthy worker for the next run.
func (p *pool) put(w *worker) {
	if p.closed.Load() || !w.alive() {
		w.kill()
		return
	}
	select {
	case p.idle <- w:
	default:
		w.kill()
	}
}

// args are the interpreter's command line: each engine's sandbox switches.
func (p *pool) args() []string {
	runner := filepath.Join(p.dir, p.eng.runner)
	switch p.eng.typ {
	case "nodejs":
		return []string{"--experimental-permission", "--allow-fs-read=" + runner, "--max-old-space-size=256",
			"--no-warnings", "--disable-proto=delete", runner}
	case "python3":
		return []string{"-I", "-S", "-u", "-X", "utf8", runner}
	case "php":
		return []string{"-n", "-d", "open_basedir=" + p.dir, "-d", "disable_functions=" + phpDisabled,
			"-d", "disable_classes=" + phpDisabledClasses, "-d", "allow_url_fopen=0", "-d", "allow_url_include=0",
			"-d", "memory_limit=256M", "-d", "max_execution_time=0", "-d", "display_errors=stderr",
			"-d", "log_errors=0", "-d", "html_errors=0", "-d", "error_reporting=E_ALL", "-d", "zend.assertions=-1", runner}
	}
	return []string{runner}
}

// phpDisabled are the PHP functions a script may not call: processes,
// network, file writes and reads (the runner reads only STDIN), dynamic
// extension loading and the environment.
const phpDisabled = "exec,shell_exec,system,passthru,popen,proc_open,proc_nice,pcntl_exec,pcntl_fork,pcntl_signal," +
	"posix_kill,posix_setuid,posix_setgid,posix_mkfifo,dl,putenv,getenv,mail,mb_send_mail," +
	"fsockopen,pfsockopen,stream_socket_client,stream_socket_server,stream_socket_pair,socket_create,socket_connect," +
	"curl_init,curl_exec,curl_multi_exec,gethostbyname,gethostbynamel,dns_get_record,dns_check_record,checkdnsrr,getmxrr," +
	"fopen,file_put_contents,file_get_contents,file,readfile,fpassthru,tmpfile,tempnam,touch,unlink,rename,copy,mkdir," +
	"rmdir,chmod,chown,chgrp,lchown,lchgrp,symlink,link,move_uploaded_file,opendir,scandir,glob,dir,parse_ini_file," +
	"highlight_file,show_source,php_strip_whitespace,stream_context_create,ini_restore,set_include_path," +
	"openlog,syslog,error_log,ftp_connect,ftp_ssl_connect,imap_open,ldap_connect"

// phpDisabledClasses are the classes that reach files or processes.
const phpDisabledClasses = "SplFileObject,SplTempFileObject,SplFileInfo,DirectoryIterator,FilesystemIterator," +
	"RecursiveDirectoryIterator,GlobIterator,FFI,PharData,Phar,ZipArchive,SQLite3,PDO"

// workerSeq numbers workers in logs.
var workerSeq atomic.Int64

// worker is one interpreter process.
type worker struct {
	id   int64
	typ  string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	done chan struct{} // closed when the process has exited
	err  error         // exit status, set before done closes
	tail *tailBuffer   // last output on stderr, for crash messages
}

func (p *pool) start() (*worker, error) {
	cmd := exec.Command(p.bin, p.args()...)
	cmd.Dir = p.dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + p.dir}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("script: %s worker: %w", p.eng.typ, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("script: %s worker: %w", p.eng.typ, err)
	}
	w := &worker{id: workerSeq.Add(1), typ: p.eng.typ, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10),
		done: make(chan struct{}), tail: &tailBuffer{max: 4096}}
	cmd.Stderr = &logWriter{w: w}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("script: starting %s (%s): %w", p.eng.typ, p.bin, err)
	}
	go func() {
		w.err = cmd.Wait()
		close(w.done)
	}()
	// The runner says ready once its interpreter is up and its sandbox set.
	t := time.AfterFunc(startTimeout, w.kill)
	m, err := w.recv()
	if !t.Stop() || err != nil || m["type"] != "ready" {
		w.kill()
		if err == nil {
			err = fmt.Errorf("the %s worker sent %v instead of ready", p.eng.typ, m)
		}
		return nil, fmt.Errorf("script: starting %s (%s): %w", p.eng.typ, p.bin, err)
	}
	slog.Debug("script worker started", "engine", p.eng.typ, "worker", w.id, "pid", cmd.Process.Pid)
	return w, nil
}

// startTimeout bounds the start of one worker (not counted in the run's
// time limit).
const startTimeout = 20 * time.Second

func (w *worker) alive() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

func (w *worker) kill() {
	if w.alive() {
		_ = w.cmd.Process.Kill()
	}
	_ = w.in.Close()
}

// send writes one message.
func (w *worker) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a message for the %s worker: %w", w.typ, err)
	}
	b = append(b, '\n')
	if _, err := w.in.Write(b); err != nil {
		return w.crashed(err)
	}
	return nil
}

// recv reads one message.
func (w *worker) recv() (map[string]any, error) {
	var line []byte
	for {
		chunk, err := w.out.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > maxMessage {
				return nil, fmt.Errorf("the %s worker sent a message larger than %d bytes", w.typ, maxMessage)
			}
			continue
		}
		return nil, w.crashed(err)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("the %s worker broke the protocol (%q): %w", w.typ, truncate(string(line), 200), err)
	}
	return m, nil
}

// crashed describes a worker that stopped answering.
func (w *worker) crashed(err error) error {
	select {
	case <-w.done:
	case <-time.After(200 * time.Millisecond):
	}
	msg := fmt.Sprintf("the %s worker stopped", w.typ)
	if !w.alive() && w.err != nil {
		msg += " (" + w.err.Error() + ")"
	}
	if t := strings.TrimSpace(w.tail.String()); t != "" {
		msg += ": " + truncate(lastLines(t, 3), 500)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// extLang compiles scripts of one external engine: the source is kept and
// compiled by the worker on first use (cached there by key).
type extLang struct{ e *extEngine }

func (l extLang) compile(name, src string) (runner, error) {
	if p, err := poolFor(l.e); err == nil {
		p.warm()
	}
	return &extScript{e: l.e, name: name, src: src, key: fmt.Sprintf("%x", sha256.Sum256([]byte(src)))}, nil
}

// check asks a worker to compile src without running it.
func (l extLang) check(src string) error {
	p, err := poolFor(l.e)
	if err != nil {
		return nil // not installed: nothing to check with
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, release, _, err := p.get(ctx)
	if err != nil {
		return nil
	}
	defer release()
	stop := context.AfterFunc(ctx, w.kill)
	defer stop()
	if err := w.send(map[string]any{"type": "check", "source": src, "name": "script"}); err != nil {
		w.kill()
		return nil
	}
	m, err := w.recv()
	if err != nil {
		w.kill()
		return nil
	}
	p.put(w)
	if msg, ok := m["failure"].(string); ok && msg != "" {
		return errors.New(msg)
	}
	return nil
}

// extScript is one script of an external engine.
type extScript struct {
	e    *extEngine
	name string
	src  string
	key  string
}

func (s *extScript) run(ctx context.Context, ev map[string]any, p Platform) (Result, error) {
	pl, err := poolFor(s.e)
	if err != nil {
		return Result{}, err
	}
	var budget time.Duration
	if dl, ok := ctx.Deadline(); ok {
		budget = time.Until(dl)
	}
	w, release, fresh, err := pl.get(ctx)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if fresh && budget > 0 {
		// The interpreter's start-up is not the script's time: the run gets
		// its whole time limit from now.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), budget)
		defer cancel()
	}
	stop := context.AfterFunc(ctx, w.kill)
	defer stop()
	res, runErr, err := s.exchange(ctx, w, ev, p)
	if err != nil {
		w.kill()
		return Result{}, runFailed(ctx, err)
	}
	if !stop() {
		// The time limit struck as the run ended: the worker is dead.
		return Result{}, runFailed(ctx, ctx.Err())
	}
	pl.put(w)
	return res, runErr
}

// runFailed is the error of a run whose worker had to go: past the time
// limit, the time-limit failure.
func runFailed(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Failure{Message: ErrTimeLimit.Error(), Err: ErrTimeLimit}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// exchange runs the script on w: the run message, platform.api calls,
// and the outcome. runErr is the script's own failure (the worker stays
// usable); err means the worker must go.
func (s *extScript) exchange(ctx context.Context, w *worker, ev map[string]any, p Platform) (res Result, runErr, err error) {
	var sess map[string]any
	if p != nil {
		sess = p.Session()
	}
	if sess == nil {
		sess = map[string]any{}
	}
	if err := w.send(map[string]any{"type": "run", "key": s.key, "name": s.name, "source": s.src, "event": ev, "session": sess}); err != nil {
		return Result{}, nil, err
	}
	nested := context.WithValue(ctx, nestedKey{}, true)
	for {
		m, err := w.recv()
		if err != nil {
			return Result{}, nil, err
		}
		switch m["type"] {
		case "call":
			method, _ := m["method"].(string)
			path, _ := m["path"].(string)
			reply := map[string]any{"type": "reply"}
			if p == nil {
				reply["error"] = "platform.api is not available here"
			} else {
				status, content, err := p.API(nested, strings.ToUpper(method), path, normalize(m["payload"]))
				if err != nil {
					reply["error"] = fmt.Sprintf("platform.api.%s %s: %v", strings.ToLower(method), path, err)
				} else {
					reply["status_code"] = status
					reply["content"] = content
				}
			}
			if err := w.send(reply); err != nil {
				return Result{}, nil, err
			}
		case "done":
			res, runErr := s.outcome(m, ev)
			return res, runErr, nil
		default:
			return Result{}, nil, fmt.Errorf("the %s worker sent an unknown message %q", w.typ, fmt.Sprint(m["type"]))
		}
	}
}

// outcome turns a done message into a Result or the run's error.
func (s *extScript) outcome(m map[string]any, orig map[string]any) (Result, error) {
	if a, ok := m["abort"].(map[string]any); ok {
		ab := &Abort{Status: 500, Message: "Script aborted the request."}
		if n, ok := asInt(a["status_code"]); ok && n >= 400 && n <= 599 {
			ab.Status = n
		}
		if msg, ok := a["message"].(string); ok && msg != "" {
			ab.Message = msg
		}
		return Result{}, ab
	}
	if f, ok := m["failure"].(string); ok {
		return Result{}, errors.New(f)
	}
	var res Result
	if evm, ok := normalize(m["event"]).(map[string]any); ok {
		restoreShape(orig, evm)
		res.Request, _ = evm["request"].(map[string]any)
		res.Response, _ = evm["response"].(map[string]any)
	}
	res.Returned = normalize(m["result"])
	if r, ok := res.Returned.(map[string]any); ok {
		_, hasContent := r["content"]
		_, hasStatus := r["status_code"]
		if hasContent || hasStatus {
			res.Response = r
		}
	}
	return res, nil
}

// normalize turns decoded json.Numbers into int64 (integers) or float64,
// as the Lua engine gives them.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	default:
		return v
	}
}

// restoreShape gives back the object shape of values that were empty
// objects before the run and came back as empty arrays (PHP's arrays do
// not tell {} from []).
func restoreShape(orig, got map[string]any) {
	for k, ov := range orig {
		switch o := ov.(type) {
		case map[string]any:
			switch g := got[k].(type) {
			case []any:
				if len(g) == 0 {
					got[k] = map[string]any{}
				}
			case map[string]any:
				restoreShape(o, g)
			}
		}
	}
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case int:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// logWriter sends a worker's stderr (script output: console.log, print,
// echo, and interpreter errors) to the debug log and keeps its tail.
type logWriter struct{ w *worker }

func (l *logWriter) Write(p []byte) (int, error) {
	_, _ = l.w.tail.Write(p)
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			slog.Debug("script output", "engine", l.w.typ, "worker", l.w.id, "line", truncate(line, 2000))
		}
	}
	return len(p), nil
}
