package proxy

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/accesslog"
	"github.com/portcullis-dev/portcullis/handlers/cors"
	"github.com/portcullis-dev/portcullis/handlers/gelf"
	"github.com/portcullis-dev/portcullis/handlers/guard"
	"github.com/portcullis-dev/portcullis/handlers/recoverer"
	"github.com/portcullis-dev/portcullis/handlers/requestid"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// pipeline assembles the whole request path in one place. A request flows:
//
//	recoverer → request id → access log + metrics → GELF tap (log services) → CORS
//	→ guard (requests and body bytes in flight: 503; write deadlines) → body cap → verb tunnelling
//	→ router (/api/v2/:service/*resource; unknown service 404; requests per service: 503)
//	→ API key (401) → session (401) → RBAC (403) → limits (429) → script hooks
//	→ schema-contract enforcement (400 for strict writes; shaped responses)
//	→ the service's backend
//
// GET /api/v2 lists the services the caller reaches (API key and session
// stages, then the list; see serviceList).
//
// /healthz, /metrics and the API docs page (/api/docs/) sit outside the
// pipeline, as does the MCP audit stream (/_internal/ai/audit-stream, API
// key, session and administrators only); GET /api/v2/{service}/_spec passes it and is answered by the
// api_docs builder before the backend. It returns the /api/v2
// handler (for inner calls) and the root handler.
func (s *Server) pipeline() (api http.Handler, root http.Handler, err error) {
	recover, err := recoverer.New(recoverer.Options{Logger: s.logger})
	if err != nil {
		return nil, nil, err
	}
	reqID, err := requestid.New(requestid.Options{TrustClient: s.cfg.TrustRequestID})
	if err != nil {
		return nil, nil, err
	}
	access, err := accesslog.New(accesslog.Options{Logger: s.logger, Registerer: s.metrics})
	if err != nil {
		return nil, nil, err
	}
	guards, err := guard.New(guard.Options{
		MaxInFlight:     max(s.cfg.MaxInFlight, 0),
		MaxBodyInFlight: max(s.cfg.MaxBodyInFlight, 0),
		MaxBody:         s.cfg.MaxBodyBytes,
		WriteTimeout:    max(s.cfg.WriteTimeout, 0),
		QueueWait:       max(s.cfg.QueueWait, 0),
		Streams:         func(r *http.Request) bool { return s.streamsBodies(r.URL.Path) },
	})
	if err != nil {
		return nil, nil, err
	}
	s.slots = guard.NewSlots(max(s.cfg.MaxInFlightPerService, 0), max(s.cfg.QueueWait, 0))
	tap, err := gelf.New(gelf.Options{Connectors: func() []*logship.Connector {
		if st := s.state.Load(); st != nil {
			return st.logs
		}
		return nil
	}})
	if err != nil {
		return nil, nil, err
	}
	corsStage, err := cors.New(cors.Options{Rules: func() *cors.Set { return s.state.Load().cors }})
	if err != nil {
		return nil, nil, err
	}

	keys, sessions, err := s.identityStages()
	if err != nil {
		return nil, nil, err
	}
	roles, err := s.rbacStage()
	if err != nil {
		return nil, nil, err
	}
	limits, err := s.limitStage()
	if err != nil {
		return nil, nil, err
	}
	scripts, err := s.scriptStage()
	if err != nil {
		return nil, nil, err
	}
	contracts, err := s.contractStage()
	if err != nil {
		return nil, nil, err
	}

	// Stages that run once the target service is known, in this order.
	inner := handlers.Chain(
		keys,         // API key → app and its default role (401, 403)
		sessions,     // session token → user, admin flag, user's role (401, 403)
		roles,        // role-based access (403); the grant for the backend
		limits,       // rate limits (429); administrators and script calls exempt
		gelf.Observe, // the caller and target, for the GELF tap
		scripts,      // event scripts: pre_process, post_process (see handlers/script)
		contracts,    // schema-contract runtime enforcement (400, shaped responses)
	)
	dispatch := inner(http.HandlerFunc(s.dispatch))

	router := httprouter.New()
	router.RedirectTrailingSlash = false
	router.RedirectFixedPath = false
	router.HandleMethodNotAllowed = true
	router.NotFound = apierr.Handler(func(w http.ResponseWriter, r *http.Request) error {
		return apierr.NotFound("Resource '%s' not found.", r.URL.Path)
	})
	router.MethodNotAllowed = apierr.Handler(func(w http.ResponseWriter, r *http.Request) error {
		return apierr.MethodNotAllowed(r.Method)
	})
	list := s.serviceListHandler(handlers.Chain(keys, sessions))
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		router.Handle(m, "/api/v2", list)
		router.Handle(m, "/api/v2/", list)
	}
	resolve := s.resolve(dispatch)
	route := func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		resolve(w, r, ps.ByName("service"), ps.ByName("resource"))
	}
	for _, m := range serviceMethods {
		router.Handle(m, "/api/v2/:service", route)
		router.Handle(m, "/api/v2/:service/*resource", route)
	}

	api = handlers.Chain(placeState, recover, reqID, access, tap, corsStage, guards.Stage, s.limitBody, tunnelVerb)(serviceRoutes(router, resolve))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.Handle("GET /metrics", s.metricsHandler())
	mux.Handle(AuditStreamPath, handlers.Chain(recover, reqID, access, keys, sessions, adminOnly)(s.audit))
	docsPage(mux) // the API docs page, /api/docs/
	// public_path files of file services, without credentials (GET and HEAD).
	mux.Handle("GET "+StoragePath+"{service}/{path...}", handlers.Chain(recover, reqID, access, guards.Stage)(http.HandlerFunc(s.servePublicFile)))
	mux.Handle("/", api)
	return api, mux, nil
}

