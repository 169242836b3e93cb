package system

import "testing"

// TestSecretKey checks which configuration keys an export without secrets
// leaves out.
func TestSecretKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"password", true},
		{"client_secret", true},
		{"sp_privateKey", true},
		{"private_key", true},
		{"api_key", true},
		{"sp_x509cert", false},
		{"idp_entityId", false},
		{"host", false},
	} {
		if got := secretKey(tc.key); got != tc.want {
			t.Errorf("secretKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
