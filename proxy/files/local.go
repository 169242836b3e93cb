package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Local is a [Storage] over a folder of the local file system. Every
// operation goes through an [os.Root], so no name, symbolic link included,
// reaches outside the folder. The folder is created (mode 0755) on first
// use if it is missing.
type Local struct {
	dir string

	mu   sync.Mutex
	root *os.Root
}

var _ Storage = (*Local)(nil)

// NewLocal returns the storage rooted at dir (an absolute path).
func NewLocal(dir string) *Local { return &Local{dir: filepath.Clean(dir)} }

// Dir returns the folder the storage is rooted at.
func (l *Local) Dir() string { return l.dir }

// open returns the os.Root, opening (and creating) the folder on first use.
func (l *Local) open() (*os.Root, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.root != nil {
		return l.root, nil
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("files: create root folder: %w", err)
	}
	root, err := os.OpenRoot(l.dir)
	if err != nil {
		return nil, fmt.Errorf("files: open root folder: %w", err)
	}
	l.root = root
	return root, nil
}

// rel turns a cleaned storage name into a name for os.Root ("." for the
// root).
func rel(name string) string {
	if name == "" {
		return "."
	}
	return name
}

// localErr maps the os package's errors onto the Storage errors.
func localErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST) && strings.Contains(err.Error(), "remove"):
		return fmt.Errorf("%w: %w", ErrNotEmpty, err)
	case errors.Is(err, fs.ErrExist):
		return err
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("%w: %w", ErrEscapes, err)
	}
	return err
}

// Stat describes name.
func (l *Local) Stat(_ context.Context, name string) (fs.FileInfo, error) {
	root, err := l.open()
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(rel(name))
	return fi, localErr(err)
}

// ReadDir lists the folder name, sorted by name, without files being
// uploaded.
func (l *Local) ReadDir(_ context.Context, name string) ([]fs.FileInfo, error) {
	root, err := l.open()
	if err != nil {
		return nil, err
	}
	f, err := root.Open(rel(name))
	if err != nil {
		return nil, localErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, localErr(err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder", fs.ErrNotExist, name)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, localErr(err)
	}
	out := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		// Stat through the root follows links that stay inside it; a link
		// leading outside (or nowhere) is left out of the listing.
		info, err := root.Stat(join(name, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Open opens the file name for reading.
func (l *Local) Open(_ context.Context, name string) (File, error) {
	root, err := l.open()
	if err != nil {
		return nil, err
	}
	f, err := root.Open(rel(name))
	if err != nil {
		return nil, localErr(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, localErr(err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is a folder", fs.ErrNotExist, name)
	}
	return f, nil
}

// Write streams r into a hidden file next to name, then renames it into
// place (or links it, when exclusive, so an existing file is never
// replaced). The hidden file is removed on any failure.
func (l *Local) Write(ctx context.Context, name string, r io.Reader, exclusive bool) (int64, error) {
	root, err := l.open()
	if err != nil {
		return 0, err
	}
	if fi, err := root.Stat(rel(parent(name))); err != nil || !fi.IsDir() {
		if err = localErr(err); err == nil || errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%w: folder of %s", fs.ErrNotExist, name)
		}
		return 0, err
	}
	if err := checkLink(root, name); err != nil {
		return 0, err
	}
	if fi, err := root.Stat(name); err == nil && (exclusive || fi.IsDir()) {
		return 0, fmt.Errorf("%w: %s", fs.ErrExist, name)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := join(parent(name), tempPrefix+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, localErr(err)
	}
	n, err := io.Copy(f, contextReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return n, err
	}
	if exclusive {
		err = root.Link(tmp, name)
		_ = root.Remove(tmp)
	} else {
		err = root.Rename(tmp, name)
		if err != nil {
			_ = root.Remove(tmp)
		}
	}
	return n, localErr(err)
}

// Mkdir creates the folder name.
func (l *Local) Mkdir(_ context.Context, name string) error {
	root, err := l.open()
	if err != nil {
		return err
	}
	return localErr(root.Mkdir(rel(name), 0o755))
}

// MkdirAll creates the folder name and its missing parents.
func (l *Local) MkdirAll(_ context.Context, name string) error {
	root, err := l.open()
	if err != nil {
		return err
	}
	return localErr(root.MkdirAll(rel(name), 0o755))
}

// Remove deletes a file or an empty folder.
func (l *Local) Remove(_ context.Context, name string) error {
	root, err := l.open()
	if err != nil {
		return err
	}
	if _, err := root.Lstat(rel(name)); err != nil {
		return localErr(err)
	}
	if err := checkLink(root, name); err != nil {
		return err
	}
	return localErr(root.Remove(rel(name)))
}

// RemoveAll deletes name and everything below it.
func (l *Local) RemoveAll(_ context.Context, name string) error {
	root, err := l.open()
	if err != nil {
		return err
	}
	if _, err := root.Lstat(rel(name)); err != nil {
		return localErr(err)
	}
	if err := checkLink(root, name); err != nil {
		return err
	}
	return localErr(root.RemoveAll(rel(name)))
}

// checkLink refuses a name that is a symbolic link leading outside the
// root (or nowhere): writing or deleting it would act on the link, not on
// anything the service shows. A missing name is fine for writes; Remove
// reports it itself.
func checkLink(root *os.Root, name string) error {
	fi, err := root.Lstat(rel(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return localErr(err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if _, err := root.Stat(rel(name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s is a dangling link", ErrEscapes, name)
		}
		return localErr(err)
	}
	return nil
}

// Close closes the root.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.root == nil {
		return nil
	}
	err := l.root.Close()
	l.root = nil
	return err
}

// contextReader stops a copy when ctx ends (a client that went away).
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
