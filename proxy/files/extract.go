package files

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// DefaultMaxExtractBytes caps what one zip may unpack to (the sum of its
// entries' sizes) when extract=true.
const DefaultMaxExtractBytes int64 = 1 << 30

func (h *Handler) maxExtract() int64 {
	if h.MaxExtractBytes > 0 {
		return h.MaxExtractBytes
	}
	return DefaultMaxExtractBytes
}

// zipMagic starts every zip file: a local file header, or the end of
// central directory record of an empty archive.
var zipMagic = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06")}

// isZipUpload reports whether an upload is a zip file, as DreamFactory
// decides it (FileUtilities::isZipContent or the .zip extension), or by
// its first bytes. body is peeked, not consumed.
func isZipUpload(name, contentType string, body *bufio.Reader) bool {
	if strings.HasSuffix(strings.ToLower(name), ".zip") {
		return true
	}
	switch strings.ToLower(contentType) {
	case "application/zip", "application/x-zip", "application/x-zip-compressed":
		return true
	}
	head, _ := body.Peek(4)
	for _, m := range zipMagic {
		if bytes.Equal(head, m) {
			return true
		}
	}
	return false
}

// extracted is the answer to an unpacked zip: the folder it went into,
// as DreamFactory names it (LocalFileSystem::extractZipFile).
func extracted(folder string) result {
	t := target{path: folder, folder: true}
	return result{Name: folder, Path: t.display(), Type: "folder"}
}

// extractZip unpacks the zip that body yields into folder (created with
// its parents when missing), as DreamFactory's extract=true does, with
// clean emptying the folder first. The upload is spooled to a temporary
// file (a zip is read from its end). Nothing is written until the whole
// archive has been checked: every entry's path (no "..", absolute paths,
// backslashes or reserved names: a zip-slip is a 400), no symbolic links,
// at most MaxListEntries entries and MaxExtractBytes unpacked, every
// entry's checksum, and with checkExist no file already there. Each file
// then appears whole or not at all (Storage.Write).
func (h *Handler) extractZip(ctx context.Context, folder string, body io.Reader, clean, checkExist bool) (result, error) {
	tmp, err := os.CreateTemp("", "portcullis-extract-*.zip")
	if err != nil {
		return result{}, fmt.Errorf("files: spooling a zip upload: %w", err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	size, err := io.Copy(tmp, body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return result{}, apierr.As(err)
		}
		return result{}, fmt.Errorf("files: spooling a zip upload: %w", err)
	}
	zr, err := zip.NewReader(tmp, size)
	if errors.Is(err, zip.ErrInsecurePath) {
		err = nil // every name is checked below, with a message naming it
	}
	if err != nil {
		return result{}, apierr.BadRequest("The upload is not a valid zip file: %v.", err).WithCause(err)
	}
	entries, err := h.checkZip(ctx, folder, zr, checkExist)
	if err != nil {
		return result{}, err
	}
	if err := h.Storage.MkdirAll(ctx, folder); err != nil {
		return result{}, h.storageErr(err, notFoundFolder(folder))
	}
	if clean {
		if err := h.deleteFolder(ctx, folder, true, true); err != nil {
			return result{}, err
		}
	}
	for _, e := range entries {
		if e.dir {
			if err := h.storageErr(h.Storage.MkdirAll(ctx, e.path), notFoundFolder(parent(e.path))); err != nil {
				return result{}, err
			}
			continue
		}
		if par := parent(e.path); par != "" {
			if err := h.storageErr(h.Storage.MkdirAll(ctx, par), notFoundFolder(par)); err != nil {
				return result{}, err
			}
		}
		rc, err := e.file.Open()
		if err != nil {
			return result{}, apierr.BadRequest("Zip entry '%s' cannot be read: %v.", e.file.Name, err).WithCause(err)
		}
		err = h.write(ctx, e.path, rc, false)
		rc.Close()
		if err != nil {
			return result{}, err
		}
	}
	return extracted(folder), nil
}

// zipEntry is one checked entry of a zip and where it goes.
type zipEntry struct {
	file *zip.File
	path string
	dir  bool
}

// checkZip checks a whole archive before anything is written (see
// extractZip) and returns its entries in archive order.
func (h *Handler) checkZip(ctx context.Context, folder string, zr *zip.Reader, checkExist bool) ([]zipEntry, error) {
	if len(zr.File) > h.maxList() {
		return nil, apierr.BadRequest("The zip file has %d entries; at most %d can be extracted.", len(zr.File), h.maxList())
	}
	var total uint64
	entries := make([]zipEntry, 0, len(zr.File))
	for _, f := range zr.File {
		name := f.Name
		if name == "" || name == "/" {
			continue
		}
		if strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || (len(name) > 1 && name[1] == ':') {
			return nil, apierr.BadRequest("Zip entry '%s' has an absolute or Windows path: nothing was extracted.", name)
		}
		rel, err := CleanPath(name)
		if err != nil {
			return nil, apierr.BadRequest("Zip entry '%s' has an invalid path (%s): nothing was extracted.", name, strings.TrimSuffix(apierr.As(err).Message, "."))
		}
		mode := f.Mode()
		if mode&os.ModeSymlink != 0 || (mode.Type() != 0 && !mode.IsDir()) {
			return nil, apierr.BadRequest("Zip entry '%s' is a link or special file: nothing was extracted.", name)
		}
		e := zipEntry{file: f, path: join(folder, rel), dir: strings.HasSuffix(name, "/") || mode.IsDir()}
		if !e.dir {
			total += f.UncompressedSize64
			if total > uint64(h.maxExtract()) {
				return nil, apierr.BadRequest("The zip file unpacks to more than %d bytes: nothing was extracted.", h.maxExtract())
			}
			if err := verifyEntry(f); err != nil {
				return nil, err
			}
			if checkExist {
				if _, err := h.Storage.Stat(ctx, e.path); err == nil {
					return nil, apierr.Conflict("File '%s' already exists.", e.path)
				}
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// verifyEntry reads one entry to its end, so that a corrupt entry, or one
// larger than its header says (archive/zip refuses reading past the
// declared size), is found before anything is written.
func verifyEntry(f *zip.File) error {
	rc, err := f.Open()
	if err == nil {
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
	}
	if err != nil {
		return apierr.BadRequest("Zip entry '%s' is corrupt (%v): nothing was extracted.", f.Name, err).WithCause(err)
	}
	return nil
}
