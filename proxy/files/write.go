package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// result is one created, copied or deleted entry; Error is set on a
// failed entry of a batch.
type result struct {
	Name  string       `json:"name"`
	Path  string       `json:"path"`
	Type  string       `json:"type,omitempty"`
	Error *entryFailed `json:"error,omitempty"`
}

type entryFailed struct {
	Message string `json:"message"`
}

// item is one entry of a JSON body ({"resource":[…]}, a bare array, or
// one object).
type item struct {
	Name            string  `json:"name"`
	Path            string  `json:"path"`
	Type            string  `json:"type"`
	Content         *string `json:"content"`
	IsBase64        bool    `json:"is_base64"`
	SourcePath      string  `json:"source_path"`
	SourceContainer string  `json:"source_container"`
	DeleteSource    bool    `json:"delete_source"`
}

// mediaType returns r's content type without parameters, lower case.
func mediaType(r *http.Request) (string, map[string]string) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return "", nil
	}
	return mt, params
}

// postFolder creates in a folder, in the first form that matches, as
// DreamFactory does: X-File-Name (the body is the file), X-Folder-Name, a
// multipart upload, a JSON list of entries, or (no body) the folder named
// by the path itself.
func (h *Handler) postFolder(w http.ResponseWriter, r *http.Request, t target) error {
	ctx := r.Context()
	checkExist := boolParam(r, "check_exist", false)
	if name := r.Header.Get("X-File-Name"); name != "" {
		n, err := CleanName(name)
		if err != nil {
			return err
		}
		if err := h.requireFolder(ctx, t); err != nil {
			return err
		}
		if boolParam(r, "extract", false) {
			mt, _ := mediaType(r)
			body := bufio.NewReader(r.Body)
			if isZipUpload(n, mt, body) {
				res, err := h.extractZip(ctx, t.path, body, boolParam(r, "clean", false), checkExist)
				if err != nil {
					return err
				}
				return apierr.WriteJSON(w, http.StatusCreated, res)
			}
			r.Body = io.NopCloser(body)
		}
		p := join(t.path, n)
		if err := h.write(ctx, p, r.Body, checkExist); err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusCreated, result{Name: n, Path: p, Type: "file"})
	}
	if name := r.Header.Get("X-Folder-Name"); name != "" {
		n, err := CleanName(name)
		if err != nil {
			return err
		}
		if err := h.requireFolder(ctx, t); err != nil {
			return err
		}
		p := join(t.path, n)
		if err := h.mkdir(ctx, p); err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusCreated, result{Name: n, Path: p + "/"})
	}
	if r.URL.Query().Get("url") != "" {
		return apierr.BadRequest("Creating files from a URL (url=) is not supported: download the file and upload it.")
	}
	mt, params := mediaType(r)
	if mt == "multipart/form-data" {
		if err := h.requireFolder(ctx, t); err != nil {
			return err
		}
		return h.uploadMany(w, r, t, params["boundary"], checkExist)
	}
	body, has, err := peekBody(r)
	if err != nil {
		return err
	}
	if !has {
		// The folder named by the path, parents included.
		if t.path == "" {
			return apierr.BadRequest("No resources given: name a folder in the path, or send files or entries.")
		}
		if fi, err := h.Storage.Stat(ctx, t.path); err == nil {
			if fi.IsDir() {
				return apierr.Conflict("Folder '%s' already exists.", t.display())
			}
			return apierr.Conflict("'%s' is a file.", t.path)
		}
		if err := h.storageErr(h.Storage.MkdirAll(ctx, t.path), notFoundFolder(t.display())); err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusCreated, result{Name: base(t.path), Path: t.display()})
	}
	if !isJSON(mt, body) {
		return apierr.BadRequest("To upload a file into folder '%s', name it with the X-File-Name header, send multipart form data with a 'files' field, or send it to the file's own path.", t.display())
	}
	items, err := decodeItems(body)
	if err != nil {
		return err
	}
	if err := h.requireFolder(ctx, t); err != nil {
		return err
	}
	out := make([]result, 0, len(items))
	for _, it := range items {
		out = append(out, h.createItem(ctx, t, it, checkExist))
	}
	return apierr.WriteJSON(w, http.StatusCreated, map[string]any{"resource": out})
}