// serviceMethods are the methods routed to a service.
var serviceMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodHead, http.MethodOptions}

// serviceRoutes serves the requests the router would send to
// /api/v2/:service and /api/v2/:service/*resource straight to resolve,
// with the parameters the router would give (the resource with its
// leading slash), and every other request through the router: the
// router's parameter slice is an allocation per request.
// TestServiceRoutesMatchRouter checks that both take the same requests
// with the same parameters.
func serviceRoutes(router *httprouter.Router, resolve serviceHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, resource, ok := servicePath(r.Method, r.URL.Path); ok {
			resolve(w, r, name, resource)
			return
		}
		router.ServeHTTP(w, r)
	})
}

// servicePath splits /api/v2/{service}[/{resource}] for a method of
// serviceMethods; ok is false for any other request, and for an empty
// service name (left to the router).
func servicePath(method, path string) (name, resource string, ok bool) {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodHead, http.MethodOptions:
	default:
		return "", "", false
	}
	rest, ok := strings.CutPrefix(path, "/api/v2/")
	if !ok {
		return "", "", false
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		name, resource = rest[:i], rest[i:]
	} else {
		name = rest
	}
	return name, resource, name != ""
}

// serviceHandler serves a request to a service, given the name and the
// resource path as the router gives them.
type serviceHandler func(w http.ResponseWriter, r *http.Request, name, resource string)

// requestRoom is a request's caller.State with room for the values the
// proxy keeps per request, so that they come with the State's one
// allocation.
type requestRoom struct {
	st     caller.State
	target service.Target
}

type requestRoomKey struct{}

// placeState puts a caller.State in the request's context before the
// stages that fill it (the request-id stage and those after it then find
// it there), with room for the proxy's own values (roomOf).
func placeState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if caller.StateFrom(r.Context()) == nil {
			m := &requestRoom{}
			m.st.Context = r.Context()
			m.st.Put(requestRoomKey{}, m)
			r = r.WithContext(&m.st)
		}
		next.ServeHTTP(w, r)
	})
}

// roomOf returns the requestRoom of the request whose context is ctx,
// or nil: only when ctx is the room's own State (a context derived from
// it, such as an inner call's, sees the outer request's room and gets
// none).
func roomOf(ctx context.Context) *requestRoom {
	st := caller.StateFrom(ctx)
	if st == nil {
		return nil
	}
	m, _ := st.Value(requestRoomKey{}).(*requestRoom)
	if m == nil || &m.st != st {
		return nil
	}
	return m
}

