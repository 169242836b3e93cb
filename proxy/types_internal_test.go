package proxy

import (
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// TestConfigSchemaSecrets checks that the configuration schemas and
// service.SecretKey agree: every field a schema marks as a password is
// masked on read and left out of an export without secrets, and no other
// field is (the user service's password_email_service_id once was).
func TestConfigSchemaSecrets(t *testing.T) {
	t.Parallel()
	for _, typ := range defaultTypes(nil, nil, nil, nil) {
		cs, ok := typ.(service.ConfigSchemer)
		if !ok {
			continue
		}
		for _, f := range cs.ConfigSchema() {
			if got, want := service.SecretKey(f.Name), f.Type == "password"; got != want {
				t.Errorf("%s config %s (type %s): SecretKey = %v, want %v", typ.Info().Name, f.Name, f.Type, got, want)
			}
		}
	}
}
