package proxy

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// listedService is one service of GET /api/v2.
type listedService struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Label       string `json:"label"`
	Description string `json:"description"`
	Type        string `json:"type"`
}

// serviceListHandler answers GET /api/v2 (and /api/v2/) with
// {"services":[…]}: the active services the caller reaches, in id order
// (rbac.ReachesService: an administrator every one, a role those it grants some
// verb on). The caller is identified by ident (the API key and session
// stages), so a missing or wrong key is a 401 as everywhere. With
// --compat dreamfactory a request with neither key nor session token is
// answered too, as DreamFactory does: with the services such a caller
// reaches, which is none.
func (s *Server) serviceListHandler(ident handlers.Stage) httprouter.Handle {
	list := ident(http.HandlerFunc(s.serviceList))
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		if s.cfg.Compat == CompatDreamFactory && apikey.KeyFromRequest(r) == "" && !apikey.HasSessionToken(r) {
			s.serviceList(w, r)
			return
		}
		list.ServeHTTP(w, r)
	}
}

func (s *Server) serviceList(w http.ResponseWriter, r *http.Request) {
	id := caller.IdentityFrom(r.Context())
	out := []listedService{}
	st := s.state.Load()
	if st != nil {
		for _, svc := range st.snap.Services {
			if svc.IsActive && rbac.ReachesService(st.policy, id, svc.Name, svc.Type) {
				out = append(out, listedService{ID: svc.ID, Name: svc.Name, Label: svc.Label, Description: svc.Description, Type: svc.Type})
			}
		}
	}
	_ = apierr.WriteJSON(w, http.StatusOK, map[string]any{"services": out})
}
