package identity

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// MaxTokenLength bounds the size of a session token accepted for parsing.
const MaxTokenLength = 4096

// Claims are a session token's claims (DreamFactory's, plus
// browser_session).
type Claims struct {
	jwt.RegisteredClaims
	// UserID is the signed-in user's id.
	UserID int64 `json:"user_id"`
	// Forever is DreamFactory's remember-me flag; Portcullis never issues
	// such tokens.
	Forever bool `json:"forever"`
	// BrowserSession marks a duration-0 login: the session ends after
	// Options.BrowserIdle without use.
	BrowserSession bool `json:"browser_session,omitempty"`
}

// subject is DreamFactory's sub claim: the MD5 hex of the e-mail as stored.
func subject(email string) string {
	sum := md5.Sum([]byte(email))
	return hex.EncodeToString(sum[:])
}

// newJTI returns a random token id.
func newJTI() string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// issued is a freshly signed token and its record.
type issued struct {
	token  string
	claims *Claims
	row    *store.Session
}

// mint signs a new token for u valid for ttl (browser marks a duration-0
// session) and builds its session row; it writes nothing.
func (s *Engine) mint(ctx context.Context, u *store.User, appID int64, ttl time.Duration, browser bool) (*issued, error) {
	key, err := s.signingKey(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now().Truncate(time.Second)
	exp := now.Add(ttl)
	c := &Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			ID:        newJTI(),
			Subject:   subject(u.Email),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		UserID:         u.ID,
		BrowserSession: browser,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
	if err != nil {
		return nil, fmt.Errorf("identity: sign token: %w", err)
	}
	row := &store.Session{ID: c.ID, UserID: u.ID, IssuedAt: now, ExpiresAt: exp}
	if browser {
		row.ExpiresAt = minTime(now.Add(s.opts.BrowserIdle), exp)
	}
	if appID != 0 {
		a := appID
		row.AppID = &a
	}
	return &issued{token: tok, claims: c, row: row}, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// parse checks a token's signature, method and times (at now, s.now();
// a token verified before has only its times checked) and returns its
// claims. Errors are 401s with DreamFactory's messages.
func (s *Engine) parse(ctx context.Context, token string, now time.Time) (*Claims, error) {
	if err := wellFormed(token); err != nil {
		return nil, err
	}
	if c, ok := s.shared.parsed.get(token); ok {
		if err := s.timesValid(c, now); err != nil {
			return nil, err
		}
		return c, nil
	}
	key, err := s.signingKey(ctx)
	if err != nil {
		return nil, internal(err)
	}
	c := &Claims{}
	_, err = jwt.ParseWithClaims(token, c, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithStrictDecoding(),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(s.opts.Leeway),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return nil, unauthenticated(MsgTokenExpired)
		}
		return nil, invalidToken(err)
	}
	if err := c.complete(); err != nil {
		return nil, err
	}
	s.shared.parsed.put(token, c)
	return c, nil
}

// parseExpired is parse for refresh: the signature and method must hold
// and exp must be present, but an expired token is accepted while its iat
// is within the refresh window.
func (s *Engine) parseExpired(ctx context.Context, token string) (*Claims, error) {
	if err := wellFormed(token); err != nil {
		return nil, err
	}
	key, err := s.signingKey(ctx)
	if err != nil {
		return nil, internal(err)
	}
	c := &Claims{}
	_, err = jwt.ParseWithClaims(token, c, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithStrictDecoding(),
		jwt.WithoutClaimsValidation(),
	)
	if err != nil {
		return nil, invalidToken(err)
	}
	if c.ExpiresAt == nil {
		return nil, invalidToken(fmt.Errorf("%w: exp", jwt.ErrTokenRequiredClaimMissing))
	}
	if err := c.complete(); err != nil {
		return nil, err
	}
	now := s.now()
	if c.IssuedAt.Time.After(now.Add(s.opts.Leeway)) {
		return nil, invalidToken(jwt.ErrTokenUsedBeforeIssued)
	}
	if now.After(c.IssuedAt.Time.Add(s.opts.RefreshWindow)) {
		return nil, unauthenticated(MsgTokenExpired)
	}
	return c, nil
}

// complete checks the claims Portcullis requires besides exp.
func (c *Claims) complete() error {
	switch {
	case c.ID == "" || len(c.ID) > 64:
		return invalidToken(fmt.Errorf("%w: jti", jwt.ErrTokenRequiredClaimMissing))
	case c.IssuedAt == nil:
		return invalidToken(fmt.Errorf("%w: iat", jwt.ErrTokenRequiredClaimMissing))
	case c.Subject == "":
		return invalidToken(fmt.Errorf("%w: sub", jwt.ErrTokenRequiredClaimMissing))
	case c.UserID <= 0:
		return invalidToken(fmt.Errorf("%w: user_id", jwt.ErrTokenRequiredClaimMissing))
	}
	return nil
}

// wellFormed rejects tokens that cannot be JWTs before any work is done.
func wellFormed(token string) error {
	if token == "" {
		return invalidToken(jwt.ErrTokenMalformed)
	}
	if len(token) > MaxTokenLength {
		return invalidToken(fmt.Errorf("%w: token is longer than %d bytes", jwt.ErrTokenMalformed, MaxTokenLength))
	}
	if strings.Count(token, ".") != 2 {
		return invalidToken(fmt.Errorf("%w: token contains an invalid number of segments", jwt.ErrTokenMalformed))
	}
	return nil
}

// invalidToken is DreamFactory's 401 for a malformed or forged token. The
// library's messages name the failed check, never the token.
func invalidToken(err error) *Error {
	msg := err.Error()
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) {
		msg = jwt.ErrTokenSignatureInvalid.Error()
	}
	return unauthenticated("Invalid token: %s", msg).withCause(err)
}