// isJSON reports whether a body is JSON: by its type, or, for clients that
// send none or a form type, by its first byte.
func isJSON(mt string, body io.Reader) bool {
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return true
	}
	if mt != "" && mt != "application/x-www-form-urlencoded" && mt != "text/plain" {
		return false
	}
	if br, ok := body.(interface{ Peek(int) ([]byte, error) }); ok {
		b, _ := br.Peek(64)
		b = bytes.TrimLeft(b, " \t\r\n")
		return len(b) > 0 && (b[0] == '{' || b[0] == '[')
	}
	return false
}

// decodeItems reads a JSON body of entries, capped at DefaultMaxInlineBytes
// beyond the pipeline's own cap.
func decodeItems(body io.Reader) ([]item, error) {
	data, err := io.ReadAll(io.LimitReader(body, DefaultMaxInlineBytes*2))
	if err != nil {
		return nil, apierr.As(err)
	}
	var raw json.RawMessage
	if err := apierr.Unmarshal(data, &raw, false); err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	var items []item
	switch {
	case len(raw) > 0 && raw[0] == '[':
		err = apierr.Unmarshal(raw, &items, false)
	case len(raw) > 0 && raw[0] == '{':
		var wrapped struct {
			Resource *[]item `json:"resource"`
		}
		if err = apierr.Unmarshal(raw, &wrapped, false); err == nil && wrapped.Resource != nil {
			items = *wrapped.Resource
			break
		}
		var one item
		err = apierr.Unmarshal(raw, &one, false)
		items = []item{one}
	default:
		err = apierr.BadRequest("The body must be a JSON object or a list of entries.")
	}
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, apierr.BadRequest("No resources given: the list of entries is empty.")
	}
	return items, nil
}

// createItem creates one JSON entry below folder t; a failure is reported
// in the entry.
func (h *Handler) createItem(ctx context.Context, t target, it item, checkExist bool) result {
	name := it.Name
	if name == "" {
		name = it.Path
	}
	fail := func(res result, err error) result {
		res.Error = &entryFailed{Message: apierr.As(err).Message}
		return res
	}
	rel, err := CleanPath(name)
	if err != nil || rel == "" {
		if err == nil {
			err = apierr.BadRequest("Entry has no name.")
		}
		return fail(result{Name: name, Path: name, Type: it.Type}, err)
	}
	p := join(t.path, rel)
	kind := it.Type
	if kind == "" {
		kind = "file"
		if strings.HasSuffix(name, "/") {
			kind = "folder"
		}
	}
	res := result{Name: base(p), Path: p, Type: kind}
	if kind == "folder" {
		res.Path = p + "/"
	}
	switch {
	case it.SourcePath != "":
		if it.SourceContainer != "" && it.SourceContainer != h.Name {
			return fail(res, apierr.BadRequest("source_container '%s' is not supported: copy within service '%s'.", it.SourceContainer, h.Name))
		}
		src, err := CleanPath(it.SourcePath)
		if err != nil || src == "" {
			if err == nil {
				err = apierr.BadRequest("source_path names the root.")
			}
			return fail(res, err)
		}
		if err := h.copy(ctx, src, p, checkExist); err != nil {
			return fail(res, err)
		}
		if it.DeleteSource {
			if err := h.storageErr(h.Storage.RemoveAll(ctx, src), notFoundFile(src)); err != nil {
				return fail(res, err)
			}
		}
	case kind == "folder":
		if err := h.mkdir(ctx, p); err != nil {
			return fail(res, err)
		}
	case kind == "file":
		var content []byte
		if it.Content != nil {
			content = []byte(*it.Content)
			if it.IsBase64 {
				content, err = base64.StdEncoding.DecodeString(strings.TrimSpace(*it.Content))
				if err != nil {
					return fail(res, apierr.BadRequest("Content of '%s' is not valid base64.", p))
				}
			}
		}
		if err := h.write(ctx, p, bytes.NewReader(content), checkExist); err != nil {
			return fail(res, err)
		}
	default:
		return fail(res, apierr.BadRequest("Invalid type '%s': expected file or folder.", kind))
	}
	return res
}

