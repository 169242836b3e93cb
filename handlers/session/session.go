package session

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/auth"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Options configures the stage.
type Options struct {
	// Auth verifies tokens and resolves roles; required.
	Auth *auth.Service
	// Bypass reports requests whose session token is ignored; nil means
	// LoginRoute.
	Bypass func(r *http.Request) bool
	// SetUser, when set, is told the signed-in user's id for the access
	// log (accesslog.SetUser).
	SetUser func(ctx context.Context, user string)
}

// LoginRoute reports the requests whose token the stage ignores: POST
// (login) and PUT (refresh) on the session resource of the system service
// (admin/session) or of a user service (session).
func LoginRoute(r *http.Request) bool {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return false
	}
	t := service.TargetFrom(r.Context())
	if t == nil || t.Service == nil {
		return false
	}
	switch t.Service.Type {
	case "system":
		return t.Resource == "admin/session"
	case "user":
		return t.Resource == "session"
	}
	return false
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Auth == nil {
		return nil, errors.New("session: Auth is required")
	}
	bypass := opts.Bypass
	if bypass == nil {
		bypass = LoginRoute
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			id := caller.IdentityFrom(ctx)
			if id.FromScript() || caller.Inner(ctx) || bypass(r) {
				next.ServeHTTP(w, r)
				return
			}
			tok := auth.TokenFromRequest(r)
			if tok == "" {
				next.ServeHTTP(w, r)
				return
			}
			nid, err := signIn(ctx, opts.Auth, id, tok)
			if err != nil {
				apierr.Write(w, err)
				return
			}
			if opts.SetUser != nil {
				opts.SetUser(ctx, strconv.FormatInt(nid.UserID, 10))
			}
			next.ServeHTTP(w, r.WithContext(caller.WithIdentity(ctx, nid)))
		})
	}, nil
}

// signIn verifies tok and returns id with the user added.
func signIn(ctx context.Context, a *auth.Service, id *caller.Identity, tok string) (*caller.Identity, error) {
	sess, err := a.Verify(ctx, tok)
	if err != nil {
		return nil, err
	}
	nid := &caller.Identity{Requestor: caller.API}
	if id != nil {
		c := *id
		nid = &c
	}
	u := sess.User
	nid.UserID, nid.UserEmail, nid.UserName, nid.SessionID = u.ID, u.Email, u.Name, sess.ID
	acc := a.Resolve(u.ID, u.IsSysAdmin, nid.AppID)
	switch {
	case acc.Admin:
		nid.Admin, nid.RoleID, nid.RoleName = true, 0, ""
	case acc.RoleID != 0 && !acc.RoleActive:
		return nil, apierr.Forbidden(auth.MsgRoleInactive)
	default:
		nid.Admin, nid.RoleID, nid.RoleName = false, acc.RoleID, acc.RoleName
	}
	return nid, nil
}
