package identity

import (
	"bytes"
	"errors"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// TestSealOpen: a sealed value opens for its purpose only, and a value
// that is empty, not base64, cut or altered is ErrSealBroken.
func TestSealOpen(t *testing.T) {
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	ctx := t.Context()
	sealed, err := e.svc.Seal(ctx, "oidc state a", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.svc.Open(ctx, "oidc state a", sealed); err != nil || !bytes.Equal(got, []byte("hello")) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	altered := []byte(sealed)
	altered[len(altered)/2] ^= 1
	for name, in := range map[string]string{
		"other purpose": "", "empty": "", "not base64": "!!!", "cut": sealed[:10], "altered": string(altered),
	} {
		purpose := "oidc state a"
		if name == "other purpose" {
			purpose, in = "oidc state b", sealed
		}
		if _, err := e.svc.Open(ctx, purpose, in); !errors.Is(err, ErrSealBroken) {
			t.Errorf("%s: %v, want ErrSealBroken", name, err)
		}
	}
}
