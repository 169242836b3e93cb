package apikey

import (
	"errors"
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Header names and the query parameter that carry an API key.
const (
	Header   = "X-Platform-API-Key"
	HeaderDF = "X-DreamFactory-API-Key"
	Query    = "api_key"
)

// keyHeaders are Header and HeaderDF in canonical form, read straight from
// the header map (Header.Get would canonicalize them on every request).
var keyHeaders = [...]string{http.CanonicalHeaderKey(Header), http.CanonicalHeaderKey(HeaderDF)}

// MaxKeyLength bounds the keys looked up; longer ones name no app.
const MaxKeyLength = 256

// Messages of the stage (DreamFactory's texts, Portcullis's header names).
const (
	MsgNoCredentials = "No session token (JWT) or API Key detected in request. Please send in X-Platform-Session-Token and/or X-Platform-API-Key request header. You can also use URL query parameters session_token and/or api_key."
	MsgNoKey         = "No API Key provided. Please provide a valid API Key using X-Platform-API-Key request header or 'api_key' url query parameter."
	MsgUnknownKey    = "Invalid API Key: the key supplied is not tied to any app."
	MsgAppInactive   = "App is not active."
)

// App is what the stage needs to know about an app.
type App struct {
	ID     int64
	Name   string
	APIKey string
	Active bool
	// RoleID and RoleName name the app's default role; zero for none.
	RoleID   int64
	RoleName string
}

// AppLookup finds the app whose API key is key.
type AppLookup interface {
	LookupApp(key string) (App, bool)
}

// Static is an AppLookup over a fixed set of apps, for embedders that keep
// their configuration in Go.
type Static map[string]App

// NewStatic returns a Static holding apps, keyed by their APIKey.
func NewStatic(apps ...App) Static {
	s := make(Static, len(apps))
	for _, a := range apps {
		s[a.APIKey] = a
	}
	return s
}

// LookupApp implements AppLookup.
func (s Static) LookupApp(key string) (App, bool) {
	a, ok := s[key]
	return a, ok
}

// Options configures the stage.
type Options struct {
	// Apps finds apps by key; required.
	Apps AppLookup
	// Keyless reports the requests that may come without a key; they go on
	// as an API caller with no app and no role (an access exception or a
	// session token can still let them through). Nil: every request needs
	// a key, as the spec says. A key that is sent is always checked.
	Keyless func(r *http.Request) bool
}

// DreamFactoryKeyless is DreamFactory's rule for Options.Keyless: admin and
// user login, registration and the password calls (reset, and a change
// made with a session token), and any request that carries a session
// token, need no key. The request's service and resource come from its
// service.Target (requests without one need a key unless they carry a
// token).
func DreamFactoryKeyless(r *http.Request) bool {
	if HasSessionToken(r) {
		return true
	}
	if r.Method != http.MethodPost {
		return false
	}
	t := service.TargetFrom(r.Context())
	if t == nil || t.Service == nil {
		return false
	}
	switch t.Service.Type {
	case "system":
		return t.Resource == "admin/session" || t.Resource == "admin/password"
	case "user":
		return t.Resource == "session" || t.Resource == "register" || t.Resource == "password"
	}
	return false
}

// KeyFromRequest returns the API key r carries: header X-Platform-API-Key,
// X-DreamFactory-API-Key, or query parameter api_key; "" when none.
func KeyFromRequest(r *http.Request) string {
	for _, h := range keyHeaders {
		if vs := r.Header[h]; len(vs) > 0 {
			if v := strings.TrimSpace(vs[0]); v != "" {
				return v
			}
		}
	}
	return strings.TrimSpace(r.URL.Query().Get(Query))
}

// HasSessionToken reports whether r carries anything that looks like a
// session token (header, bearer or query parameter).
func HasSessionToken(r *http.Request) bool {
	if r.Header.Get("X-Platform-Session-Token") != "" || r.Header.Get("X-DreamFactory-Session-Token") != "" {
		return true
	}
	if v := r.Header.Get("Authorization"); len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return true
	}
	return r.URL.Query().Get("session_token") != ""
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Apps == nil {
		return nil, errors.New("apikey: Apps is required")
	}
	apps := opts.Apps
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			// An inner call carries an identity (caller.Inner): without
			// one the marker is not looked up (a walk up the context).
			if id := caller.IdentityFrom(ctx); id != nil && (id.FromScript() || caller.Inner(ctx)) {
				next.ServeHTTP(w, r)
				return
			}
			st, fresh := caller.Ensure(ctx)
			id, err := identify(st, apps, opts.Keyless, r)
			if err != nil {
				apierr.Write(w, err)
				return
			}
			st.SetIdentity(id)
			if fresh {
				r = r.WithContext(st)
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// identify checks the key r carries and returns the caller it names,
// held in the room of st.
func identify(st *caller.State, apps AppLookup, keyless func(*http.Request) bool, r *http.Request) (*caller.Identity, error) {
	key := KeyFromRequest(r)
	if key == "" {
		if keyless != nil && keyless(r) {
			id := st.NewIdentity()
			id.Requestor = caller.API
			return id, nil
		}
		if HasSessionToken(r) {
			return nil, apierr.Unauthorized(MsgNoKey)
		}
		return nil, apierr.Unauthorized(MsgNoCredentials)
	}
	if len(key) > MaxKeyLength {
		return nil, apierr.Unauthorized(MsgUnknownKey)
	}
	app, ok := apps.LookupApp(key)
	if !ok || !identity.SecretsEqual(app.APIKey, key) {
		return nil, apierr.Unauthorized(MsgUnknownKey)
	}
	if !app.Active {
		return nil, apierr.Forbidden(MsgAppInactive)
	}
	id := st.NewIdentity()
	*id = caller.Identity{
		AppID: app.ID, AppName: app.Name,
		RoleID: app.RoleID, RoleName: app.RoleName,
		Requestor: caller.API,
	}
	return id, nil
}