// copy copies the file or folder src to dst.
func (h *Handler) copy(ctx context.Context, src, dst string, checkExist bool) error {
	fi, err := h.Storage.Stat(ctx, src)
	if err != nil {
		return h.storageErr(err, notFoundFile(src))
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return apierr.BadRequest("Cannot copy '%s' into itself.", src)
	}
	if !fi.IsDir() {
		f, err := h.Storage.Open(ctx, src)
		if err != nil {
			return h.storageErr(err, notFoundFile(src))
		}
		defer f.Close()
		return h.write(ctx, dst, f, checkExist)
	}
	if err := h.Storage.Mkdir(ctx, dst); errors.Is(err, fs.ErrExist) {
		if checkExist {
			return apierr.Conflict("Folder '%s/' already exists.", dst)
		}
	} else if err != nil {
		return h.storageErr(err, fmt.Sprintf("Folder '%s/' does not exist.", parent(dst)))
	}
	var copyErr error
	err = h.walk(ctx, src, "", false, func(p, rel string, _ fs.FileInfo) {
		if copyErr == nil {
			copyErr = h.copy(ctx, p, join(dst, rel), checkExist)
		}
	})
	return errors.Join(err, copyErr)
}

// requireFolder checks that the folder t exists.
func (h *Handler) requireFolder(ctx context.Context, t target) error {
	fi, err := h.Storage.Stat(ctx, t.path)
	if err == nil && !fi.IsDir() {
		return apierr.NotFound("Folder '%s' does not exist.", t.display())
	}
	if err != nil {
		return h.storageErr(err, fmt.Sprintf("Folder '%s' does not exist.", t.display()))
	}
	return nil
}

// mkdir creates one folder whose parent exists.
func (h *Handler) mkdir(ctx context.Context, p string) error {
	err := h.Storage.Mkdir(ctx, p)
	if errors.Is(err, fs.ErrExist) {
		return apierr.Conflict("Folder '%s/' already exists.", p)
	}
	return h.storageErr(err, fmt.Sprintf("Folder '%s/' does not exist.", parent(p)))
}

// write stores body as the file p.
func (h *Handler) write(ctx context.Context, p string, body io.Reader, checkExist bool) error {
	if body == nil {
		body = http.NoBody
	}
	_, err := h.Storage.Write(ctx, p, body, checkExist)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := h.Storage.Stat(ctx, p); serr == nil && fi.IsDir() {
			return apierr.Conflict("'%s' is a folder.", p)
		}
		return apierr.Conflict("File '%s' already exists.", p)
	}
	par := parent(p)
	if par != "" {
		par += "/"
	}
	return h.storageErr(err, fmt.Sprintf("Folder '%s' does not exist.", par))
}

