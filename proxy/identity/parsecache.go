package identity

import (
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// maxParsed bounds the cache of verified tokens; when it is full the cache
// starts again empty (tokens are re-verified once, nothing is lost).
const maxParsed = 10000

// parsedCache remembers the claims of tokens whose signature, method and
// required claims have been checked, keyed by the exact token text, so a
// session used for many requests pays for HMAC and base64 decoding once.
// Only the time checks are redone on a hit. The signing key never changes
// while a process runs (it is read once from the store), so an entry stays
// as valid as the signature it records. Cached claims are read-only.
type parsedCache struct {
	mu sync.RWMutex
	m  map[string]*Claims
}

func newParsedCache() *parsedCache { return &parsedCache{m: map[string]*Claims{}} }

func (p *parsedCache) get(token string) (*Claims, bool) {
	p.mu.RLock()
	c, ok := p.m[token]
	p.mu.RUnlock()
	return c, ok
}

func (p *parsedCache) put(token string, c *Claims) {
	p.mu.Lock()
	if len(p.m) >= maxParsed {
		p.m = make(map[string]*Claims, maxParsed/4)
	}
	p.m[token] = c
	p.mu.Unlock()
}

// timesValid redoes, at now, the time checks jwt.ParseWithClaims made:
// exp (with leeway), and iat and nbf not in the future.
func (s *Engine) timesValid(c *Claims, now time.Time) error {
	if c.ExpiresAt == nil || !now.Before(c.ExpiresAt.Time.Add(s.opts.Leeway)) {
		return unauthenticated(MsgTokenExpired)
	}
	if c.IssuedAt != nil && now.Add(s.opts.Leeway).Before(c.IssuedAt.Time) {
		return invalidToken(jwt.ErrTokenUsedBeforeIssued)
	}
	if c.NotBefore != nil && now.Add(s.opts.Leeway).Before(c.NotBefore.Time) {
		return invalidToken(jwt.ErrTokenNotValidYet)
	}
	return nil
}
