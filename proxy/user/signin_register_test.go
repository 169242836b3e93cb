package user

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestRegistrationClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	r := e.do(e.svc.Register(), req{body: map[string]any{"email": "new@example.com", "password": "new-password-1"}})
	if r.status != http.StatusForbidden || r.msg(t) != identity.MsgRegistrationClosed {
		t.Fatalf("register = %d %s", r.status, r.body)
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		var roleID int64
		e := newEnv(t, cfg, func(o *identity.Options) {
			o.Registration = identity.Registration{Open: true, RoleID: &roleID}
		})
		ctx := t.Context()
		role := &store.Role{Name: "members", IsActive: true}
		if _, err := e.st.DB.NewInsert().Model(role).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		roleID = role.ID
		e.reload()
		v0, _ := e.st.Version(ctx)
		h := e.svc.Register()
		cases := []struct {
			name   string
			body   any
			status int
			field  string
		}{
			{"no email", map[string]any{"password": "new-password-1"}, 400, "email"},
			{"bad email", map[string]any{"email": "not-an-address", "password": "new-password-1"}, 400, "email"},
			{"no password", map[string]any{"email": "new@example.com"}, 400, "password"},
			{"short password", map[string]any{"email": "new@example.com", "password": "1234567"}, 400, "password"},
			{"confirmation mismatch", map[string]any{"email": "new@example.com", "password": "new-password-1", "password_confirmation": "other-pass-1"}, 400, "password"},
			{"name too long", map[string]any{"email": "new@example.com", "password": "new-password-1", "first_name": strings.Repeat("x", 256)}, 400, "first_name"},
			{"taken", map[string]any{"email": userEmail, "password": "new-password-1"}, 409, ""},
			{"taken in another case", map[string]any{"email": strings.ToUpper(userEmail), "password": "new-password-1"}, 409, ""},
			{"GET", nil, 400, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				q := req{body: tc.body}
				if tc.name == "GET" {
					q.method = "GET"
				}
				r := e.do(h, q)
				if r.status != tc.status {
					t.Fatalf("status = %d %s, want %d", r.status, r.body, tc.status)
				}
				if tc.field != "" {
					ctx := r.m(t)["error"].(map[string]any)["context"].(map[string]any)
					if _, ok := ctx[tc.field]; !ok {
						t.Errorf("context %v does not name %s", ctx, tc.field)
					}
				}
			})
		}
		r := e.do(h, req{body: map[string]any{"email": "john.smith@example.com", "password": "new-password-1"}})
		if r.status != 200 || string(r.body) != "{\"success\":true}\n" {
			t.Fatalf("register = %d %s", r.status, r.body)
		}
		u := e.userByEmail("john.smith@example.com")
		if u.FirstName != "john" || u.LastName != "smith" || u.Name != "john smith" || u.IsSysAdmin || !u.IsActive {
			t.Errorf("user = %+v", u)
		}
		// The registration role applies through every app (DreamFactory's
		// applyDefaultUserAppRole), the caller's among them.
		var maps []store.UserAppRole
		if err := e.st.DB.NewSelect().Model(&maps).Where("user_id = ?", u.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		apps, err := e.st.DB.NewSelect().Model((*store.App)(nil)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		callers := 0
		for _, m := range maps {
			if m.RoleID != roleID {
				t.Errorf("role mapping %+v, want role %d", m, roleID)
			}
			if m.AppID == e.appID {
				callers++
			}
		}
		if int64(len(maps)) != int64(apps) || callers != 1 {
			t.Errorf("role mappings %+v, want one per app (%d), the caller's app %d among them", maps, apps, e.appID)
		}
		if v1, _ := e.st.Version(ctx); v1 <= v0 {
			t.Errorf("configuration version not bumped: %d → %d", v0, v1)
		}
		e.reload()
		r = e.do(e.svc.Login(false), req{body: map[string]any{"email": "john.smith@example.com", "password": "new-password-1"}})
		if r.status != 200 || r.m(t)["role"] != "members" {
			t.Fatalf("login of the registered user = %d %s", r.status, r.body)
		}
		// ?login=true signs the new user in.
		r = e.do(h, req{target: "/?login=true", body: map[string]any{"email": "second@example.com", "password": "new-password-2", "first_name": "Sec", "last_name": "Ond"}})
		tok, _ := r.m(t)["session_token"].(string)
		if r.status != 200 || tok == "" || e.verifyMsg(tok) != "" {
			t.Fatalf("register with login = %d %s", r.status, r.body)
		}
	})
}

