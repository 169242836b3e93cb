package script_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/script"
)

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"db._table.todo.get.pre_process.js":  "a",
		"db._table.todo.get.pre_process.lua": "b", // .lua wins over .js
		"shop.py":                            "c", // a scripted service
		"x.php":                              "d",
		"notes.txt":                          "e",
		".hidden.js":                         "f",
		"bad..name.js":                       "g",
		"big.js":                             strings.Repeat("x", script.MaxFileSize+1),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.js"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, skipped := script.ReadDir(dir)
	var got []string
	for _, f := range files {
		got = append(got, f.Name+"|"+f.Type+"|"+f.Content+"|"+map[bool]string{true: "event", false: "service"}[f.IsEvent()])
	}
	want := []string{"db._table.todo.get.pre_process|lua|b|event", "shop|python3|c|service", "x|php|d|service"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(skipped) != 2 { // big.js, and the .js shadowed by the .lua
		t.Fatalf("skipped = %v", skipped)
	}
	if files, skipped := script.ReadDir(filepath.Join(dir, "missing")); files != nil || skipped != nil {
		t.Fatalf("missing dir: %v %v", files, skipped)
	}
}

func TestWatchDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scripts") // created later
	var changes atomic.Int32
	d := script.WatchDir(dir, script.DirOptions{Poll: 10 * time.Millisecond, OnChange: func() { changes.Add(1) }})
	defer d.Close()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("timed out waiting for %s", what)
	}
	if len(d.Files()) != 0 {
		t.Fatal("files in a missing directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "svc.js")
	if err := os.WriteFile(path, []byte("return 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the new file", func() bool { f, ok := d.File("svc"); return ok && f.Content == "return 1" })
	if err := os.WriteFile(path, []byte("return 22"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the change", func() bool { f, _ := d.File("svc"); return f.Content == "return 22" })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor("the removal", func() bool { _, ok := d.File("svc"); return !ok })
	if changes.Load() < 3 {
		t.Fatalf("OnChange called %d times", changes.Load())
	}
	d.Close()
	d.Close() // twice is fine
}

func TestFileDirectives(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		file, content string
		allow         bool
		unknown       bool
	}{
		{"a.get.pre_process.lua", "-- portcullis: allow_event_modification\nevent.request.x = 1", true, false},
		{"b.get.pre_process.js", "\n// portcullis: allow_event_modification\nevent.request.x = 1", true, false},
		{"c.get.pre_process.py", "#!/usr/bin/env python3\n# portcullis: allow_event_modification\n", true, false},
		{"d.get.pre_process.php", "<?php\n// portcullis: allow_event_modification, whatever\n", true, true},
		{"e.get.pre_process.php", "<?php\n# portcullis: allow_event_modification=false\n", false, false},
		{"f.get.pre_process.js", "// a comment\n//portcullis:allow_event_modification=true\nx()", true, false},
		{"g.get.pre_process.js", "x()\n// portcullis: allow_event_modification", false, false}, // after code: not a directive
		{"h.get.pre_process.lua", "// portcullis: allow_event_modification", false, false},     // not a Lua comment
		{"i.get.pre_process.js", "event.request.x = 1", false, false},
	}
	for _, tt := range tests {
		if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, skipped := script.ReadDir(dir)
	if len(files) != len(tests) {
		t.Fatalf("%d files", len(files))
	}
	for i, tt := range tests {
		if files[i].AllowModification != tt.allow {
			t.Errorf("%s: AllowModification = %v, want %v", tt.file, files[i].AllowModification, tt.allow)
		}
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "whatever") {
		t.Errorf("skipped = %v", skipped)
	}
}