// postFile writes the request body (or its one multipart upload) as the
// file the path names.
func (h *Handler) postFile(w http.ResponseWriter, r *http.Request, t target) error {
	ctx := r.Context()
	checkExist := boolParam(r, "check_exist", false)
	mt, params := mediaType(r)
	if mt != "multipart/form-data" {
		var body io.Reader = r.Body
		if boolParam(r, "extract", false) && r.Body != nil {
			// DreamFactory unpacks a zip sent to a file's path into the
			// file's folder.
			br := bufio.NewReader(r.Body)
			if isZipUpload(base(t.path), mt, br) {
				dir := parent(t.path)
				if err := h.requireFolder(ctx, target{path: dir, folder: true}); err != nil {
					return err
				}
				res, err := h.extractZip(ctx, dir, br, boolParam(r, "clean", false), checkExist)
				if err != nil {
					return err
				}
				return apierr.WriteJSON(w, http.StatusCreated, res)
			}
			body = br
		}
		if err := h.write(ctx, t.path, body, checkExist); err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusCreated, result{Name: base(t.path), Path: t.path, Type: "file"})
	}
	mr, err := multipartReader(r, params["boundary"])
	if err != nil {
		return err
	}
	written := false
	existed := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return apierr.BadRequest("Invalid multipart body: %v", err).WithCause(err)
		}
		if part.FileName() == "" {
			part.Close()
			continue
		}
		if written {
			part.Close()
			if !existed {
				_ = h.Storage.Remove(ctx, t.path)
			}
			return apierr.BadRequest("Multiple files uploaded to a single REST resource '%s'.", base(t.path))
		}
		_, statErr := h.Storage.Stat(ctx, t.path)
		existed = statErr == nil
		err = h.write(ctx, t.path, part, checkExist)
		part.Close()
		if err != nil {
			return err
		}
		written = true
	}
	if !written {
		return apierr.BadRequest("No file was uploaded: send the file in a multipart field 'files'.")
	}
	return apierr.WriteJSON(w, http.StatusCreated, result{Name: base(t.path), Path: t.path, Type: "file"})
}

// multipartReader reads a multipart body part by part, never buffering a
// whole file.
func multipartReader(r *http.Request, boundary string) (*multipart.Reader, error) {
	if boundary == "" {
		return nil, apierr.BadRequest("Invalid multipart body: the Content-Type has no boundary.")
	}
	return multipart.NewReader(r.Body, boundary), nil
}

// uploadMany stores every file part of a multipart body in folder t under
// its sanitised name.
func (h *Handler) uploadMany(w http.ResponseWriter, r *http.Request, t target, boundary string, checkExist bool) error {
	mr, err := multipartReader(r, boundary)
	if err != nil {
		return err
	}
	ctx := r.Context()
	extract, clean := boolParam(r, "extract", false), boolParam(r, "clean", false)
	out := []result{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return apierr.As(err)
			}
			return apierr.BadRequest("Invalid multipart body: %v", err).WithCause(err)
		}
		if part.FileName() == "" {
			part.Close()
			continue
		}
		name := SanitizeFileName(part.FileName())
		if name == "" {
			part.Close()
			out = append(out, result{Name: part.FileName(), Type: "file", Error: &entryFailed{Message: "Invalid file name."}})
			continue
		}
		var body io.Reader = part
		if extract {
			// A zip is unpacked into the folder; anything else is stored
			// as it is, from what was peeked onwards.
			br := bufio.NewReader(part)
			if isZipUpload(name, part.Header.Get("Content-Type"), br) {
				res, err := h.extractZip(ctx, t.path, br, clean, checkExist)
				part.Close()
				if err != nil {
					return err
				}
				out = append(out, res)
				continue
			}
			body = br
		}
		p := join(t.path, name)
		res := result{Name: name, Path: p, Type: "file"}
		err = h.write(ctx, p, body, checkExist)
		part.Close()
		if err != nil {
			e := apierr.As(err)
			if e.Status >= 500 || e.Status == http.StatusRequestEntityTooLarge {
				return err
			}
			res.Error = &entryFailed{Message: e.Message}
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return apierr.BadRequest("No file was uploaded: send the files in a multipart field 'files'.")
	}
	return apierr.WriteJSON(w, http.StatusCreated, map[string]any{"resource": out})
}

