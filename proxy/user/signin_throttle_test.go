package user

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/identity"
)

func TestLoginThrottled(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		h := e.svc.Login(false)
		bad := req{body: map[string]any{"email": userEmail, "password": "guess-guess-1"}, addr: "203.0.113.5:999"}
		good := req{body: map[string]any{"email": userEmail, "password": userPassword}, addr: "203.0.113.6:999"}
		for i := range 5 {
			if r := e.do(h, bad); r.status != 401 {
				t.Fatalf("failure %d = %d %s", i+1, r.status, r.body)
			}
		}
		if r := e.do(h, bad); r.status != 401 {
			t.Fatalf("6th failure = %d", r.status)
		}
		// Now blocked: even the right password, from anywhere, waits.
		r := e.do(h, good)
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" ||
			!strings.HasPrefix(r.msg(t), "Too many failed login attempts.") {
			t.Fatalf("blocked attempt = %d %s %v", r.status, r.body, r.header)
		}
		e.clock.Advance(time.Second)
		if r := e.do(h, bad); r.status != 401 {
			t.Fatalf("7th failure = %d", r.status)
		}
		if r := e.do(h, good); r.status != 429 || r.header.Get("Retry-After") != "2" {
			t.Fatalf("second block = %d %v", r.status, r.header)
		}
		e.clock.Advance(2 * time.Second)
		if r := e.do(h, good); r.status != 200 {
			t.Fatalf("login after the delay = %d %s", r.status, r.body)
		}
		// The success cleared the account: failures are free again.
		for range 5 {
			if r := e.do(h, good); r.status != 200 {
				t.Fatalf("login = %d", r.status)
			}
		}
		if !strings.Contains(e.logs.String(), "login throttled") {
			t.Error("throttling was not logged")
		}
	})
}

func TestNoSecretsInLogs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, func(o *identity.Options) { o.Registration = identity.Registration{Open: true} })
		secrets := []string{userPassword, adminPassword, "guess-guess-1", "changed-pass-1", "register-pass-1"}
		tok := e.login(false, userEmail, userPassword, nil)
		admin := e.login(true, adminEmail, adminPassword, map[string]any{"duration": 0})
		secrets = append(secrets, tok, admin)
		for range 7 {
			e.do(e.svc.Login(false), req{body: map[string]any{"email": userEmail, "password": "guess-guess-1"}})
		}
		// A password typed into the e-mail field must not be logged either.
		e.do(e.svc.Login(false), req{body: map[string]any{"email": "hunter2-secret-typed", "password": "x"}})
		secrets = append(secrets, "hunter2-secret-typed")
		e.clock.Advance(time.Hour)
		r := e.do(e.svc.Refresh(true), req{method: "PUT", token: admin})
		secrets = append(secrets, r.m(t)["session_token"].(string))
		e.do(e.svc.Password(false), req{target: "/?reset=true", body: map[string]any{"email": userEmail}})
		code := e.mail.last(t).Data["confirm_code"]
		secrets = append(secrets, code)
		e.do(e.svc.Password(false), req{body: map[string]any{"email": userEmail, "code": code, "new_password": "changed-pass-1"}})
		e.do(e.svc.Register(), req{target: "/?login=true", body: map[string]any{"email": "reg@example.com", "password": "register-pass-1"}})
		e.do(e.svc.Logout(true), req{method: "DELETE", token: admin})
		key, _ := e.svc.signingKey(t.Context())
		secrets = append(secrets, string(key))

		logs := e.logs.String()
		if !strings.Contains(logs, "login failed") || !strings.Contains(logs, "password reset code sent") {
			t.Fatalf("expected security events in the log:\n%s", logs)
		}
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Errorf("the log contains a secret (%d characters)", len(s))
			}
		}
		if strings.Contains(logs, userEmail) {
			t.Error("the log names users by e-mail instead of id")
		}
	})
}
