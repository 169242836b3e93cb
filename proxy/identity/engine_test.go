package identity

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestThrottle(t *testing.T) {
	t.Parallel()
	c := newClock()
	th := NewThrottle(ThrottleOptions{AccountFree: 3, AddressFree: 5, Window: time.Hour, Base: time.Second, Max: 8 * time.Second, Now: c.Now})
	k := Keys{Account: "a@x", Address: "10.0.0.1"}

	var delays []time.Duration
	for range 8 {
		if w := th.Wait(k); w != 0 {
			t.Fatalf("attempt refused while the previous delay has passed: %v", w)
		}
		d := th.Fail(k)
		delays = append(delays, d)
		c.Advance(d)
	}
	want := []time.Duration{0, 0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
	th.Fail(k)
	if w := th.Wait(k); w != 8*time.Second {
		t.Errorf("wait while blocked = %v", w)
	}
	// The address stays blocked for another account; the account for
	// another address.
	if w := th.Wait(Keys{Account: "b@x", Address: "10.0.0.1"}); w == 0 {
		t.Error("address not throttled for another account")
	}
	if w := th.Wait(Keys{Account: "a@x", Address: "10.0.0.2"}); w == 0 {
		t.Error("account not throttled from another address")
	}
	// Success clears the account, not the address.
	c.Advance(8 * time.Second)
	th.Succeed(k)
	if d := th.Fail(Keys{Account: "a@x"}); d != 0 {
		t.Errorf("account counted after a success: %v", d)
	}
	if d := th.Fail(Keys{Address: "10.0.0.1"}); d == 0 {
		t.Error("address forgot its failures after the account's success")
	}
	// Failures are forgotten a window after the last one.
	c.Advance(time.Hour + time.Second)
	if d := th.Fail(Keys{Address: "10.0.0.1"}); d != 0 {
		t.Errorf("address remembered past the window: %v", d)
	}
}

func TestThrottleBoundsMemory(t *testing.T) {
	t.Parallel()
	c := newClock()
	th := NewThrottle(ThrottleOptions{MaxKeys: 10, Window: time.Minute, Now: c.Now})
	for i := range 50 {
		th.Fail(Keys{Account: strconv.Itoa(i)})
	}
	if n := len(th.keys); n > 10 {
		t.Fatalf("%d keys kept, limit 10", n)
	}
	c.Advance(2 * time.Minute)
	th.Fail(Keys{Account: "new"})
	if _, ok := th.keys["acct\x00new"]; !ok {
		t.Error("expired keys were not swept to make room")
	}
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"192.0.2.1:1234":         "192.0.2.1",
		"[2001:db8::1]:443":      "2001:db8::/64",
		"[2001:db8::ffff:1]:443": "2001:db8::/64",
		"[::ffff:192.0.2.9]:1":   "192.0.2.9",
		"not-an-address":         "not-an-address",
		"[2001:db8:0:1::5]:80":   "2001:db8:0:1::/64",
	}
	for in, want := range cases {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRejectsForgedTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	ctx := t.Context()
	key, err := e.svc.signingKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	good := e.login(false, userEmail, userPassword, nil)
	c := &Claims{}
	if _, _, err := jwt.NewParser().ParseUnverified(good, c); err != nil {
		t.Fatal(err)
	}
	sign := func(m jwt.SigningMethod, claims jwt.Claims, k any) string {
		s, err := jwt.NewWithClaims(m, claims).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := e.clock.Now()
	noExp := *c
	noExp.ExpiresAt = nil
	noUser := *c
	noUser.UserID = 0
	future := *c
	future.NotBefore = jwt.NewNumericDate(now.Add(time.Hour))
	future.IssuedAt = jwt.NewNumericDate(now.Add(time.Hour))
	otherSub := *c
	otherSub.Subject = subject("someone@else.org")
	noneTok := sign(jwt.SigningMethodNone, c, jwt.UnsafeAllowNoneSignatureType)
	parts := strings.Split(good, ".")
	cases := []struct {
		name, token, msgPrefix string
	}{
		{"good", good, ""},
		{"alg none", noneTok, "Invalid token:"},
		{"HS512 with the same key", sign(jwt.SigningMethodHS512, c, key), "Invalid token:"},
		{"wrong key", sign(jwt.SigningMethodHS256, c, []byte("not-the-secret-not-the-secret-xx")), "Invalid token: token signature is invalid"},
		{"no exp", sign(jwt.SigningMethodHS256, &noExp, key), "Invalid token:"},
		{"no user_id", sign(jwt.SigningMethodHS256, &noUser, key), "Invalid token:"},
		{"not yet valid", sign(jwt.SigningMethodHS256, &future, key), "Invalid token:"},
		{"another e-mail", sign(jwt.SigningMethodHS256, &otherSub, key), MsgUserNotVerified},
		{"tampered payload", parts[0] + "." + parts[1] + "x." + parts[2], "Invalid token:"},
		{"two segments", parts[0] + "." + parts[1], "Invalid token:"},
		{"empty", "", "Invalid token:"},
		{"huge", strings.Repeat("a.", MaxTokenLength), "Invalid token:"},
		{"garbage", "a.b.c", "Invalid token:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := e.verifyMsg(tc.token)
			if tc.msgPrefix == "" {
				if msg != "" {
					t.Fatalf("rejected: %s", msg)
				}
				return
			}
			if !strings.HasPrefix(msg, tc.msgPrefix) {
				t.Fatalf("message = %q, want prefix %q", msg, tc.msgPrefix)
			}
			if strings.Contains(msg, string(key)) || (len(tc.token) > 20 && strings.Contains(msg, tc.token)) {
				t.Fatalf("message leaks a secret: %q", msg)
			}
		})
	}
}

func TestSecretCreatedWhenMissingAndShared(t *testing.T) {
	t.Parallel()
	cfg := dbtest.Fresh(t, dialects.SQLite)
	ctx := t.Context()
	st1, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st1.Close()
	st2, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	a, _ := New(st1, Options{})
	b, _ := New(st2, Options{})
	ka, err := a.signingKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := b.signingKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(ka) != string(kb) || len(ka) < 32 {
		t.Fatalf("secrets differ or are short: %d %d", len(ka), len(kb))
	}
	if v, err := st1.Setting(ctx, store.SettingJWTSecret); err != nil || v != string(ka) {
		t.Fatalf("setting = %v", err)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	st, err := store.OpenConfig(t.Context(), dbtest.Fresh(t, dialects.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil store accepted")
	}
	if _, err := New(st, Options{TokenTTL: -time.Second, Leeway: -1}); err == nil ||
		!strings.Contains(err.Error(), "TokenTTL") || !strings.Contains(err.Error(), "Leeway") {
		t.Errorf("negative durations: %v", err)
	}
	if _, err := New(st, Options{TokenTTL: 48 * time.Hour, MaxDuration: time.Hour}); err == nil {
		t.Error("MaxDuration below TokenTTL accepted")
	}
}

func TestCodes(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		c := newCode()
		if !codeFormatOK(c) || seen[c] {
			t.Fatalf("code %q malformed or repeated", c)
		}
		seen[c] = true
	}
	for _, bad := range []string{"", "abc", strings.Repeat("a", 32), strings.Repeat("A", 33), strings.Repeat("A", 31) + "-"} {
		if codeFormatOK(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
