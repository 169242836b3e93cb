package script

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultPoll is how often a [Dir] looks for changed script files when
// DirOptions.Poll is zero.
const DefaultPoll = 500 * time.Millisecond

// MaxFileSize bounds a script file; a larger one is skipped (and logged).
const MaxFileSize = 1 << 20

// fileExts maps a script file's extension to its engine, in the order a
// name kept in two files is resolved (the first wins).
var fileExts = []struct{ ext, typ string }{
	{".lua", "lua"}, {".js", "javascript"}, {".py", "python3"}, {".php", "php"},
}

// File is a script kept as a file: DIR/scripts/{event_name}.{lua,js,py,php}
// for an event script, DIR/scripts/{service}.{ext} for a scripted service.
type File struct {
	// Name is the file's name without its extension: an event name
	// (db._table.todo.get.pre_process) or a service name (no dot).
	Name string
	// Type is the engine the extension names: lua, javascript, python3 or
	// php.
	Type string
	// Path is the file's path.
	Path string
	// Content is the script.
	Content string
	// ModTime is the file's modification time.
	ModTime time.Time
	// AllowModification is the file's allow_event_modification: set by a
	// directive comment at its top (see [Directives]).
	AllowModification bool
}

// Directives are what a script file may say about itself, since a file
// has no record to hold its settings: a comment in the script's own
// syntax among its first lines (before any code; a PHP file's <?php line
// and a #! line may come first), "portcullis:" followed by settings
// separated by spaces or commas:
//
//	-- portcullis: allow_event_modification      (Lua)
//	// portcullis: allow_event_modification      (JavaScript, PHP)
//	# portcullis: allow_event_modification       (Python, PHP)
//
// allow_event_modification (or allow_event_modification=true) lets the
// script change the request or the response, as the record field does;
// without it a file script, like a record, may only read the event, abort
// or call the platform. An unknown setting is reported by ReadDir and
// ignored. The directive is a comment, so the script runs unchanged.
const Directives = "portcullis:"

// directives reads the directive comments at the top of a script of type
// typ: whether it allows event modification, and the settings it did not
// know.
func directives(typ, src string) (allow bool, unknown []string) {
	var prefixes []string
	switch typ {
	case "lua":
		prefixes = []string{"--"}
	case "javascript", "nodejs":
		prefixes = []string{"//"}
	case "python3":
		prefixes = []string{"#"}
	case "php":
		prefixes = []string{"//", "#"}
	}
	for i, line := range strings.SplitN(src, "\n", 12) {
		line = strings.TrimSpace(line)
		if i == 11 || (line != "" && !strings.HasPrefix(line, "#!") && !strings.HasPrefix(line, "<?php") && !hasAnyPrefix(line, prefixes)) {
			break
		}
		for _, p := range prefixes {
			body, ok := strings.CutPrefix(line, p)
			if !ok {
				continue
			}
			body, ok = strings.CutPrefix(strings.TrimSpace(body), Directives)
			if !ok {
				continue
			}
			for _, set := range strings.FieldsFunc(body, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
				switch strings.ToLower(set) {
				case "allow_event_modification", "allow_event_modification=true":
					allow = true
				case "allow_event_modification=false":
					allow = false
				default:
					unknown = append(unknown, set)
				}
			}
			break
		}
	}
	return allow, unknown
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// IsEvent reports whether the file is an event script (its name has a
// dot) rather than a scripted service's.
func (f File) IsEvent() bool { return strings.Contains(f.Name, ".") }

// fileName is what a script file's name (without its extension) may look
// like: an event or a service name.
func validFileName(n string) bool {
	if n == "" || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".") || strings.Contains(n, "..") {
		return false
	}
	for _, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._-{}", r):
		default:
			return false
		}
	}
	return true
}

// fileType returns the engine of a file name's extension and the name
// without it.
func fileType(base string) (name, typ string, order int, ok bool) {
	for i, e := range fileExts {
		if n, found := strings.CutSuffix(base, e.ext); found && validFileName(n) {
			return n, e.typ, i, true
		}
	}
	return "", "", 0, false
}