// resolve finds the target service (404 when unknown; names match
// case-sensitively) and puts the Target in the context for the stages.
func (s *Server) resolve(next http.Handler) serviceHandler {
	return func(w http.ResponseWriter, r *http.Request, name, resource string) {
		st := s.state.Load()
		e, ok := st.entries[name]
		if !ok {
			apierr.Write(w, unknownService(name, resource))
			return
		}
		ctx := r.Context()
		accesslog.SetService(ctx, name)
		slot, ok := s.slots.Enter(ctx, name)
		if !ok {
			apierr.Write(w, guard.Busy(time.Second, "Service '%s' is busy (%d requests in flight); try again later.", name, s.slots.Max()))
			return
		}
		defer slot.Release()
		var t *service.Target
		if m := roomOf(ctx); m != nil && m.target.Service == nil {
			t = &m.target // the room's first target (a request served twice gets a new one)
		} else {
			t = new(service.Target)
		}
		*t = service.Target{Service: e.svc, Resource: strings.Trim(resource, "/"), Verb: r.Method}
		rs, fresh := caller.Ensure(ctx)
		service.PutTarget(rs, t)
		if fresh {
			r = r.WithContext(rs)
		}
		next.ServeHTTP(w, r)
	}
}

// unknownService is the 404 for a service that does not exist. A client
// that calls /api/v2/admin/session (DreamFactory's old admin login path) is
// told where admin sessions live and that a session token (JWT) is needed.
func unknownService(name, resource string) *apierr.Error {
	if name == "admin" && strings.Trim(resource, "/") == "session" {
		return apierr.NotFound("Service 'admin' not found: a session token (JWT) is required for admin endpoints; sign in with POST /api/v2/system/admin/session.")
	}
	return apierr.NotFound("Service '%s' not found.", name)
}

// dispatch hands the request to the target service's backend.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	t := service.TargetFrom(r.Context())
	for range 3 {
		e, ok := s.state.Load().entries[t.Service.Name]
		if !ok {
			apierr.Write(w, apierr.NotFound("Service '%s' not found.", t.Service.Name))
			return
		}
		if e.err != nil {
			apierr.Write(w, e.err)
			return
		}
		if isSpec(t) {
			s.docs().ServeService(w, r, t.Service.Name)
			return
		}
		if !e.live.acquire() {
			continue // replaced while we looked; take the new one
		}
		func() {
			defer e.live.release()
			e.live.backend.ServeHTTP(w, r)
		}()
		return
	}
	apierr.Write(w, apierr.Unavailable("Service '%s' is being reconfigured; try again.", t.Service.Name))
}

// limitBody caps request bodies at MaxBodyBytes (MaxUploadBytes for
// backends that stream bodies, such as file services); reading past it fails and
// apierr turns that into 413. A declared Content-Length over the cap is
// refused before anything is read.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hasBody := r.Body != nil && r.Body != http.NoBody
		if !hasBody && r.ContentLength <= 0 {
			next.ServeHTTP(w, r) // nothing to cap (no service lookup)
			return
		}
		max := s.cfg.MaxBodyBytes
		if s.streamsBodies(r.URL.Path) {
			max = s.cfg.MaxUploadBytes
		}
		if r.ContentLength > max {
			apierr.Write(w, apierr.PayloadTooLarge(max))
			return
		}
		if hasBody {
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		next.ServeHTTP(w, r)
	})
}

// streamsBodies reports whether the request path /api/v2/{service}/…
// names a service whose backend streams request bodies to their
// destination (service.BodyStreamer): those get MaxUploadBytes.
func (s *Server) streamsBodies(path string) bool {
	rest, ok := strings.CutPrefix(path, "/api/v2/")
	if !ok {
		return false
	}
	name, _, _ := strings.Cut(rest, "/")
	e, ok := s.state.Load().entries[name]
	if !ok || e.live == nil {
		return false
	}
	bs, ok := e.live.backend.(service.BodyStreamer)
	return ok && bs.StreamsBodies()
}

// tunnelVerb rewrites a POST carrying X-HTTP-Method, X-Method-Override or
// ?method= to that verb, as DreamFactory clients send it; MERGE means PATCH.
func tunnelVerb(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			m := r.Header.Get("X-HTTP-Method")
			if m == "" {
				m = r.Header.Get("X-Method-Override")
			}
			if m == "" {
				m = r.URL.Query().Get("method")
			}
			switch m = strings.ToUpper(strings.TrimSpace(m)); m {
			case "MERGE":
				r.Method = http.MethodPatch
			case http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete:
				r.Method = m
			}
		}
		next.ServeHTTP(w, r)
	})
}
