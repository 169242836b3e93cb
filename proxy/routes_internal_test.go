package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/julienschmidt/httprouter"
)

// TestServiceRoutesMatchRouter checks that servicePath takes exactly the
// requests the router sends to the service routes, with the same service
// and resource parameters, and leaves every other one to the router
// (which also takes an empty service name to the service routes).
func TestServiceRoutesMatchRouter(t *testing.T) {
	type hit struct {
		route             string
		service, resource string
	}
	var got hit
	router := httprouter.New()
	router.RedirectTrailingSlash = false
	router.RedirectFixedPath = false
	router.HandleMethodNotAllowed = true
	router.NotFound = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = hit{route: "not found"} })
	router.MethodNotAllowed = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = hit{route: "not allowed"} })
	list := func(http.ResponseWriter, *http.Request, httprouter.Params) { got = hit{route: "list"} }
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		router.Handle(m, "/api/v2", list)
		router.Handle(m, "/api/v2/", list)
	}
	for _, m := range serviceMethods {
		route := func(_ http.ResponseWriter, _ *http.Request, ps httprouter.Params) {
			got = hit{"service", ps.ByName("service"), ps.ByName("resource")}
		}
		router.Handle(m, "/api/v2/:service", route)
		router.Handle(m, "/api/v2/:service/*resource", route)
	}
	paths := []string{
		"/", "/api", "/api/v2", "/api/v2/", "/api/v2//", "/api/v2//x", "/api/v2/db", "/api/v2/db/",
		"/api/v2/db//", "/api/v2/db/_table/item/7", "/api/v2/db/_table/item/", "/api/v2/a b/c d",
		"/api/v2/db/_table/../x", "/api/v2x/db", "/api/v3/db", "/API/v2/db", "/api/v2/_spec", "/api/v2/db/_spec",
		"/api/v2/%2F/x", "/api/v2/db?x=1",
	}
	methods := append([]string{"TRACE", "CONNECT", "PROPFIND", "get"}, serviceMethods...)
	for _, p := range paths {
		for _, m := range methods {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Method, r.URL.Path = m, p
			got = hit{}
			router.ServeHTTP(httptest.NewRecorder(), r)
			want := got
			name, resource, ok := servicePath(m, p)
			// What servicePath declines goes to the router: only an
			// empty service name may be declined and still be routed.
			taken := want.route == "service" && want.service != ""
			if ok != taken || ok && (name != want.service || resource != want.resource) {
				t.Errorf("%s %s: servicePath (%q, %q, %v), router %+v", m, p, name, resource, ok, want)
			}
		}
	}
}
