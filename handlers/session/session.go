package session

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Verifier signs a caller in with a session token. The identity engine
// does it through user.SignIn.Verify; a stack with no system database
// brings its own (see examples/sessions).
type Verifier interface {
	// Verify checks token and returns a copy of id (nil: an API caller
	// with no app) with the user, session id, administrator flag and role
	// added. Its errors are written as they are: an *apierr.Error (401 for
	// a bad token, 403 for an inactive role), anything else a 500.
	Verify(ctx context.Context, id *caller.Identity, token string) (*caller.Identity, error)
}

// BasicVerifier signs one request in with HTTP Basic credentials
// (Authorization: Basic) when no session token is sent. The identity
// engine does it through user.SignIn.VerifyBasic.
type BasicVerifier interface {
	// VerifyBasic checks the user name (an e-mail) and password and returns
	// a copy of id with the user added, as Verify does; its errors are
	// written as they are.
	VerifyBasic(r *http.Request, id *caller.Identity, username, password string) (*caller.Identity, error)
}

// Options configures the stage.
type Options struct {
	// Verifier checks tokens and resolves roles; required.
	Verifier Verifier
	// Basic, when set, signs requests without a session token in with
	// their HTTP Basic credentials; nil ignores Authorization: Basic.
	Basic BasicVerifier
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
	if opts.Verifier == nil {
		return nil, errors.New("session: Verifier is required")
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
			tok := service.SessionToken(r)
			var nid *caller.Identity
			var err error
			switch {
			case tok != "":
				nid, err = opts.Verifier.Verify(ctx, id, tok)
			case opts.Basic != nil:
				name, password, ok := r.BasicAuth()
				if !ok {
					next.ServeHTTP(w, r)
					return
				}
				nid, err = opts.Basic.VerifyBasic(r, id, name, password)
			default:
				next.ServeHTTP(w, r)
				return
			}
			if err != nil {
				apierr.Write(w, err)
				return
			}
			if opts.SetUser != nil {
				opts.SetUser(ctx, strconv.FormatInt(nid.UserID, 10))
			}
			st, fresh := caller.Ensure(ctx)
			st.SetIdentity(nid)
			if fresh {
				r = r.WithContext(st)
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}
