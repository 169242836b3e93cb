package identity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Messages of the session resources (DreamFactory's texts where it has
// one).
const (
	MsgMissingEmail       = "Login request is missing required email."
	MsgMissingPassword    = "Login request is missing required password."
	MsgInvalidCredentials = "Invalid credentials supplied."
	MsgRoleInactive       = "Role is not active."
	// MsgAdminOnUserLogin answers an administrator's credentials sent to
	// /user/session (the spec's Authentication item 4).
	MsgAdminOnUserLogin = "Login request is missing required email. Administrators sign in with POST /api/v2/system/admin/session."
	MsgNoSession        = "There is no valid session for the current request."
	MsgNoAdminSession   = "No user session found."
	MsgNotAuthorized    = "You are not authorized to perform this action."
	MsgNotConfirmed     = "Registration has not been confirmed. Confirm it with the code sent by e-mail: POST /api/v2/user/register with email and code."
	MsgThrottled        = "Too many failed login attempts. Try again in %d seconds."
)

// Response is the session response of the spec, field for field.
type Response struct {
	SessionToken    string       `json:"session_token"`
	SessionID       string       `json:"session_id"`
	ID              int64        `json:"id"`
	Name            string       `json:"name"`
	FirstName       string       `json:"first_name"`
	LastName        string       `json:"last_name"`
	Email           string       `json:"email"`
	IsSysAdmin      bool         `json:"is_sys_admin"`
	Role            string       `json:"role"`
	LastLoginDate   string       `json:"last_login_date"`
	TokenExpiryDate string       `json:"token_expiry_date"`
	Apps            []SessionApp `json:"apps"`
	// Ticket and TicketExpiry are always empty: Portcullis issues no
	// tickets (pass session_token as a query parameter where headers
	// cannot be set).
	Ticket       string `json:"ticket"`
	TicketExpiry string `json:"ticket_expiry"`
}

// SessionApp is one app listed in a session response (DreamFactory's
// SessionApp).
type SessionApp struct {
	ID                    int64  `json:"id"`
	Name                  string `json:"name"`
	Label                 string `json:"label"`
	Description           string `json:"description"`
	IsURLExternal         bool   `json:"is_url_external"`
	LaunchURL             string `json:"launch_url"`
	RequiresFullscreen    bool   `json:"requires_fullscreen"`
	AllowFullscreenToggle bool   `json:"allow_fullscreen_toggle"`
	ToggleLocation        string `json:"toggle_location"`
	IsDefault             bool   `json:"is_default"`
}

// Access is how a user's calls through an app are governed.
type Access struct {
	// Admin is true for an effective system administrator: is_sys_admin
	// and no user_to_app_to_role mapping (DreamFactory's restricted admins
	// are users with their mapped role).
	Admin bool
	// RoleID, RoleName and RoleActive describe the governing role; RoleID
	// is zero when none applies.
	RoleID     int64
	RoleName   string
	RoleActive bool
}

// Resolve returns the access of a user through an app: an effective
// administrator; else the user's role for the app (or, as DreamFactory
// does, any role mapped to the user); else the app's default role.
func (s *Engine) Resolve(userID int64, sysAdmin bool, appID int64) Access {
	snap := s.snapshot()
	if snap == nil {
		return Access{Admin: sysAdmin}
	}
	if rid, ok := snap.UserAppRole(userID, appID); ok {
		return roleAccess(snap, rid)
	}
	if sysAdmin {
		return Access{Admin: true}
	}
	if app := snap.App(appID); app != nil && app.RoleID != nil {
		return roleAccess(snap, *app.RoleID)
	}
	return Access{}
}

func roleAccess(snap *store.Snapshot, id int64) Access {
	r := snap.Role(id)
	if r == nil {
		return Access{}
	}
	return Access{RoleID: r.ID, RoleName: r.Name, RoleActive: r.IsActive}
}

func (s *Engine) snapshot() *store.Snapshot {
	if s.opts.Snapshot == nil {
		return nil
	}
	return s.opts.Snapshot()
}

// LandingURL is where a browser that signed in through another provider
// goes when it asked for nowhere (DreamFactory's default redirect URL):
// the launch URL of the app the caller was keyed with, when that is a page
// some server serves (a URL app's URL, a storage app's file). It is ""
// without an app, for apps without a launch URL and for path apps:
// Portcullis serves no page outside /api/v2, and the built-in apps' paths
// name DreamFactory's own interface.
func (s *Engine) LandingURL(ctx context.Context) string {
	snap := s.snapshot()
	if snap == nil {
		return ""
	}
	a := snap.App(appID(ctx))
	if a == nil || !a.IsActive || (a.Type != store.AppTypeStorage && a.Type != store.AppTypeURL) {
		return ""
	}
	return snap.LaunchURL(a)
}

// appID returns the app the caller was keyed with.
func appID(ctx context.Context) int64 {
	if id := caller.IdentityFrom(ctx); id != nil {
		return id.AppID
	}
	return 0
}

// SignedIn answers a sign-in, a session read or a refresh: the spec's
// session response and how long its token lives.
type SignedIn struct {
	// Response is the session response, field for field.
	Response Response
	// Browser marks a duration-0 session: it ends after
	// Options.BrowserIdle without use (keep the token in memory only).
	Browser bool
	// Lifetime is the token's lifetime (exp − iat).
	Lifetime time.Duration
}

// Login signs a user in with the fields email, password and duration (in
// minutes; 0 asks for a browser session). admin selects the
// administrators' sign-in, which admits administrators only; the users'
// sign-in refuses administrators with the spec's item-4 message. client
// is the caller's address for throttling (see ClientKey). The app is the
// one of the caller in ctx.
func (s *Engine) Login(ctx context.Context, admin bool, p Fields, client string) (*SignedIn, error) {
	email, err := p.str("email")
	if err != nil {
		return nil, err
	}
	password, err := p.str("password")
	if err != nil {
		return nil, err
	}
	if email = strings.TrimSpace(email); email == "" {
		return nil, invalid(MsgMissingEmail)
	}
	if password == "" {
		return nil, invalid(MsgMissingPassword)
	}
	ttl, browser, err := s.duration(p)
	if err != nil {
		return nil, err
	}
	keys := s.keys(client, email)
	if err := s.throttled(ctx, keys); err != nil {
		return nil, err
	}
	u, err := s.findUser(ctx, email)
	if err != nil {
		return nil, err
	}
	hash := ""
	if u != nil {
		hash = u.Password
	}
	good := store.CheckPassword(hash, password) && u != nil
	switch {
	case !good || !u.IsActive || (admin && !u.IsSysAdmin):
		return nil, s.failed(ctx, keys, u, "login failed")
	case !admin && u.IsSysAdmin:
		return nil, unauthenticated(MsgAdminOnUserLogin)
	case pendingConfirmation(u):
		return nil, unauthenticated(MsgNotConfirmed)
	}
	app := appID(ctx)
	acc := s.Resolve(u.ID, u.IsSysAdmin, app)
	if !acc.Admin && acc.RoleID != 0 && !acc.RoleActive {
		return nil, forbidden(MsgRoleInactive)
	}
	s.thr.Succeed(keys)
	iss, err := s.open(ctx, u, app, ttl, browser)
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "login", "user_id", u.ID, "admin", acc.Admin, "browser_session", browser)
	return s.respond(u, iss.token, iss.claims, acc, app), nil
}

