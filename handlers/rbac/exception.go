package rbac

import (
	"net/http"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// exception is one route every caller may use without a role.
type exception struct {
	typ      string          // service type
	resource string          // resource path, exactly as the backend routes it
	verbs    map[string]bool // nil: every verb
}

func verbs(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// exceptions are DreamFactory's access exceptions (df-system and df-user
// ServiceProvider), by service type rather than by service name.
var exceptions = []exception{
	{typ: TypeSystem, resource: "admin/session"},                                                                          // sign in, session, refresh, sign out
	{typ: TypeSystem, resource: "admin/password", verbs: verbs(http.MethodPost)},                                          // reset request and reset
	{typ: TypeSystem, resource: "environment", verbs: verbs(http.MethodGet)},                                              // read before signing in
	{typ: TypeUser, resource: "session"},                                                                                  // sign in, session, refresh, sign out
	{typ: TypeUser, resource: "password", verbs: verbs(http.MethodPost)},                                                  // reset and change
	{typ: TypeUser, resource: "register", verbs: verbs(http.MethodPost)},                                                  // open registration
	{typ: TypeUser, resource: "profile", verbs: verbs(http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch)}, // own profile
	{typ: "oidc", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                                         // OpenID Connect sign-in and callback
	{typ: "oauth_google", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                                 // OAuth 2.0 sign-in and callback
	{typ: "oauth_azure_ad", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                               // OAuth 2.0 sign-in and callback
	{typ: "oauth_microsoft-live", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                         // OAuth 2.0 sign-in and callback
	{typ: "oauth_github", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                                 // OAuth 2.0 sign-in and callback
	{typ: "oauth_generic", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                                // OAuth 2.0 sign-in and callback
	{typ: "oauth_linkedin", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                               // OAuth 2.0 sign-in and callback
	{typ: "oauth_bitbucket", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                              // OAuth 2.0 sign-in and callback
	{typ: "oauth_facebook", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                               // OAuth 2.0 sign-in and callback
	{typ: "saml", resource: "sso", verbs: verbs(http.MethodGet, http.MethodPost)},                                         // SAML sign-in start
	{typ: "saml", resource: "acs", verbs: verbs(http.MethodPost)},                                                         // SAML assertion consumer service
	{typ: "saml", resource: "metadata", verbs: verbs(http.MethodGet)},                                                     // SAML SP metadata
}

// AccessException reports whether t is one of the routes every caller may
// use without a role (DreamFactory's access exceptions; the package
// documentation lists them). The resource must be exactly the one the
// backend serves: "admin/session", not "admin//session" or "Admin/Session".
// The backends behind these routes check who is calling themselves (a
// session for a profile, a signed-in user for a password change).
func AccessException(t *service.Target) bool {
	if t == nil || t.Service == nil {
		return false
	}
	for _, e := range exceptionsByType[t.Service.Type] {
		if e.resource == t.Resource && (e.verbs == nil || e.verbs[t.Verb]) {
			return true
		}
	}
	return false
}

// exceptionsByType holds the exceptions by service type, so that a
// request to a type without any (every data service) looks at none.
var exceptionsByType = func() map[string][]*exception {
	m := map[string][]*exception{}
	for i := range exceptions {
		e := &exceptions[i]
		m[e.typ] = append(m[e.typ], e)
	}
	return m
}()
