package files

import (
	"archive/zip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// getFolder lists a folder (or the root), or describes it, or sends it as
// a zip file.
func (h *Handler) getFolder(w http.ResponseWriter, r *http.Request, t target) error {
	ctx := r.Context()
	fi, err := h.Storage.Stat(ctx, t.path)
	if err == nil && !fi.IsDir() {
		return apierr.NotFound("%s", notFoundFolder(t.display()))
	}
	if err != nil {
		return h.storageErr(err, notFoundFolder(t.display()))
	}
	q := r.URL.Query()
	switch {
	case boolParam(r, "include_properties", false):
		return apierr.WriteJSON(w, http.StatusOK, map[string]any{
			"name": base(t.path), "path": t.display(), "last_modified": httpTime(fi.ModTime()),
		})
	case boolParam(r, "zip", false):
		return h.zipFolder(w, r, t)
	case boolParam(r, "as_access_list", false):
		if t.path != "" {
			return apierr.BadRequest("as_access_list is only available at the service root.")
		}
		return h.accessList(w, r)
	}

	files, folders := boolParam(r, "include_files", true), boolParam(r, "include_folders", true)
	search := strings.ToLower(q.Get("search"))
	var list []entry
	err = h.walk(ctx, t.path, "", boolParam(r, "full_tree", false), func(p, rel string, fi fs.FileInfo) {
		if (fi.IsDir() && !folders) || (!fi.IsDir() && !files) {
			return
		}
		if search != "" && !strings.Contains(strings.ToLower(fi.Name()), search) {
			return
		}
		list = append(list, describe(p, rel, fi))
	})
	if err != nil {
		return err
	}
	if boolParam(r, "as_list", false) {
		idField := q.Get("id_field")
		out := make([]string, 0, len(list))
		for _, e := range list {
			switch idField {
			case "name":
				out = append(out, e.Name)
			default:
				out = append(out, e.Path)
			}
		}
		return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": out})
	}
	if fields := q.Get("fields"); fields != "" && fields != "*" {
		return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": selectFields(list, fields)})
	}
	if list == nil {
		list = []entry{}
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": list})
}

// walk calls fn for each entry of folder (recursively with tree), depth
// first, with its path from the root and its name relative to the listed
// folder. It stops with a 400 past MaxListEntries.
func (h *Handler) walk(ctx context.Context, folder, relDir string, tree bool, fn func(p, rel string, fi fs.FileInfo)) error {
	count := 0
	var visit func(folder, relDir string) error
	visit = func(folder, relDir string) error {
		infos, err := h.Storage.ReadDir(ctx, folder)
		if err != nil {
			return h.storageErr(err, notFoundFolder(folder+"/"))
		}
		for _, fi := range infos {
			count++
			if count > h.maxList() {
				return apierr.BadRequest("The listing has more than %d entries; list a smaller folder.", h.maxList())
			}
			p, rel := join(folder, fi.Name()), join(relDir, fi.Name())
			fn(p, rel, fi)
			if tree && fi.IsDir() {
				if err := visit(p, rel); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(folder, relDir)
}

// selectFields keeps only the named keys of each entry.
func selectFields(list []entry, fields string) []map[string]any {
	want := map[string]bool{}
	for _, f := range strings.Split(fields, ",") {
		want[strings.TrimSpace(f)] = true
	}
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		m := map[string]any{}
		add := func(k string, v any, ok bool) {
			if ok && want[k] {
				m[k] = v
			}
		}
		add("path", e.Path, true)
		add("name", e.Name, true)
		add("type", e.Type, true)
		add("last_modified", e.LastModified, e.LastModified != "")
		add("content_type", e.ContentType, e.ContentType != "")
		if e.ContentLength != nil {
			add("content_length", *e.ContentLength, true)
		}
		out = append(out, m)
	}
	return out
}

// accessList lists the RBAC components of the service: "", "*", then each
// folder and the folder with "*".
func (h *Handler) accessList(w http.ResponseWriter, r *http.Request) error {
	out := []string{"", "*"}
	err := h.walk(r.Context(), "", "", true, func(p, _ string, fi fs.FileInfo) {
		if fi.IsDir() {
			out = append(out, p+"/", p+"/*")
		}
	})
	if err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": out})
}

// zipFolder streams the folder's tree as a zip file. Entries are read one
// at a time; nothing is held in memory beyond the copy buffer.
func (h *Handler) zipFolder(w http.ResponseWriter, r *http.Request, t target) error {
	ctx := r.Context()
	type item struct {
		p, rel string
		fi     fs.FileInfo
	}
	var items []item
	if err := h.walk(ctx, t.path, "", true, func(p, rel string, fi fs.FileInfo) {
		items = append(items, item{p, rel, fi})
	}); err != nil {
		return err
	}
	name := base(t.path)
	if name == "" {
		name = h.Name
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+".zip"))
	w.Header().Set("Cache-Control", "private")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	zw := zip.NewWriter(w)
	for _, it := range items {
		hdr, err := zip.FileInfoHeader(it.fi)
		if err != nil {
			return nil // headers are sent: the client sees a cut zip
		}
		hdr.Name = it.rel
		if it.fi.IsDir() {
			hdr.Name += "/"
			if _, err := zw.CreateHeader(hdr); err != nil {
				return nil
			}
			continue
		}
		hdr.Method = zip.Deflate
		zf, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil
		}
		f, err := h.Storage.Open(ctx, it.p)
		if err != nil {
			continue // removed since it was listed
		}
		_, err = io.Copy(zf, f)
		f.Close()
		if err != nil {
			return nil
		}
	}
	_ = zw.Close()
	return nil
}

// getFile streams a file (with range requests and conditional requests),
// or describes it with include_properties, with its content when asked.
func (h *Handler) getFile(w http.ResponseWriter, r *http.Request, t target) error {
	ctx := r.Context()
	fi, err := h.Storage.Stat(ctx, t.path)
	if err != nil {
		return h.storageErr(err, notFoundFile(t.path))
	}
	if fi.IsDir() {
		return apierr.NotFound("The specified file '%s' was not found in storage: it is a folder (add a trailing slash to list it).", t.path)
	}
	if boolParam(r, "include_properties", false) {
		props := map[string]any{
			"path": t.path, "name": base(t.path), "content_type": contentType(t.path),
			"last_modified": httpTime(fi.ModTime()), "content_length": fi.Size(),
		}
		if boolParam(r, "content", false) {
			if fi.Size() > h.maxInline() {
				return apierr.BadRequest("The file is larger than %d bytes: download it without content=true.", h.maxInline())
			}
			f, err := h.Storage.Open(ctx, t.path)
			if err != nil {
				return h.storageErr(err, notFoundFile(t.path))
			}
			data, err := io.ReadAll(io.LimitReader(f, h.maxInline()+1))
			f.Close()
			if err != nil {
				return h.storageErr(err, notFoundFile(t.path))
			}
			if boolParam(r, "is_base64", true) {
				props["content"] = base64.StdEncoding.EncodeToString(data)
			} else {
				props["content"] = string(data)
			}
		}
		return apierr.WriteJSON(w, http.StatusOK, props)
	}
	f, err := h.Storage.Open(ctx, t.path)
	if err != nil {
		return h.storageErr(err, notFoundFile(t.path))
	}
	defer f.Close()
	hdr := w.Header()
	hdr.Set("Content-Type", contentType(t.path))
	hdr.Set("ETag", etag(fi))
	hdr.Set("Cache-Control", "private")
	name := base(t.path)
	switch {
	case boolParam(r, "download", false):
		hdr.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	case !strings.HasSuffix(strings.ToLower(name), ".html") && !strings.HasSuffix(strings.ToLower(name), ".htm"):
		hdr.Set("Content-Disposition", "inline")
	}
	// Files are served as data, never as a page of this origin.
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "sandbox")
	http.ServeContent(w, r, name, fi.ModTime(), f)
	return nil
}
