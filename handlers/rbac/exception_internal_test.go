package rbac

import (
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TestAccessExceptionMatchesList checks AccessException, which looks the
// exceptions up by service type, against a scan of the whole list for
// every type, resource and verb the list names and a few it does not.
func TestAccessExceptionMatchesList(t *testing.T) {
	scan := func(tg *service.Target) bool {
		for _, e := range exceptions {
			if e.typ == tg.Service.Type && e.resource == tg.Resource && (e.verbs == nil || e.verbs[tg.Verb]) {
				return true
			}
		}
		return false
	}
	types := map[string]bool{"sqlite": true, "pgsql": true, "": true}
	resources := map[string]bool{"": true, "_table/x": true, "Admin/Session": true, "admin//session": true}
	for _, e := range exceptions {
		types[e.typ], resources[e.resource] = true, true
	}
	verbs := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodHead, http.MethodOptions, "get"}
	yes := 0
	for typ := range types {
		for res := range resources {
			for _, v := range verbs {
				tg := &service.Target{Service: &store.Service{Name: "s", Type: typ}, Resource: res, Verb: v}
				got, want := AccessException(tg), scan(tg)
				if got != want {
					t.Errorf("AccessException(%s %s %s) = %v, want %v", typ, res, v, got, want)
				}
				if got {
					yes++
				}
			}
		}
	}
	if yes < len(exceptions) {
		t.Errorf("only %d exceptions found for %d entries", yes, len(exceptions))
	}
	if AccessException(nil) || AccessException(&service.Target{}) {
		t.Error("a target without a service is an exception")
	}
}
