package service

import "testing"

// TestSecretKey checks which configuration keys hold a credential (masked
// on read, left out of an export without secrets).
func TestSecretKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"password", true},
		{"Password", true},
		{"ntlm_password", true},
		{"passwd", true},
		{"client_secret", true},
		{"sp_privateKey", true},
		{"private_key", true},
		{"api_key", true},
		{"apiKey", true},
		{"api_token", true},
		{"secret_key", true},
		{"password_email_service_id", false},
		{"password_email_template_id", false},
		{"token_endpoint", false},
		{"wsse_username_token", false},
		{"sp_x509cert", false},
		{"idp_entityId", false},
		{"host", false},
		{"username", false},
	} {
		if got := SecretKey(tc.key); got != tc.want {
			t.Errorf("SecretKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
