package identity

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// ThrottleOptions configures a Throttle. Zero fields take the defaults
// shown.
type ThrottleOptions struct {
	// AccountFree is how many failures an account may have in Window
	// before delays start (5).
	AccountFree int
	// AddressFree is the same for one client address (20).
	AddressFree int
	// Window forgets a key's failures this long after its last one (1 h).
	Window time.Duration
	// Base is the first delay (1 s); each further failure doubles it.
	Base time.Duration
	// Max caps the delay (15 min).
	Max time.Duration
	// MaxKeys bounds memory (100 000 keys); past it, new keys are not
	// tracked until old ones expire.
	MaxKeys int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Throttle slows down password guessing: it counts failures per account
// and per client address and blocks a key, for a delay that doubles with
// each failure past the free ones, until the delay has passed. It is safe
// for concurrent use.
type Throttle struct {
	opts ThrottleOptions
	mu   sync.Mutex
	keys map[string]*throttleEntry
}

type throttleEntry struct {
	failures int
	last     time.Time
	until    time.Time
}

// NewThrottle returns a Throttle.
func NewThrottle(opts ThrottleOptions) *Throttle {
	if opts.AccountFree <= 0 {
		opts.AccountFree = 5
	}
	if opts.AddressFree <= 0 {
		opts.AddressFree = 20
	}
	if opts.Window <= 0 {
		opts.Window = time.Hour
	}
	if opts.Base <= 0 {
		opts.Base = time.Second
	}
	if opts.Max <= 0 {
		opts.Max = 15 * time.Minute
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 100_000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Throttle{opts: opts, keys: map[string]*throttleEntry{}}
}

// Keys are the throttle keys of one attempt.
type Keys struct {
	// Account is the lowercased e-mail tried ("" for none).
	Account string
	// Address is the client address ("" for none).
	Address string
}

func (k Keys) list() []string {
	var out []string
	if k.Account != "" {
		out = append(out, "acct\x00"+k.Account)
	}
	if k.Address != "" {
		out = append(out, "addr\x00"+k.Address)
	}
	return out
}

// Wait returns how long the attempt must wait; zero means go ahead.
func (t *Throttle) Wait(k Keys) time.Duration {
	now := t.opts.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, key := range k.list() {
		e, ok := t.keys[key]
		if !ok {
			continue
		}
		if d := e.until.Sub(now); d > wait {
			wait = d
		}
	}
	return wait
}

// Fail counts a failed attempt and returns the delay now imposed (zero
// while failures are free).
func (t *Throttle) Fail(k Keys) time.Duration {
	now := t.opts.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, key := range k.list() {
		e, ok := t.keys[key]
		if ok && now.Sub(e.last) > t.opts.Window {
			e.failures = 0
		}
		if !ok {
			if len(t.keys) >= t.opts.MaxKeys {
				t.sweep(now)
				if len(t.keys) >= t.opts.MaxKeys {
					continue
				}
			}
			e = &throttleEntry{}
			t.keys[key] = e
		}
		e.failures++
		e.last = now
		free := t.opts.AccountFree
		if strings.HasPrefix(key, "addr\x00") {
			free = t.opts.AddressFree
		}
		if over := e.failures - free; over > 0 {
			d := t.opts.Base
			for i := 1; i < over && d < t.opts.Max; i++ {
				d *= 2
			}
			d = min(d, t.opts.Max)
			e.until = now.Add(d)
			wait = max(wait, d)
		}
	}
	return wait
}

// Succeed forgets the account's failures after a successful sign-in. The
// address keeps its count, so one valid account does not let an address
// spray passwords at others.
func (t *Throttle) Succeed(k Keys) {
	if k.Account == "" {
		return
	}
	t.mu.Lock()
	delete(t.keys, "acct\x00"+k.Account)
	t.mu.Unlock()
}

// sweep drops keys whose window and block have passed. t.mu is held.
func (t *Throttle) sweep(now time.Time) {
	for key, e := range t.keys {
		if now.Sub(e.last) > t.opts.Window && now.After(e.until) {
			delete(t.keys, key)
		}
	}
}

// ClientKey returns the throttling address of a client whose address is
// remoteAddr (host:port, as http.Request.RemoteAddr): the host, IPv6
// addresses grouped by their /64.
func ClientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, err := ip.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return ip.String()
}