// duration reads a login's `duration`: absent is the default lifetime, 0
// a browser session, else minutes up to MaxDuration.
func (s *Engine) duration(p Fields) (time.Duration, bool, error) {
	n, ok, err := p.int("duration")
	if err != nil {
		return 0, false, err
	}
	if !ok {
		return s.opts.TokenTTL, false, nil
	}
	maxMin := int64(s.opts.MaxDuration / time.Minute)
	if n < 0 || n > maxMin {
		return 0, false, invalid("Invalid value for field 'duration': give a whole number of minutes from 0 (until the browser closes) to %d.", maxMin)
	}
	if n == 0 {
		return s.opts.TokenTTL, true, nil
	}
	return time.Duration(n) * time.Minute, false, nil
}

// keys returns the throttle keys of an attempt on account email from the
// client address client.
func (s *Engine) keys(client, email string) Keys {
	return Keys{Account: strings.ToLower(strings.TrimSpace(email)), Address: client}
}

// throttled returns the 429 for keys that must wait.
func (s *Engine) throttled(ctx context.Context, keys Keys) error {
	d := s.thr.Wait(keys)
	if d <= 0 {
		return nil
	}
	secs := int64((d + time.Second - 1) / time.Second)
	s.log.WarnContext(ctx, "login throttled", "address", keys.Address, "retry_after_seconds", secs)
	e := newErr(Throttled, MsgThrottled, []any{secs})
	e.RetryAfter = time.Duration(secs) * time.Second
	return e
}