// ReadDir reads the script files of dir, sorted by name. A missing
// directory holds none. Files with other extensions or names, larger than
// MaxFileSize, or unreadable are skipped and reported in skipped; of two
// files with the same name the extension first in .lua, .js, .py, .php
// wins. A file whose directive comment names a setting not known here is
// kept (the setting ignored) and reported in skipped too.
func ReadDir(dir string) (files []File, skipped []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("script files: %w", err)}
	}
	byName := map[string]File{}
	order := map[string]int{}
	for _, de := range entries {
		if de.IsDir() {
			continue
		}
		name, typ, ord, ok := fileType(de.Name())
		if !ok {
			continue
		}
		path := filepath.Join(dir, de.Name())
		info, err := os.Stat(path) // follows links, as a deployment from git may use them
		if err != nil {
			skipped = append(skipped, fmt.Errorf("script file %s: %w", path, err))
			continue
		}
		if !info.Mode().IsRegular() {
			continue
		}
		if info.Size() > MaxFileSize {
			skipped = append(skipped, fmt.Errorf("script file %s: larger than %d bytes", path, MaxFileSize))
			continue
		}
		if o, dup := order[name]; dup {
			if o < ord {
				skipped = append(skipped, fmt.Errorf("script file %s: %s is already kept in %s", path, name, byName[name].Path))
				continue
			}
			skipped = append(skipped, fmt.Errorf("script file %s: %s is also kept in %s", byName[name].Path, name, path))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("script file %s: %w", path, err))
			continue
		}
		allow, unknown := directives(typ, string(b))
		if len(unknown) > 0 {
			skipped = append(skipped, fmt.Errorf("script file %s: unknown %s settings %s (ignored)", path, Directives, strings.Join(unknown, ", ")))
		}
		byName[name] = File{Name: name, Type: typ, Path: path, Content: string(b), ModTime: info.ModTime(), AllowModification: allow}
		order[name] = ord
	}
	for _, f := range byName {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, skipped
}

// DirOptions configure a Dir.
type DirOptions struct {
	// Poll is how often the directory is looked at; zero means
	// DefaultPoll.
	Poll time.Duration
	// OnChange is called (from the Dir's goroutine) after the files
	// changed.
	OnChange func()
	// Logger receives skipped files; nil means slog.Default().
	Logger *slog.Logger
}

// Dir is a directory of script files, read again when a file is added,
// changed or removed (it polls the names, sizes and modification times,
// so it works on every file system, shared volumes included).
type Dir struct {
	path string
	o    DirOptions

	mu    sync.RWMutex
	files []File
	sig   string

	stop chan struct{}
	done chan struct{}
}

// WatchDir reads dir and watches it until Close.
func WatchDir(dir string, o DirOptions) *Dir {
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d := &Dir{path: dir, o: o, stop: make(chan struct{}), done: make(chan struct{})}
	d.scan()
	go d.loop()
	return d
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Files returns the script files in force, sorted by name.
func (d *Dir) Files() []File {
	if d == nil {
		return nil
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.files
}

// File returns the script file of name: an event name or, for scripted
// services, a service name.
func (d *Dir) File(name string) (File, bool) {
	for _, f := range d.Files() {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

// Close stops watching.
func (d *Dir) Close() {
	if d == nil {
		return
	}
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}

func (d *Dir) loop() {
	defer close(d.done)
	t := time.NewTicker(d.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			if d.scan() && d.o.OnChange != nil {
				d.o.OnChange()
			}
		}
	}
}

// signature is what a change of the directory changes: each candidate
// file's name, size and modification time.
func (d *Dir) signature() string {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, de := range entries {
		if _, _, _, ok := fileType(de.Name()); !ok {
			continue
		}
		info, err := os.Stat(filepath.Join(d.path, de.Name()))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s\x00%d\x00%d\n", de.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return b.String()
}

// scan reads the files again when the directory changed, and reports
// whether it did.
func (d *Dir) scan() bool {
	sig := d.signature()
	d.mu.RLock()
	same := sig == d.sig
	d.mu.RUnlock()
	if same {
		return false
	}
	files, skipped := ReadDir(d.path)
	for _, err := range skipped {
		d.o.Logger.Warn("script file skipped", "error", err)
	}
	d.mu.Lock()
	d.files, d.sig = files, sig
	d.mu.Unlock()
	return true
}