// delete removes a file, a folder (with force when it is not empty;
// content_only keeps the folder), or the entries a JSON body lists.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, t target) error {
	ctx := r.Context()
	if t.folder {
		body, has, err := peekBody(r)
		if err != nil {
			return err
		}
		if has {
			items, err := decodeItems(body)
			if err != nil {
				return err
			}
			force := boolParam(r, "force", false)
			out := make([]result, 0, len(items))
			for _, it := range items {
				out = append(out, h.deleteItem(ctx, t, it, force))
			}
			return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": out})
		}
		if t.path == "" && !boolParam(r, "content_only", false) {
			return apierr.BadRequest("No resources given for delete.")
		}
		if err := h.deleteFolder(ctx, t.path, boolParam(r, "force", false), boolParam(r, "content_only", false)); err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusOK, result{Name: base(t.path), Path: t.display()})
	}
	fi, err := h.Storage.Stat(ctx, t.path)
	if err != nil {
		return h.storageErr(err, fmt.Sprintf("File '%s' was not found.", t.path))
	}
	if fi.IsDir() {
		return apierr.BadRequest("'%s' is a folder: delete it as '%s/'.", t.path, t.path)
	}
	if err := h.storageErr(h.Storage.Remove(ctx, t.path), fmt.Sprintf("File '%s' was not found.", t.path)); err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, result{Name: base(t.path), Path: t.path})
}

// deleteFolder removes folder p.
func (h *Handler) deleteFolder(ctx context.Context, p string, force, contentOnly bool) error {
	fi, err := h.Storage.Stat(ctx, p)
	if err == nil && !fi.IsDir() {
		return apierr.NotFound("Folder '%s/' does not exist.", p)
	}
	if err != nil {
		return h.storageErr(err, fmt.Sprintf("Folder '%s/' does not exist.", p))
	}
	if contentOnly {
		infos, err := h.Storage.ReadDir(ctx, p)
		if err != nil {
			return h.storageErr(err, fmt.Sprintf("Folder '%s/' does not exist.", p))
		}
		if len(infos) > 0 && !force {
			return apierr.Conflict("Folder '%s' is not empty: delete its content with force=true.", target{path: p, folder: true}.display())
		}
		for _, c := range infos {
			if err := h.storageErr(h.Storage.RemoveAll(ctx, join(p, c.Name())), "Not found."); err != nil {
				return err
			}
		}
		return nil
	}
	if force {
		return h.storageErr(h.Storage.RemoveAll(ctx, p), fmt.Sprintf("Folder '%s/' does not exist.", p))
	}
	err = h.Storage.Remove(ctx, p)
	if errors.Is(err, ErrNotEmpty) {
		return apierr.Conflict("Folder '%s/' is not empty: delete it with force=true.", p)
	}
	return h.storageErr(err, fmt.Sprintf("Folder '%s/' does not exist.", p))
}

// deleteItem deletes one listed entry, relative to folder t.
func (h *Handler) deleteItem(ctx context.Context, t target, it item, force bool) result {
	name := it.Path
	if name == "" {
		name = it.Name
	} else if t.path != "" && strings.HasPrefix(strings.Trim(name, "/"), t.path+"/") {
		name = strings.TrimPrefix(strings.Trim(name, "/"), t.path+"/")
	}
	res := result{Name: name, Path: name, Type: it.Type}
	rel, err := CleanPath(name)
	if err == nil && rel == "" {
		err = apierr.BadRequest("Entry names no file or folder.")
	}
	if err != nil {
		res.Error = &entryFailed{Message: apierr.As(err).Message}
		return res
	}
	p := join(t.path, rel)
	res.Name = base(p)
	res.Path = p
	folder := it.Type == "folder" || strings.HasSuffix(name, "/")
	if folder {
		res.Type = "folder"
		res.Path = p + "/"
		err = h.deleteFolder(ctx, p, force, false)
	} else {
		if rerr := h.Storage.Remove(ctx, p); errors.Is(rerr, ErrNotEmpty) {
			err = apierr.Conflict("'%s' is a folder that is not empty: delete it with force=true.", p)
		} else {
			err = h.storageErr(rerr, fmt.Sprintf("File '%s' was not found.", p))
		}
	}
	if err != nil {
		res.Error = &entryFailed{Message: apierr.As(err).Message}
	}
	return res
}
