package user

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/identity"
)

func TestPasswordChange(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		tok := e.login(false, userEmail, userPassword, nil)
		other := e.login(false, userEmail, userPassword, map[string]any{"duration": 0})
		h := e.svc.Password(false)
		cases := []struct {
			name   string
			q      req
			status int
			msg    string
		}{
			{"wrong old password", req{token: tok, body: map[string]any{"old_password": "not-it-at-all", "new_password": "new-password-1"}}, 400, identity.MsgOldPasswordMismatch},
			{"no new password", req{token: tok, body: map[string]any{"old_password": userPassword}}, 400, identity.MsgChangeNeedsBoth},
			{"too short", req{token: tok, body: map[string]any{"old_password": userPassword, "new_password": "short"}}, 400, ""},
			{"too long", req{token: tok, body: map[string]any{"old_password": userPassword, "new_password": strings.Repeat("x", 73)}}, 400, ""},
			{"no session", req{body: map[string]any{"old_password": userPassword, "new_password": "new-password-1"}}, 401, identity.MsgNoSession},
			{"nothing to do", req{token: tok, body: map[string]any{"new_password": "new-password-1"}}, 400, identity.MsgNotEnoughInfo},
			{"GET", req{method: "GET", token: tok}, 400, ""},
			{"admin endpoint", req{token: tok, body: map[string]any{"old_password": userPassword, "new_password": "new-password-1"}}, 403, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				hh := h
				if tc.name == "admin endpoint" {
					hh = e.svc.Password(true)
				}
				r := e.do(hh, tc.q)
				if r.status != tc.status {
					t.Fatalf("status = %d %s, want %d", r.status, r.body, tc.status)
				}
				if tc.msg != "" && r.msg(t) != tc.msg {
					t.Errorf("message = %q, want %q", r.msg(t), tc.msg)
				}
			})
		}
		// The composition rule: exactly 8 characters is enough.
		r := e.do(h, req{token: tok, target: "/?login=true", body: map[string]any{"old_password": userPassword, "new_password": "8-chars!"}})
		if r.status != 200 || r.m(t)["success"] != true {
			t.Fatalf("change = %d %s", r.status, r.body)
		}
		fresh, _ := r.m(t)["session_token"].(string)
		if fresh == "" {
			t.Fatal("?login=true returned no session_token")
		}
		// Every earlier session ends; the new one works; the new password
		// signs in, the old one no longer does.
		for name, old := range map[string]string{"current": tok, "other": other} {
			if msg := e.verifyMsg(old); msg != identity.MsgTokenRevoked {
				t.Errorf("%s token after password change: %q", name, msg)
			}
		}
		if msg := e.verifyMsg(fresh); msg != "" {
			t.Errorf("token issued with the change: %s", msg)
		}
		e.login(false, userEmail, "8-chars!", nil)
		if r := e.do(e.svc.Login(false), req{body: map[string]any{"email": userEmail, "password": userPassword}}); r.status != 401 {
			t.Errorf("old password still signs in: %d", r.status)
		}
		u := e.userByEmail(userEmail)
		if !strings.HasPrefix(u.Password, "$2") || u.TokensValidAfter == nil {
			t.Errorf("stored password %q, tokens_valid_after %v", u.Password[:4], u.TokensValidAfter)
		}
	})
}

