package apidocs

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"

	swaggerFiles "github.com/swaggo/files/v2"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// page holds the page's own files: index.html, docs.js and docs.css.
//
//go:embed ui
var page embed.FS

// swaggerAssets are the Swagger UI files the page uses, from the
// github.com/swaggo/files/v2 module (Swagger UI's dist, Apache-2.0).
var swaggerAssets = map[string]bool{
	"swagger-ui-bundle.js": true,
	"swagger-ui.css":       true,
	"favicon-32x32.png":    true,
	"favicon-16x16.png":    true,
}

// contentSecurityPolicy keeps the page to its own origin: no CDN, no
// inline scripts; Swagger UI needs inline styles and data: images.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

// UI returns the handler of the API docs page: mount it with its prefix
// stripped, so that "/" is the page and the other paths its assets
// (the proxy root serves it at /api/docs/). The page needs no API key;
// the calls it makes do.
func UI() http.Handler {
	own, err := fs.Sub(page, "ui")
	if err != nil {
		panic("apidocs: embedded page missing: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			apierr.Write(w, apierr.MethodNotAllowed(r.Method))
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		var src fs.FS
		switch {
		case name == "index.html" || name == "docs.js" || name == "docs.css":
			src = own
		case swaggerAssets[name]:
			src = swaggerFiles.FS
		default:
			apierr.Write(w, apierr.NotFound("No file '%s' on the API docs page.", name))
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if name == "index.html" {
			h.Set("Cache-Control", "no-cache")
		} else {
			h.Set("Cache-Control", "public, max-age=3600")
		}
		http.ServeFileFS(w, r, src, name)
	})
}
