package identity

import (
	"context"
	"strings"
	"time"
)

// AttemptKeys returns the throttle keys of a sign-in another service
// checks (an LDAP bind): account is the name tried, qualified by the
// service so that it never shares a count with an e-mail address; client
// is the caller's address (see ClientKey).
func AttemptKeys(service, account, client string) Keys {
	k := Keys{Address: client}
	if account = strings.TrimSpace(account); account != "" {
		k.Account = strings.ToLower("svc:" + service + ":" + account)
	}
	return k
}

// CheckAttempt returns the 429 (Throttled) for an attempt on keys that
// must wait, as a password login does; nil when it may go ahead.
func (s *Engine) CheckAttempt(ctx context.Context, keys Keys) error {
	return s.throttled(ctx, keys)
}

// FailAttempt counts a failed attempt on keys (wrong credentials), logs
// it without the credentials, and returns the 401 with message.
func (s *Engine) FailAttempt(ctx context.Context, keys Keys, message string) error {
	_ = s.failed(ctx, keys, nil, "external sign-in failed")
	return unauthenticated("%s", message)
}

// SucceedAttempt forgets the account's failures after a successful
// check (the address keeps its count, as for passwords).
func (s *Engine) SucceedAttempt(keys Keys) { s.thr.Succeed(keys) }

// LoginDuration reads a login's `duration` field as a password login
// does: absent is the default lifetime, 0 a browser session, else minutes
// up to Options.MaxDuration (400 beyond).
func (s *Engine) LoginDuration(p Fields) (lifetime time.Duration, browser bool, err error) {
	return s.duration(p)
}