func TestPasswordReset(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		h := e.svc.Password(false)
		tok := e.login(false, userEmail, userPassword, nil)

		// Unknown addresses get the same answer, and no mail.
		if r := e.do(h, req{target: "/?reset=true", body: map[string]any{"email": "nobody@example.com"}}); r.status != 200 || r.m(t)["success"] != true {
			t.Fatalf("reset of an unknown address = %d %s", r.status, r.body)
		}
		// So does an administrator's address on the user endpoint.
		if r := e.do(h, req{target: "/?reset=true", body: map[string]any{"email": adminEmail}}); r.status != 200 {
			t.Fatalf("reset of an admin on the user endpoint = %d %s", r.status, r.body)
		}
		if n := e.mail.count(); n != 0 {
			t.Fatalf("%d mails sent for addresses without a user account", n)
		}
		if r := e.do(h, req{target: "/?reset=true", body: map[string]any{}}); r.status != 400 || r.msg(t) != identity.MsgResetMissingEmail {
			t.Errorf("reset without email = %d %s", r.status, r.body)
		}

		r := e.do(h, req{target: "/?reset=true", body: map[string]any{"email": userEmail}})
		if r.status != 200 || r.m(t)["success"] != true {
			t.Fatalf("reset request = %d %s", r.status, r.body)
		}
		m := e.mail.last(t)
		code := m.Data["confirm_code"]
		if m.Kind != identity.MailPasswordReset || m.To != userEmail || !regexp.MustCompile(`^[A-Z0-9]{32}$`).MatchString(code) ||
			!strings.Contains(m.Text, code) {
			t.Fatalf("mail = %+v", m)
		}
		if u := e.userByEmail(userEmail); strings.Contains(u.ConfirmCode, code) || !strings.HasPrefix(u.ConfirmCode, codeReset) {
			t.Fatalf("the code is stored in clear or unmarked: %q", u.ConfirmCode)
		}
		wrong := strings.Repeat("A", identity.CodeLength)
		cases := []struct {
			name   string
			body   map[string]any
			status int
			msg    string
		}{
			{"wrong code", map[string]any{"email": userEmail, "code": wrong, "new_password": "reset-password-1"}, 404, identity.MsgCodeNotFound},
			{"bad format", map[string]any{"email": userEmail, "code": "abc", "new_password": "reset-password-1"}, 400, identity.MsgCodeFormat},
			{"control characters", map[string]any{"email": userEmail, "code": strings.Repeat("A", 31) + "\x00", "new_password": "reset-password-1"}, 400, identity.MsgCodeFormat},
			{"no new password", map[string]any{"email": userEmail, "code": code}, 400, identity.MsgResetMissingNew},
			{"no email", map[string]any{"code": code, "new_password": "reset-password-1"}, 400, identity.MsgResetMissingEmail},
			{"another user's address", map[string]any{"email": adminEmail, "code": code, "new_password": "reset-password-1"}, 404, identity.MsgCodeNotFound},
			{"weak new password", map[string]any{"email": userEmail, "code": code, "new_password": "short"}, 400, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(h, req{body: tc.body, addr: "198.51.100.7:1"})
				if r.status != tc.status {
					t.Fatalf("status = %d %s, want %d", r.status, r.body, tc.status)
				}
				if tc.msg != "" && r.msg(t) != tc.msg {
					t.Errorf("message = %q, want %q", r.msg(t), tc.msg)
				}
			})
		}
		r = e.do(h, req{target: "/?login=true", body: map[string]any{"email": userEmail, "code": code, "new_password": "reset-password-1"}})
		if r.status != 200 || r.m(t)["session_token"] == nil {
			t.Fatalf("reset with code = %d %s", r.status, r.body)
		}
		if msg := e.verifyMsg(tok); msg != identity.MsgTokenRevoked {
			t.Errorf("session from before the reset: %q", msg)
		}
		e.login(false, userEmail, "reset-password-1", nil)
		// The code is single-use.
		if r := e.do(h, req{body: map[string]any{"email": userEmail, "code": code, "new_password": "reset-password-2"}}); r.status != 404 {
			t.Errorf("second use of the code = %d %s", r.status, r.body)
		}
		// Codes expire.
		e.do(h, req{target: "/?reset=true", body: map[string]any{"email": userEmail}})
		code = e.mail.last(t).Data["confirm_code"]
		e.clock.Advance(identity.DefaultResetCodeTTL + time.Second)
		if r := e.do(h, req{body: map[string]any{"email": userEmail, "code": code, "new_password": "reset-password-2"}}); r.status != 400 || r.msg(t) != identity.MsgCodeExpired {
			t.Errorf("expired code = %d %s", r.status, r.body)
		}
		// A login clears a pending reset code.
		e.do(h, req{target: "/?reset=true", body: map[string]any{"email": userEmail}})
		code = e.mail.last(t).Data["confirm_code"]
		e.login(false, userEmail, "reset-password-1", nil)
		if r := e.do(h, req{body: map[string]any{"email": userEmail, "code": code, "new_password": "reset-password-2"}}); r.status != 404 {
			t.Errorf("code after a login = %d %s", r.status, r.body)
		}
		// The admin endpoint resets administrators.
		ha := e.svc.Password(true)
		if r := e.do(ha, req{target: "/?reset=true", body: map[string]any{"email": adminEmail}}); r.status != 200 {
			t.Fatalf("admin reset request = %d %s", r.status, r.body)
		}
		code = e.mail.last(t).Data["confirm_code"]
		if r := e.do(ha, req{body: map[string]any{"email": adminEmail, "code": code, "new_password": "admin-reset-1"}}); r.status != 200 {
			t.Fatalf("admin reset = %d %s", r.status, r.body)
		}
		e.login(true, adminEmail, "admin-reset-1", nil)
	})
}

