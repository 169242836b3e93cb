package files

import (
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// MsgAccessDenied is DreamFactory's answer for a public-route request to
// a path that is not public.
const MsgAccessDenied = "Access denied, please contact your system administrator."

// ServePublic serves the file at path read-only and without credentials
// when the service's public_path lists it (GET and HEAD, with ranges and
// conditional requests); any other path is a 403. A public_path entry
// names a file, or a folder whose files (at any depth) are public. The
// composition root mounts it at /storage/{service}/{path}, DreamFactory's
// storage route.
func (h *Handler) ServePublic(w http.ResponseWriter, r *http.Request, path string) {
	apierr.Handler(func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return apierr.MethodNotAllowed(r.Method)
		}
		if strings.HasSuffix(path, "/") || path == "" {
			return apierr.Forbidden(MsgAccessDenied)
		}
		clean, err := CleanPath(path)
		if err != nil {
			return apierr.Forbidden(MsgAccessDenied)
		}
		if !h.public(clean) {
			return apierr.Forbidden(MsgAccessDenied)
		}
		// Only the file itself: no listing, properties or content options.
		r2 := r.Clone(r.Context())
		r2.URL.RawQuery = ""
		return h.getFile(w, r2, target{path: clean})
	}).ServeHTTP(w, r)
}

// public reports whether the cleaned path is listed by PublicPaths, itself
// or below a listed folder.
func (h *Handler) public(path string) bool {
	for _, p := range h.PublicPaths {
		p, err := CleanPath(p)
		if err != nil {
			continue
		}
		if p == "" || path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}
