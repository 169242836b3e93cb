package proxy

import (
	"net/http"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// StoragePath is DreamFactory's storage route: the public_path files of a
// file service, served without credentials at /storage/{service}/{path}.
const StoragePath = store.StorageRoute

// publicServer is a backend with files served without credentials (the
// file services' public_path).
type publicServer interface {
	ServePublic(w http.ResponseWriter, r *http.Request, path string)
}

// servePublicFile answers GET /storage/{service}/{path}: the backend
// decides whether path is public (403 otherwise); a service that is not
// an active file service is a 404.
func (s *Server) servePublicFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("service")
	notFound := func() {
		apierr.Write(w, apierr.NotFound("Service '%s' not found.", name))
	}
	snap := s.Snapshot()
	if snap == nil {
		notFound()
		return
	}
	if svc := snap.Service(name); svc == nil || !svc.IsActive {
		notFound()
		return
	}
	be, ok := s.Backend(name)
	if !ok {
		notFound()
		return
	}
	ps, ok := be.(publicServer)
	if !ok {
		notFound()
		return
	}
	ps.ServePublic(w, r, r.PathValue("path"))
}