// failed counts a failed attempt and returns the 401.
func (s *Engine) failed(ctx context.Context, keys Keys, u *store.User, event string) error {
	d := s.thr.Fail(keys)
	attrs := []any{"address", keys.Address}
	if u != nil {
		attrs = append(attrs, "user_id", u.ID)
	}
	if d > 0 {
		attrs = append(attrs, "blocked_seconds", int64(d/time.Second))
	}
	s.log.WarnContext(ctx, event, attrs...)
	return unauthenticated(MsgInvalidCredentials)
}

// findUser returns the user whose e-mail is email: the exact match, else
// the only case-insensitive one; nil when none.
func (s *Engine) findUser(ctx context.Context, email string) (*store.User, error) {
	var users []store.User
	err := s.st.DB.NewSelect().Model(&users).
		Where("LOWER(email) = ?", strings.ToLower(email)).Limit(5).Scan(ctx)
	if err != nil && !store.IsNoRows(err) {
		return nil, dbUnavailable(fmt.Errorf("identity: find user: %w", err))
	}
	for i := range users {
		if users[i].Email == email {
			return &users[i], nil
		}
	}
	if len(users) == 1 {
		return &users[0], nil
	}
	return nil, nil
}

// userByID reads a user; nil when it does not exist.
func (s *Engine) userByID(ctx context.Context, db bun.IDB, id int64) (*store.User, error) {
	u := new(store.User)
	err := db.NewSelect().Model(u).Where("id = ?", id).Scan(ctx)
	if store.IsNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, dbUnavailable(fmt.Errorf("identity: read user: %w", err))
	}
	return u, nil
}