func TestRegisterWithConfirmation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		emailSvc := int64(6)
		e := newEnv(t, cfg, func(o *identity.Options) {
			o.Registration = identity.Registration{Open: true, EmailServiceID: &emailSvc}
		})
		h := e.svc.Register()
		r := e.do(h, req{body: map[string]any{"email": "new@example.com", "password": "new-password-1"}})
		if r.status != 200 || r.m(t)["confirmation_required"] != true {
			t.Fatalf("register = %d %s", r.status, r.body)
		}
		m := e.mail.last(t)
		code := m.Data["confirm_code"]
		if m.Kind != identity.MailConfirmation || m.ServiceID != emailSvc || m.To != "new@example.com" || len(code) != identity.CodeLength {
			t.Fatalf("mail = %+v", m)
		}
		if r := e.do(e.svc.Login(false), req{body: map[string]any{"email": "new@example.com", "password": "new-password-1"}}); r.status != 401 || r.msg(t) != identity.MsgNotConfirmed {
			t.Fatalf("login before confirmation = %d %s", r.status, r.body)
		}
		// A password reset must not skip the confirmation.
		e.do(e.svc.Password(false), req{target: "/?reset=true", body: map[string]any{"email": "new@example.com"}})
		if r := e.do(e.svc.Login(false), req{body: map[string]any{"email": "new@example.com", "password": "new-password-1"}}); r.status != 401 {
			t.Fatalf("login after a reset request = %d %s", r.status, r.body)
		}
		code = e.mail.last(t).Data["confirm_code"]
		if r := e.do(h, req{body: map[string]any{"email": "new@example.com", "code": strings.Repeat("Z", identity.CodeLength)}}); r.status != 404 {
			t.Errorf("wrong confirmation code = %d %s", r.status, r.body)
		}
		if r := e.do(h, req{body: map[string]any{"email": "new@example.com", "code": code}}); r.status != 200 {
			t.Fatalf("confirm = %d %s", r.status, r.body)
		}
		e.login(false, "new@example.com", "new-password-1", nil)
		// Codes of unconfirmed registrations expire.
		e.do(h, req{body: map[string]any{"email": "late@example.com", "password": "new-password-1"}})
		code = e.mail.last(t).Data["confirm_code"]
		e.clock.Advance(identity.ConfirmCodeTTL + time.Second)
		if r := e.do(h, req{body: map[string]any{"email": "late@example.com", "code": code}}); r.status != 400 || r.msg(t) != identity.MsgCodeExpired {
			t.Errorf("late confirmation = %d %s", r.status, r.body)
		}
	})
}

func TestRegisterNeedsAMailerForConfirmation(t *testing.T) {
	t.Parallel()
	emailSvc := int64(6)
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), func(o *identity.Options) {
		o.Registration = identity.Registration{Open: true, EmailServiceID: &emailSvc}
		o.Mailer = unavailable{}
	})
	r := e.do(e.svc.Register(), req{body: map[string]any{"email": "new@example.com", "password": "new-password-1"}})
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("register = %d %s", r.status, r.body)
	}
	n, err := e.st.DB.NewSelect().Model((*store.User)(nil)).Where("email = ?", "new@example.com").Count(t.Context())
	if err != nil || n != 0 {
		t.Errorf("user created anyway: %d %v", n, err)
	}
}

func TestProfile(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		tok := e.login(false, userEmail, userPassword, nil)
		other := e.login(false, userEmail, userPassword, nil)
		h := e.svc.Profile(false)
		r := e.do(h, req{method: "GET", token: tok})
		m := r.m(t)
		if r.status != 200 || m["email"] != userEmail || m["first_name"] != "Jane" || m["name"] != "Jane Doe" ||
			m["default_app_id"] != nil || m["security_question"] != "" {
			t.Fatalf("profile = %d %v", r.status, m)
		}
		if _, leak := m["password"]; leak {
			t.Error("profile shows the password")
		}
		if r := e.do(h, req{method: "GET"}); r.status != 401 || r.msg(t) != identity.MsgNoSession {
			t.Errorf("profile without session = %d %s", r.status, r.body)
		}
		if r := e.do(e.svc.Profile(true), req{method: "GET", token: tok}); r.status != 403 {
			t.Errorf("user on the admin profile = %d", r.status)
		}
		cases := []struct {
			name   string
			body   any
			status int
		}{
			{"empty", map[string]any{}, 400},
			{"bad email", map[string]any{"email": "nope"}, 400},
			{"empty name", map[string]any{"name": ""}, 400},
			{"phone not a string", map[string]any{"phone": 5}, 400},
			{"unknown app", map[string]any{"default_app_id": 999}, 400},
			{"taken email", map[string]any{"email": adminEmail}, 409},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if r := e.do(h, req{token: tok, body: tc.body}); r.status != tc.status {
					t.Errorf("status = %d %s, want %d", r.status, r.body, tc.status)
				}
			})
		}
		r = e.do(h, req{method: "PATCH", token: tok, body: map[string]any{"first_name": "Janet", "phone": "+1 555", "default_app_id": e.appID}})
		if r.status != 200 || string(r.body) != "{\"success\":true}\n" {
			t.Fatalf("update = %d %s", r.status, r.body)
		}
		u := e.userByEmail(userEmail)
		if u.FirstName != "Janet" || u.Phone != "+1 555" || u.DefaultAppID == nil || *u.DefaultAppID != e.appID || u.LastName != "Doe" {
			t.Errorf("user after update = %+v", u)
		}
		if msg := e.verifyMsg(tok); msg != "" {
			t.Errorf("token after a profile update: %s", msg)
		}
		// Changing the e-mail retires every token and returns a new one.
		r = e.do(h, req{token: tok, body: map[string]any{"email": "janet@example.com"}})
		fresh, _ := r.m(t)["session_token"].(string)
		if r.status != 200 || fresh == "" {
			t.Fatalf("email change = %d %s", r.status, r.body)
		}
		for _, old := range []string{tok, other} {
			if msg := e.verifyMsg(old); msg == "" {
				t.Error("a token from before the e-mail change still works")
			}
		}
		if msg := e.verifyMsg(fresh); msg != "" {
			t.Errorf("new token: %s", msg)
		}
		r = e.do(h, req{method: "GET", token: fresh})
		if r.m(t)["email"] != "janet@example.com" {
			t.Errorf("profile after e-mail change = %s", r.body)
		}
		e.login(false, "janet@example.com", userPassword, nil)
	})
}
