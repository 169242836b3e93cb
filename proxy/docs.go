package proxy

import (
	"context"
	"net/http"

	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// API documents in the root: the access checker documents are filtered
// with (over the policy in force, answering as the RBAC stage decides),
// GET /api/v2/{service}/_spec, and the API docs page at /api/docs/.

// accessChecker implements service.AccessChecker for the server's state.
type accessChecker struct{ s *Server }

var _ service.AccessChecker = accessChecker{}

// Allowed reports whether the caller in ctx may call verb on component
// (possibly a template such as "_table/{table_name}") of the service, as
// the RBAC stage would decide: administrators and access exceptions
// always, others by their role, where the system service is reached only
// through entries that name it.
func (a accessChecker) Allowed(ctx context.Context, svcName, component, verb string) bool {
	svc, id, pol, ok := a.subject(ctx, svcName)
	return ok && rbac.Documented(pol, id, &service.Target{Service: svc, Resource: component, Verb: verb})
}

// Reaches reports whether the caller's role grants some verb on the
// service (the RBAC stage's condition for api_docs/{service} and _spec).
func (a accessChecker) Reaches(ctx context.Context, svcName string) bool {
	_, id, pol, ok := a.subject(ctx, svcName)
	return ok && rbac.Reaches(pol, id, svcName)
}

// Grant decides, as the RBAC stage would, whether the caller in ctx may
// call verb on component of the service, and returns its grant.
func (a accessChecker) Grant(ctx context.Context, svcName, component, verb string) (*caller.Grant, error) {
	snap := a.s.Snapshot()
	if snap == nil {
		return nil, apierr.InternalMsg(rbac.MsgCheckFailed)
	}
	svc := snap.Service(svcName)
	if svc == nil {
		return nil, apierr.NotFound("Could not find a service for %s", svcName)
	}
	return rbac.Grant(ctx, a.s.rbacOptions(), caller.IdentityFrom(ctx), &service.Target{Service: svc, Resource: component, Verb: verb})
}

func (a accessChecker) subject(ctx context.Context, svcName string) (*store.Service, *caller.Identity, *policy.Authorizer, bool) {
	snap := a.s.Snapshot()
	if snap == nil {
		return nil, nil, nil, false
	}
	svc := snap.Service(svcName)
	if svc == nil {
		return nil, nil, nil, false
	}
	return svc, caller.IdentityFrom(ctx), a.s.Policy(), true
}

// docs is the builder of the server's API documents.
func (s *Server) docs() *apidocs.Builder {
	return &apidocs.Builder{Registry: s, Access: accessChecker{s}, Version: s.cfg.Version, Logger: s.logger}
}

// isSpec reports whether t asks for the service's own document
// (GET /api/v2/{service}/_spec).
func isSpec(t *service.Target) bool {
	return t.Resource == "_spec" && (t.Verb == http.MethodGet || t.Verb == http.MethodHead)
}

// docsPage serves the API docs page below /api/docs/; /api/docs
// redirects there so the page's relative links resolve.
func docsPage(mux *http.ServeMux) {
	ui := http.StripPrefix("/api/docs", apidocs.UI())
	mux.Handle("GET /api/docs/", ui)
	mux.HandleFunc("GET /api/docs", func(w http.ResponseWriter, r *http.Request) {
		// Relative, so that it also works below a mount prefix.
		w.Header().Set("Location", "docs/")
		w.WriteHeader(http.StatusMovedPermanently)
	})
}