// open issues a token for a successful sign-in: it records the session,
// sets the user's last login date, clears a pending reset code and prunes
// the user's dead sessions.
func (s *Engine) open(ctx context.Context, u *store.User, app int64, ttl time.Duration, browser bool) (*issued, error) {
	iss, err := s.mint(ctx, u, app, ttl, browser)
	if err != nil {
		return nil, internal(err)
	}
	now := iss.row.IssuedAt
	err = s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(iss.row).Exec(ctx); err != nil {
			return fmt.Errorf("record session: %w", err)
		}
		q := tx.NewUpdate().Model((*store.User)(nil)).Set("last_login_date = ?", now).Where("id = ?", u.ID)
		if strings.HasPrefix(u.ConfirmCode, codeReset) {
			q = q.Set("confirm_code = NULL").Set("confirm_expiry = NULL")
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("set last login date: %w", err)
		}
		if _, err := tx.NewDelete().Model((*store.Session)(nil)).
			Where("user_id = ?", u.ID).
			WhereGroup(" AND ", func(q *bun.DeleteQuery) *bun.DeleteQuery {
				return q.Where("revoked = ?", true).WhereOr("expires_at < ?", now.Add(-s.opts.RefreshWindow))
			}).Exec(ctx); err != nil {
			return fmt.Errorf("prune sessions: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, internal(fmt.Errorf("identity: open session: %w", err))
	}
	u.LastLoginDate = &now
	if strings.HasPrefix(u.ConfirmCode, codeReset) {
		u.ConfirmCode, u.ConfirmExpiry = "", nil
	}
	return iss, nil
}

// respond builds the session answer for u's token.
func (s *Engine) respond(u *store.User, token string, c *Claims, acc Access, app int64) *SignedIn {
	exp := c.ExpiresAt.Time
	resp := Response{
		SessionToken: token, SessionID: token,
		ID: u.ID, Name: u.Name, FirstName: u.FirstName, LastName: u.LastName, Email: u.Email,
		IsSysAdmin: acc.Admin, Role: acc.RoleName,
		LastLoginDate: formatDate(u.LastLoginDate), TokenExpiryDate: formatDate(&exp),
		Apps: s.apps(u, acc, app),
	}
	return &SignedIn{Response: resp, Browser: c.BrowserSession, Lifetime: c.ExpiresAt.Sub(c.IssuedAt.Time)}
}

// apps lists the active apps of a session: every one for an
// administrator, else those with a role for the user (mapped, or the app's
// default role).
func (s *Engine) apps(u *store.User, acc Access, _ int64) []SessionApp {
	out := []SessionApp{}
	snap := s.snapshot()
	if snap == nil {
		return out
	}
	mapped := map[int64]bool{}
	for _, m := range snap.UserAppRoles {
		if m.UserID == u.ID {
			mapped[m.AppID] = true
		}
	}
	for _, a := range snap.Apps {
		if !a.IsActive {
			continue
		}
		if !acc.Admin && !mapped[a.ID] && a.RoleID == nil {
			continue
		}
		out = append(out, SessionApp{
			ID: a.ID, Name: a.Name, Label: a.Label, Description: a.Description,
			IsURLExternal: a.Type == store.AppTypeURL, LaunchURL: snap.LaunchURL(a),
			RequiresFullscreen: a.RequiresFullscreen, AllowFullscreenToggle: a.AllowFullscreenToggle,
			ToggleLocation: a.ToggleLocation,
			IsDefault:      u.DefaultAppID != nil && *u.DefaultAppID == a.ID,
		})
	}
	return out
}

// current returns the session of a request: token, verified, or (for
// inner calls that carry no token) the session named by the caller
// identity in ctx. nil when there is none.
func (s *Engine) current(ctx context.Context, tok string) (*Session, error) {
	if tok != "" {
		return s.Verify(ctx, tok)
	}
	id := caller.IdentityFrom(ctx)
	if !id.Authenticated() || id.SessionID == "" {
		return nil, nil
	}
	st, err := s.lookup(ctx, id.SessionID)
	if err != nil {
		return nil, err
	}
	if st.row == nil || st.row.Revoked || st.user == nil || !st.user.IsActive || st.user.ID != id.UserID {
		return nil, unauthenticated(MsgTokenRevoked)
	}
	out := &Session{ID: id.SessionID, User: st.user, IssuedAt: st.row.IssuedAt, ExpiresAt: st.row.ExpiresAt}
	if st.row.AppID != nil {
		out.AppID = *st.row.AppID
	}
	return out, nil
}

// requireSession returns the request's session and fresh user, or the
// 401 for its absence.
func (s *Engine) requireSession(ctx context.Context, tok string, admin bool) (*Session, *store.User, Access, error) {
	sess, err := s.current(ctx, tok)
	if err != nil {
		return nil, nil, Access{}, err
	}
	if sess == nil {
		if admin {
			return nil, nil, Access{}, unauthenticated(MsgNoAdminSession)
		}
		return nil, nil, Access{}, unauthenticated(MsgNoSession)
	}
	u, err := s.userByID(ctx, s.st.DB, sess.User.ID)
	if err != nil {
		return nil, nil, Access{}, err
	}
	if u == nil || !u.IsActive {
		return nil, nil, Access{}, unauthenticated(MsgUserNotVerified)
	}
	app := appID(ctx)
	if app == 0 {
		app = sess.AppID
	}
	acc := s.Resolve(u.ID, u.IsSysAdmin, app)
	if admin && !acc.Admin {
		return nil, nil, Access{}, forbidden(MsgNotAuthorized)
	}
	return sess, u, acc, nil
}

// SessionInfo returns the session of token (or, when token is "", of the
// caller in ctx), with the user, role and apps read afresh. The token is
// not rotated (Refresh does that): rotating on a read would break requests
// in flight with the old token.
func (s *Engine) SessionInfo(ctx context.Context, admin bool, token string) (*SignedIn, error) {
	sess, u, acc, err := s.requireSession(ctx, token, admin)
	if err != nil {
		return nil, err
	}
	if !acc.Admin && acc.RoleID != 0 && !acc.RoleActive {
		return nil, forbidden(MsgRoleInactive)
	}
	c := &Claims{BrowserSession: sess.Browser}
	c.IssuedAt, c.ExpiresAt = numericDate(sess.IssuedAt), numericDate(sess.ExpiresAt)
	app := appID(ctx)
	if app == 0 {
		app = sess.AppID
	}
	return s.respond(u, sess.Token, c, acc, app), nil
}

// Refresh exchanges token for a new one with the same lifetime; the old
// token is revoked. An expired token may be refreshed within
// Options.RefreshWindow of its issue, unless it was a browser session that
// ended.
func (s *Engine) Refresh(ctx context.Context, admin bool, tok string) (*SignedIn, error) {
	fail := func(reason string) *Error {
		return unauthenticated("Token refresh failed. %s", reason)
	}
	if tok == "" {
		return nil, fail("No session token (JWT) provided: send it in the X-Platform-Session-Token header or the session_token query parameter.")
	}
	c, err := s.parseExpired(ctx, tok)
	if err != nil {
		return nil, fail(asError(err).Message)
	}
	st, err := s.load(ctx, s.st.DB, c.ID)
	if err != nil {
		return nil, err
	}
	if err := s.check(ctx, c, st, true, s.now()); err != nil {
		return nil, fail(asError(err).Message)
	}
	u := st.user
	app := appID(ctx)
	if app == 0 && st.row.AppID != nil {
		app = *st.row.AppID
	}
	acc := s.Resolve(u.ID, u.IsSysAdmin, app)
	if admin && !acc.Admin {
		return nil, forbidden(MsgNotAuthorized)
	}
	if !acc.Admin && acc.RoleID != 0 && !acc.RoleActive {
		return nil, forbidden(MsgRoleInactive)
	}
	ttl := c.ExpiresAt.Sub(c.IssuedAt.Time)
	iss, err := s.mint(ctx, u, app, ttl, c.BrowserSession)
	if err != nil {
		return nil, internal(err)
	}
	err = s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := s.revoke(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		if !ok {
			return fail(MsgTokenRevoked)
		}
		if _, err := tx.NewInsert().Model(iss.row).Exec(ctx); err != nil {
			return fmt.Errorf("identity: record session: %w", err)
		}
		return nil
	})
	s.shared.cache.drop(c.ID)
	if err != nil {
		return nil, asError(err)
	}
	return s.respond(u, iss.token, iss.claims, acc, app), nil
}

// Logout ends the session of token (or, when token is "", of the caller in
// ctx) on every instance.
func (s *Engine) Logout(ctx context.Context, admin bool, token string) error {
	sess, err := s.current(ctx, token)
	if err != nil {
		return err
	}
	if sess == nil {
		if admin {
			return unauthenticated(MsgNoAdminSession)
		}
		return unauthenticated(MsgNoSession)
	}
	if _, err := s.revoke(ctx, s.st.DB, sess.ID); err != nil {
		return internal(err)
	}
	s.log.InfoContext(ctx, "logout", "user_id", sess.User.ID)
	return nil
}
