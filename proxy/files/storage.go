package files

import (
	"context"
	"errors"
	"io"
	"io/fs"
)

// Storage is the file tree a file service serves. Every name is a path
// relative to the tree's root, slash-separated, already checked by
// [CleanPath] ("" is the root itself). Implementations map their own
// failures onto fs.ErrNotExist, fs.ErrExist, [ErrNotEmpty] and
// [ErrUnavailable] so the handler can answer 404, 409 and 503.
type Storage interface {
	// Stat describes name.
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	// ReadDir lists the direct children of the folder name, sorted by name.
	ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error)
	// Open opens the file name for reading.
	Open(ctx context.Context, name string) (File, error)
	// Write stores what r yields as the file name. The file appears (or
	// replaces the one there) only once r is read to its end; a failed or
	// abandoned write leaves what was there before. With exclusive, an
	// existing name fails with fs.ErrExist and is left unchanged. The
	// parent folder must exist (fs.ErrNotExist otherwise).
	Write(ctx context.Context, name string, r io.Reader, exclusive bool) (int64, error)
	// Mkdir creates the folder name; fs.ErrExist when it exists, and
	// fs.ErrNotExist when its parent does not.
	Mkdir(ctx context.Context, name string) error
	// MkdirAll creates the folder name and any missing parents.
	MkdirAll(ctx context.Context, name string) error
	// Remove deletes the file or empty folder name; [ErrNotEmpty] for a
	// folder with something in it.
	Remove(ctx context.Context, name string) error
	// RemoveAll deletes name and everything below it.
	RemoveAll(ctx context.Context, name string) error
	// Close releases the storage's connections.
	Close() error
}

// File is an open file: read and seek (for range requests), then close.
type File interface {
	io.ReadSeekCloser
}

// Errors a Storage returns besides fs.ErrNotExist and fs.ErrExist.
var (
	// ErrNotEmpty is a folder delete refused because the folder has
	// something in it.
	ErrNotEmpty = errors.New("folder is not empty")
	// ErrUnavailable is a remote storage that cannot be reached now.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrEscapes is a name that would leave the storage root (through a
	// symbolic link, say).
	ErrEscapes = errors.New("path escapes the storage root")
)

// tempPrefix starts the names of files being uploaded; listings never show
// them.
const tempPrefix = ".portcullis-upload-"
