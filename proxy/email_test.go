package proxy_test

import (
	"bytes"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestLocalEmailService sends through the built-in email service, with a
// seeded template, a lookup and replacement fields; the message lands as
// an .eml file in DIR/storage/email.
func TestLocalEmailService(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	r := admin.Do(t, http.MethodPost, "/api/v2/email?template=Password%20Reset%20Default", map[string]any{
		"to": []any{map[string]any{"name": "Ann", "email": "ann@example.com"}}, "first_name": "Ann",
		"link": "https://app.example.com/reset?code=ABC", "confirm_code": "ABC", "subject": "Reset for {user.email}"})
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"count":1}` {
		t.Fatalf("send = %d %s", r.Status, r.Body)
	}
	dir := filepath.Join(in.Config.DataDir, "storage", "email")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("mail folder: %v %v", entries, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	for _, want := range []string{"Subject: Reset for " + proxytest.AdminEmail, "Hi Ann,", "reset?code=3DABC", "Your confirmation code: ABC"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("message lacks %q:\n%s", want, data)
		}
	}
	if r := admin.Do(t, http.MethodPost, "/api/v2/email?template=nope", map[string]any{"to": "a@x.io"}); r.Status != http.StatusNotFound {
		t.Errorf("unknown template = %d %s", r.Status, r.Body)
	}
	// The user service's mails point at the built-in email service and templates.
	cfg := admin.Do(t, http.MethodGet, "/api/v2/system/service?filter=name%3Duser", nil)
	for _, k := range []string{`"password_email_template_id":`, `"invite_email_service_id":`, `"open_reg_email_template_id":`} {
		if !strings.Contains(string(cfg.Body), k) {
			t.Errorf("user config lacks %s: %s", k, cfg.Body)
		}
	}
}

// TestPasswordResetByEmail resets a user's and an administrator's password
// on a fresh instance, as DreamFactory's clients do: the reset mail goes
// through the built-in email service with the seeded template, carries a
// 32-character code and the reset link, and the code sets a new password
// once.
func TestPasswordResetByEmail(t *testing.T) {
	const public = "https://api.example.com/"
	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) { c.PublicURL = public })
	idAddUser(t, in, idUserEmail, idUserPassword)
	dir := filepath.Join(in.Config.DataDir, "storage", "email")
	codeRE := regexp.MustCompile(`Your confirmation code: ([0-9A-Z]{32})\b`)
	for _, tc := range []struct {
		name, path, session, email, password string
	}{
		{"user", "/api/v2/user/password", "/api/v2/user/session", idUserEmail, idUserPassword},
		{"admin", "/api/v2/system/admin/password", "/api/v2/system/admin/session", proxytest.AdminEmail, proxytest.AdminPassword},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadDir(dir)
			idExpect(t, "reset", in.API().Do(t, http.MethodPost, tc.path+"?reset=true", map[string]any{"email": tc.email}), 200, "")
			after, err := os.ReadDir(dir)
			if err != nil || len(after) != len(before)+1 {
				t.Fatalf("mail folder: %d files before, %v %v after", len(before), after, err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, after[len(after)-1].Name()))
			if err != nil {
				t.Fatal(err)
			}
			msg, err := mail.ReadMessage(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
			text := string(body)
			if !strings.Contains(msg.Header.Get("To"), tc.email) || msg.Header.Get("Subject") != "[Portcullis] Password Reset" {
				t.Errorf("headers: To %q Subject %q", msg.Header.Get("To"), msg.Header.Get("Subject"))
			}
			m := codeRE.FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no 32-character code in the mail:\n%s", text)
			}
			code := m[1]
			link := "https://api.example.com" + identity.DefaultConfirmResetURL + "?code=" + code + "&amp;email=" + url.QueryEscape(tc.email)
			if !strings.Contains(text, link) {
				t.Errorf("the mail lacks the link %s:\n%s", link, text)
			}
			const fresh = "An0ther-long-passw0rd!"
			idExpect(t, "complete", in.API().Do(t, http.MethodPost, tc.path, map[string]any{"email": tc.email, "code": code, "new_password": fresh}), 200, "")
			idExpect(t, "reuse the code", in.API().Do(t, http.MethodPost, tc.path, map[string]any{"email": tc.email, "code": code, "new_password": fresh + "x"}), 404, "")
			idExpect(t, "old password", in.API().Do(t, http.MethodPost, tc.session, map[string]any{"email": tc.email, "password": tc.password}), 401, "")
			idExpect(t, "new password", in.API().Do(t, http.MethodPost, tc.session, map[string]any{"email": tc.email, "password": fresh}), 200, "")
		})
	}
}

func TestPublicURLValidated(t *testing.T) {
	for url, ok := range map[string]bool{"": true, "https://api.example.com": true, "http://127.0.0.1:8080/base/": true,
		"api.example.com": false, "ftp://x": false, "https://x/?a=b": false, "https://x/#f": false} {
		if err := (proxy.Config{PublicURL: url}).Validate(); (err == nil) != ok {
			t.Errorf("PublicURL %q: %v", url, err)
		}
	}
}
