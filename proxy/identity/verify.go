package identity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Messages of the session-token checks (DreamFactory's texts; revoked
// tokens are 401 here, where DreamFactory answers 403).
const (
	MsgTokenExpired    = "Token has expired: Session expired. Please refresh your token (if still within refresh window) or re-login."
	MsgTokenRevoked    = "The token has been blacklisted: Session terminated. Please re-login."
	MsgUserNotVerified = "Invalid token: User verification failed."
)

// Session is a verified session token: who it signs in and until when.
type Session struct {
	// ID is the token's jti (the session table's key).
	ID string
	// Token is the token itself.
	Token string
	// User is the signed-in user as last read from the store (at most
	// Options.CacheTTL old). Treat it as read-only.
	User *store.User
	// AppID is the app the session was opened through (0: none).
	AppID int64
	// IssuedAt and ExpiresAt are the token's iat and exp.
	IssuedAt, ExpiresAt time.Time
	// Browser marks a duration-0 session.
	Browser bool
}

// Verify checks a session token completely: signature, method, expiry, its
// session row (not revoked, not idle past its browser-session limit), and
// its user (exists, active, same e-mail, not issued before the user's
// TokensValidAfter). Errors are *Error 401s with DreamFactory's
// messages. The row and user are cached for Options.CacheTTL.
func (s *Engine) Verify(ctx context.Context, token string) (*Session, error) {
	c, st, err := s.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	return s.session(token, c, st), nil
}

// verify is Verify without building the Session: the token's claims and
// its row and user as checked.
func (s *Engine) verify(ctx context.Context, token string) (*Claims, *rowState, error) {
	now := s.now() // one reading for the token's and the row's times
	c, err := s.parse(ctx, token, now)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.lookup(ctx, c.ID)
	if err != nil {
		return nil, nil, err
	}
	if err := s.check(ctx, c, st, false, now); err != nil {
		return nil, nil, err
	}
	return c, st, nil
}

func (s *Engine) session(token string, c *Claims, st *rowState) *Session {
	out := &Session{ID: c.ID, Token: token, User: st.user, IssuedAt: c.IssuedAt.Time.UTC(),
		ExpiresAt: c.ExpiresAt.Time.UTC(), Browser: c.BrowserSession}
	if st.row.AppID != nil {
		out.AppID = *st.row.AppID
	}
	return out
}

// rowState is what the cache keeps per token: its row and user as read.
type rowState struct {
	row  *store.Session // nil when the row does not exist
	user *store.User    // nil when the user does not exist
	sub  string         // the subject a token of user carries (see subject)
	at   time.Time      // when it was read (real time)
}

// lookup returns the token's row and user, from the cache when fresh.
func (s *Engine) lookup(ctx context.Context, jti string) (*rowState, error) {
	if s.opts.CacheTTL > 0 {
		if st, ok := s.shared.cache.get(jti, s.opts.CacheTTL); ok {
			return st, nil
		}
	}
	st, err := s.load(ctx, s.st.DB, jti)
	if err != nil {
		return nil, err
	}
	if s.opts.CacheTTL > 0 {
		s.shared.cache.put(jti, st)
	}
	return st, nil
}

// load reads a token's row and user.
func (s *Engine) load(ctx context.Context, db bun.IDB, jti string) (*rowState, error) {
	st := &rowState{at: time.Now()}
	row := new(store.Session)
	err := db.NewSelect().Model(row).Where("id = ?", jti).Scan(ctx)
	switch {
	case store.IsNoRows(err):
		return st, nil
	case err != nil:
		return nil, unavailable("The system database is unavailable; try again.").withCause(fmt.Errorf("identity: read session: %w", err))
	}
	st.row = row
	u := new(store.User)
	err = db.NewSelect().Model(u).Where("id = ?", row.UserID).Scan(ctx)
	switch {
	case store.IsNoRows(err):
	case err != nil:
		return nil, unavailable("The system database is unavailable; try again.").withCause(fmt.Errorf("identity: read user: %w", err))
	default:
		st.user, st.sub = u, subject(u.Email)
	}
	return st, nil
}

// check applies the row and user conditions to verified claims at now
// (s.now()). With refresh set, an expired browser session is reported as
// ended.
func (s *Engine) check(ctx context.Context, c *Claims, st *rowState, refresh bool, now time.Time) error {
	row, u := st.row, st.user
	if row == nil || row.Revoked || row.UserID != c.UserID {
		return unauthenticated(MsgTokenRevoked)
	}
	if u == nil || !u.IsActive || !SecretsEqual(st.sub, c.Subject) {
		return unauthenticated(MsgUserNotVerified)
	}
	if u.TokensValidAfter != nil && c.IssuedAt.Time.Before(u.TokensValidAfter.Truncate(time.Second)) {
		return unauthenticated(MsgTokenRevoked)
	}
	if c.BrowserSession {
		if !now.Before(row.ExpiresAt) {
			return unauthenticated(MsgTokenExpired)
		}
		if !refresh {
			s.slide(ctx, row, c, now)
		}
	} else if !refresh && !now.Before(row.ExpiresAt.Add(s.opts.Leeway)) {
		return unauthenticated(MsgTokenExpired)
	}
	return nil
}

// slide moves a browser session's idle deadline forward, at most once a
// minute per session, never past the token's exp.
func (s *Engine) slide(ctx context.Context, row *store.Session, c *Claims, now time.Time) {
	next := minTime(now.Add(s.opts.BrowserIdle), c.ExpiresAt.Time).Truncate(time.Second)
	if next.Sub(row.ExpiresAt) < time.Minute {
		return
	}
	_, err := s.st.DB.NewUpdate().Model((*store.Session)(nil)).
		Set("expires_at = ?", next).
		Where("id = ?", row.ID).Where("revoked = ?", false).Exec(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "could not extend browser session", "user_id", row.UserID, "error", err)
		return
	}
	s.shared.cache.drop(row.ID)
}

