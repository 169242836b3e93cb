package proxy_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
