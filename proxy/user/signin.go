package user

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// HeaderSessionLifetime tells the client how long a new token lives:
// "browser" for a duration-0 login (keep the token in memory only), else
// its lifetime in minutes.
const HeaderSessionLifetime = "X-Platform-Session-Lifetime"

// SignIn puts the identity engine on the wire: the session, password,
// profile and register resources of a user service, or (admin) the
// administrators' admin/session, admin/password and admin/profile that the
// system service mounts. It also signs requests in for the session stage
// (Verify).
type SignIn struct {
	e     *identity.Engine
	admin bool
	// clientAddr returns the throttling address of a request; nil means
	// identity.ClientKey of its RemoteAddr.
	clientAddr func(r *http.Request) string
}

// NewSignIn returns the resources over e; admin selects the
// administrators' variants.
func NewSignIn(e *identity.Engine, admin bool) *SignIn { return &SignIn{e: e, admin: admin} }

// Engine returns the identity engine the resources call.
func (s *SignIn) Engine() *identity.Engine { return s.e }

func (s *SignIn) client(r *http.Request) string {
	if s.clientAddr != nil {
		return s.clientAddr(r)
	}
	return identity.ClientKey(r.RemoteAddr)
}

// Resource returns the handler of one sign-in resource (session,
// password, profile and, for users, register), and false for any other
// name.
func (s *SignIn) Resource(name string) (apierr.HandlerFunc, bool) {
	switch name {
	case "session":
		return s.Session(), true
	case "password":
		return s.Password(), true
	case "profile":
		return s.Profile(), true
	case "register":
		if !s.admin {
			return s.Register(), true
		}
	}
	return nil, false
}

// Session serves every verb of a session resource: POST logs in, GET
// returns the session, PUT refreshes the token, DELETE logs out; other
// verbs get 400.
func (s *SignIn) Session() apierr.HandlerFunc {
	login, info, refresh, logout := s.Login(), s.SessionInfo(), s.Refresh(), s.Logout()
	return func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodPost:
			return login(w, r)
		case http.MethodGet:
			return info(w, r)
		case http.MethodPut:
			return refresh(w, r)
		case http.MethodDelete:
			return logout(w, r)
		}
		return unsupported(r, "session")
	}
}

// Login signs a user in with e-mail and password (POST …/session, JSON or
// form body: email, password, duration in minutes; or the e-mail and
// password as HTTP Basic credentials when the body names neither). The administrators'
// variant admits administrators only; the users' refuses administrators
// with the spec's item-4 message. Any session token sent is ignored.
func (s *SignIn) Login() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodPost {
			return unsupported(r, "session")
		}
		p, err := readFields(r)
		if err != nil {
			return err
		}
		basicCredentials(r, p)
		in, err := s.e.Login(r.Context(), s.admin, p, s.client(r))
		return writeSession(w, in, err)
	}
}

// SessionInfo returns the session response for the token sent (GET
// …/session), with the user, role and apps read afresh. The token is not
// rotated (PUT does that).
func (s *SignIn) SessionInfo() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet {
			return unsupported(r, "session")
		}
		in, err := s.e.SessionInfo(r.Context(), s.admin, service.SessionToken(r))
		return writeSession(w, in, err)
	}
}

// Refresh exchanges the token sent (header or ?session_token=) for a new
// one with the same lifetime (PUT …/session); the old token is revoked.
func (s *SignIn) Refresh() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodPut {
			return unsupported(r, "session")
		}
		in, err := s.e.Refresh(r.Context(), s.admin, service.SessionToken(r))
		return writeSession(w, in, err)
	}
}

// Logout ends the session of the token sent (DELETE …/session) on every
// instance and answers {"success":true}.
func (s *SignIn) Logout() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodDelete {
			return unsupported(r, "session")
		}
		if err := s.e.Logout(r.Context(), s.admin, service.SessionToken(r)); err != nil {
			return APIError(err)
		}
		return writeJSON(w, identity.Answer{Success: true})
	}
}

// Password serves POST (PUT and PATCH alike) …/password:
//
//   - ?reset=true {email}: send a reset code by e-mail ({"success":true}),
//     or answer {"security_question":…} when the user has one;
//   - {email, code, new_password}: reset with the e-mailed code;
//   - {email, security_answer, new_password}: reset with the answer;
//   - {old_password, new_password} with a session: change the password.
//
// A reset or change revokes every session of the user; ?login=true opens a
// new one and adds its session_token.
func (s *SignIn) Password() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			return unsupported(r, "password")
		}
		p, err := readFields(r)
		if err != nil {
			return err
		}
		out, err := s.e.Password(r.Context(), identity.PasswordRequest{
			Admin: s.admin, Fields: p, Token: service.SessionToken(r), Client: s.client(r),
			Reset: boolParam(r, "reset"), Login: boolParam(r, "login"),
		})
		if err != nil {
			return APIError(err)
		}
		return writeJSON(w, out)
	}
}

// Profile serves …/profile: GET returns the signed-in user's profile; POST
// (PUT and PATCH alike) updates the fields sent and answers
// {"success":true}, with a new session_token when the e-mail changed.
func (s *SignIn) Profile() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodGet:
			out, err := s.e.Profile(r.Context(), s.admin, service.SessionToken(r))
			if err != nil {
				return APIError(err)
			}
			return writeJSON(w, out)
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			p, err := readFields(r)
			if err != nil {
				return err
			}
			out, err := s.e.UpdateProfile(r.Context(), s.admin, service.SessionToken(r), p)
			if err != nil {
				return APIError(err)
			}
			return writeJSON(w, out)
		}
		return unsupported(r, "profile")
	}
}