func TestPasswordResetWithoutMailer(t *testing.T) {
	t.Parallel()
	for _, mailer := range []string{"none", "unavailable"} {
		t.Run(mailer, func(t *testing.T) {
			e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), func(o *identity.Options) {
				o.Mailer = nil
				if mailer == "unavailable" {
					o.Mailer = unavailable{}
				}
			})
			h := e.svc.Password(false)
			for _, email := range []string{userEmail, "nobody@example.com"} {
				r := e.do(h, req{target: "/?reset=true", body: map[string]any{"email": email}})
				if r.status != http.StatusInternalServerError || r.msg(t) != identity.MsgNoResetChannel {
					t.Errorf("reset for %s = %d %s", email, r.status, r.body)
				}
			}
			logs := e.logs.String()
			if !strings.Contains(logs, "password reset requested but no e-mail service is configured") {
				t.Errorf("the request was not logged: %s", logs)
			}
			if u := e.userByEmail(userEmail); u.ConfirmCode != "" {
				t.Errorf("a code was stored that nobody can receive: %q", u.ConfirmCode)
			}
		})
	}
}

type unavailable struct{}

func (unavailable) SendMail(_ context.Context, _ identity.Mail) error { return identity.ErrNoMailer }
func (unavailable) CanSend(int64) bool                                { return false }

func TestMailerFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	e.mail.err = errors.New("smtp: connection refused")
	r := e.do(e.svc.Password(false), req{target: "/?reset=true", body: map[string]any{"email": userEmail}})
	if r.status != 500 || strings.Contains(string(r.body), "smtp") {
		t.Errorf("reset with a failing mailer = %d %s", r.status, r.body)
	}
}

func TestSecurityAnswer(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		tok := e.login(false, userEmail, userPassword, nil)
		r := e.do(e.svc.Profile(false), req{token: tok, body: map[string]any{"security_question": "First pet?", "security_answer": "Rex"}})
		if r.status != 200 {
			t.Fatalf("profile = %d %s", r.status, r.body)
		}
		if u := e.userByEmail(userEmail); u.SecurityAnswer == "Rex" || !strings.HasPrefix(u.SecurityAnswer, "$2") {
			t.Fatalf("security answer stored as %q", u.SecurityAnswer)
		}
		h := e.svc.Password(false)
		r = e.do(h, req{target: "/?reset=true", body: map[string]any{"email": userEmail}})
		if r.status != 200 || r.m(t)["security_question"] != "First pet?" {
			t.Fatalf("reset request = %d %s", r.status, r.body)
		}
		if r := e.do(h, req{body: map[string]any{"email": userEmail, "security_answer": "Max", "new_password": "answer-pass-1"}}); r.status != 400 || r.msg(t) != identity.MsgAnswerMismatch {
			t.Errorf("wrong answer = %d %s", r.status, r.body)
		}
		if r := e.do(h, req{body: map[string]any{"email": userEmail, "security_answer": "Rex", "new_password": "answer-pass-1"}}); r.status != 200 {
			t.Fatalf("right answer = %d %s", r.status, r.body)
		}
		e.login(false, userEmail, "answer-pass-1", nil)
		if msg := e.verifyMsg(tok); msg != identity.MsgTokenRevoked {
			t.Errorf("old session after reset: %q", msg)
		}
	})
}