// revoke marks one session row revoked and forgets it locally.
func (s *Engine) revoke(ctx context.Context, db bun.IDB, jti string) (bool, error) {
	res, err := db.NewUpdate().Model((*store.Session)(nil)).
		Set("revoked = ?", true).
		Where("id = ?", jti).Where("revoked = ?", false).Exec(ctx)
	s.shared.cache.drop(jti)
	if err != nil {
		return false, fmt.Errorf("identity: revoke session: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("identity: revoke session: %w", err)
	}
	return n == 1, nil
}

// revokeUser revokes every session of a user: its rows, and (by moving
// TokensValidAfter) any token a row could not name.
func (s *Engine) revokeUser(ctx context.Context, db bun.IDB, userID int64, at time.Time) error {
	at = at.UTC().Truncate(time.Second)
	if _, err := db.NewUpdate().Model((*store.Session)(nil)).
		Set("revoked = ?", true).
		Where("user_id = ?", userID).Where("revoked = ?", false).Exec(ctx); err != nil {
		return fmt.Errorf("identity: revoke sessions: %w", err)
	}
	if _, err := db.NewUpdate().Model((*store.User)(nil)).
		Set("tokens_valid_after = ?", at).
		Where("id = ?", userID).Exec(ctx); err != nil {
		return fmt.Errorf("identity: revoke sessions: %w", err)
	}
	s.shared.cache.dropUser(userID)
	return nil
}

// RevokeUser ends every session of a user on every instance (within
// Options.CacheTTL elsewhere). The system backend calls it when an
// administrator deactivates or deletes a user or sets a password.
func (s *Engine) RevokeUser(ctx context.Context, userID int64) error {
	return s.revokeUser(ctx, s.st.DB, userID, s.now())
}

// verifyCache keeps recent row and user reads per jti.
type verifyCache struct {
	mu sync.RWMutex
	m  map[string]*rowState
}

const maxCacheEntries = 100_000

func newVerifyCache() *verifyCache { return &verifyCache{m: map[string]*rowState{}} }

// get returns a fresh entry. Stale entries stay until put replaces them
// or a sweep drops them, so that readers share the lock.
func (c *verifyCache) get(jti string, ttl time.Duration) (*rowState, bool) {
	c.mu.RLock()
	st, ok := c.m[jti]
	c.mu.RUnlock()
	if !ok || time.Since(st.at) >= ttl {
		return nil, false
	}
	return st, true
}

func (c *verifyCache) put(jti string, st *rowState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCacheEntries {
		for k, v := range c.m {
			if time.Since(v.at) >= time.Minute || len(c.m) >= maxCacheEntries {
				delete(c.m, k)
			}
		}
	}
	c.m[jti] = st
}

func (c *verifyCache) drop(jti string) {
	c.mu.Lock()
	delete(c.m, jti)
	c.mu.Unlock()
}

func (c *verifyCache) dropUser(userID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		if v.row == nil || v.row.UserID == userID {
			delete(c.m, k)
		}
	}
}

// SignIn verifies token and returns a copy of id (nil: an API caller with
// no app) with the session's user added, and the administrator flag or the
// role that governs the user through id's app. A role that is not active
// is Forbidden.
func (s *Engine) SignIn(ctx context.Context, id *caller.Identity, token string) (*caller.Identity, error) {
	c, st, err := s.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	return s.callerAs(ctx, id, st.user, c.ID)
}

// callerAs returns a copy of id (nil: an API caller with no app) as user
// u in session sessionID ("" for a request signed in by itself), with the
// administrator flag or the role that governs u through id's app. A role
// that is not active is Forbidden. The copy is held in the room of the
// request's caller.State when ctx is one.
func (s *Engine) callerAs(ctx context.Context, id *caller.Identity, u *store.User, sessionID string) (*caller.Identity, error) {
	nid := caller.StateFrom(ctx).NewIdentity()
	if id != nil {
		*nid = *id
	} else {
		nid.Requestor = caller.API
	}
	nid.UserID, nid.UserEmail, nid.UserName, nid.SessionID = u.ID, u.Email, u.Name, sessionID
	acc := s.Resolve(u.ID, u.IsSysAdmin, nid.AppID)
	switch {
	case acc.Admin:
		nid.Admin, nid.RoleID, nid.RoleName = true, 0, ""
	case acc.RoleID != 0 && !acc.RoleActive:
		return nil, forbidden(MsgRoleInactive)
	default:
		nid.Admin, nid.RoleID, nid.RoleName = false, acc.RoleID, acc.RoleName
	}
	return nid, nil
}