// Register serves POST (PUT and PATCH alike) /user/register when open
// registration is enabled, and 403 otherwise; {email, code} confirms a
// registration. ?login=true answers a session token.
func (s *SignIn) Register() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			return unsupported(r, "register")
		}
		if !s.e.RegistrationOpen() {
			return apierr.Forbidden(identity.MsgRegistrationClosed)
		}
		p, err := readFields(r)
		if err != nil {
			return err
		}
		out, err := s.e.Register(r.Context(), identity.RegisterRequest{Fields: p, Client: s.client(r), Login: boolParam(r, "login")})
		if err != nil {
			return APIError(err)
		}
		return writeJSON(w, out)
	}
}

// Verify signs the caller id in with a session token for the session
// stage (session.Verifier): it adds the user, and the administrator flag
// or role governing them through id's app.
func (s *SignIn) Verify(ctx context.Context, id *caller.Identity, token string) (*caller.Identity, error) {
	nid, err := s.e.SignIn(ctx, id, token)
	if err != nil {
		return nil, APIError(err)
	}
	return nid, nil
}

// VerifyBasic signs one request in with HTTP Basic credentials (e-mail and
// password) for the session stage (session.BasicVerifier), opening no
// session; attempts are throttled as logins are.
func (s *SignIn) VerifyBasic(r *http.Request, id *caller.Identity, email, password string) (*caller.Identity, error) {
	nid, err := s.e.SignInBasic(r.Context(), id, email, password, s.client(r))
	if err != nil {
		return nil, APIError(err)
	}
	return nid, nil
}

// basicCredentials fills p's email and password from the request's HTTP
// Basic credentials when the body sent neither.
func basicCredentials(r *http.Request, p identity.Fields) {
	if _, ok := p["email"]; ok {
		return
	}
	if _, ok := p["password"]; ok {
		return
	}
	if email, password, ok := r.BasicAuth(); ok {
		p["email"], p["password"] = email, password
	}
}

// APIError returns err, an identity engine's error, as the envelope's
// error with its status: the one mapping of identity.Kind to HTTP.
func APIError(err error) error {
	var e *identity.Error
	if !errors.As(err, &e) {
		return err
	}
	var out *apierr.Error
	switch e.Kind {
	case identity.Invalid:
		out = apierr.BadRequest("%s", e.Message)
	case identity.Unauthenticated:
		out = apierr.Unauthorized("%s", e.Message)
	case identity.Forbidden:
		out = apierr.Forbidden("%s", e.Message)
	case identity.NotFound:
		out = apierr.NotFound("%s", e.Message)
	case identity.Conflict:
		out = apierr.Conflict("%s", e.Message)
	case identity.Throttled:
		out = apierr.TooManyRequests("%s", e.Message)
		secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
		out.Header = http.Header{"Retry-After": []string{strconv.FormatInt(secs, 10)}}
	case identity.Unavailable:
		out = apierr.Unavailable("%s", e.Message)
	default:
		if e.Message == "" {
			return apierr.Internal(e.Err)
		}
		out = apierr.InternalMsg("%s", e.Message)
	}
	out.Err = e.Err
	if e.Context != nil {
		out.Context = e.Context
	}
	return out
}

// writeSession writes a session answer with its lifetime header.
func writeSession(w http.ResponseWriter, in *identity.SignedIn, err error) error {
	if err != nil {
		return APIError(err)
	}
	if in.Browser {
		w.Header().Set(HeaderSessionLifetime, "browser")
	} else {
		w.Header().Set(HeaderSessionLifetime, strconv.FormatInt(int64(in.Lifetime/time.Minute), 10))
	}
	return writeJSON(w, in.Response)
}

// ReadFields decodes a sign-in request's body as the session resource
// does: a JSON object, or a form when the content type says so.
func ReadFields(r *http.Request) (identity.Fields, error) { return readFields(r) }

// readFields decodes r's body as a JSON object, or as a form when the
// content type says so. An empty body is empty Fields.
func readFields(r *http.Request) (identity.Fields, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded", "multipart/form-data":
		var err error
		if mt == "multipart/form-data" {
			err = r.ParseMultipartForm(1 << 20)
		} else {
			err = r.ParseForm()
		}
		if err != nil {
			return nil, apierr.As(err)
		}
		p := identity.Fields{}
		for k, vs := range r.PostForm {
			if len(vs) > 0 {
				p[k] = vs[0]
			}
		}
		return p, nil
	}
	var raw any
	if err := apierr.DecodeJSON(r, &raw, true); err != nil {
		return nil, err
	}
	switch v := raw.(type) {
	case nil:
		return identity.Fields{}, nil
	case map[string]any:
		return identity.Fields(v), nil
	}
	return nil, apierr.BadRequest("The request body must be a JSON object.")
}

// boolParam reads a boolean query parameter as DreamFactory does
// (true/1/yes/on).
func boolParam(r *http.Request, name string) bool {
	switch strings.ToLower(strings.TrimSpace(r.URL.Query().Get(name))) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

// unsupported is DreamFactory's 400 for a verb a resource does not serve.
func unsupported(r *http.Request, resource string) error {
	return apierr.BadRequest("%s requests for resource '%s' are not currently supported.", r.Method, resource)
}

// writeJSON writes a 200 that must not be cached (it may carry a token).
// A failure to write to the client is not an API error and is dropped.
func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	_ = apierr.WriteJSON(w, http.StatusOK, v)
	return nil
}
