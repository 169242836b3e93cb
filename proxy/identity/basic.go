package identity

import (
	"context"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// SignInBasic signs a single request in with an e-mail and password (HTTP
// Basic credentials sent with it) and returns a copy of id (nil: an API
// caller with no app) with the user, administrator flag and role added, as
// SignIn does for a token. No session is opened: SessionID stays empty.
// Attempts are throttled as for Login (client is the caller's address);
// wrong credentials, an inactive or unconfirmed user are the 401 of a
// failed login, an inactive role Forbidden.
func (s *Engine) SignInBasic(ctx context.Context, id *caller.Identity, email, password, client string) (*caller.Identity, error) {
	u, err := s.checkPassword(ctx, email, password, client)
	if err != nil {
		return nil, err
	}
	return s.callerAs(ctx, id, u, "")
}

// checkPassword returns the active, confirmed user whose credentials these
// are, counting the attempt for throttling.
func (s *Engine) checkPassword(ctx context.Context, email, password, client string) (*store.User, error) {
	if email = strings.TrimSpace(email); email == "" {
		return nil, invalid(MsgMissingEmail)
	}
	if password == "" {
		return nil, invalid(MsgMissingPassword)
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
	if !store.CheckPassword(hash, password) || u == nil || !u.IsActive {
		return nil, s.failed(ctx, keys, u, "basic sign-in failed")
	}
	if pendingConfirmation(u) {
		return nil, unauthenticated(MsgNotConfirmed)
	}
	s.thr.Succeed(keys)
	return u, nil
}
