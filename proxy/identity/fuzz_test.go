package identity

import (
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// FuzzVerify feeds arbitrary tokens to Verify and to the refresh parser:
// they must not panic, must refuse as Unauthenticated (401), and may accept only the
// token that was issued.
func FuzzVerify(f *testing.F) {
	st, err := store.OpenConfig(f.Context(), dbtest.Fresh(f, dialects.SQLite))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	if _, err := st.Init(f.Context(), store.InitOptions{Email: adminEmail, Password: adminPassword}); err != nil {
		f.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		f.Fatal(err)
	}
	in, err := s.Login(f.Context(), true, Fields{"email": adminEmail, "password": adminPassword}, "")
	if err != nil {
		f.Fatal(err)
	}
	good := in.Response.SessionToken
	parts := strings.Split(good, ".")
	// The same signature with other low bits in its last character: strict
	// decoding refuses such twins of a valid token.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	sig := parts[2]
	twin := parts[0] + "." + parts[1] + "." + sig[:len(sig)-1] + string(alphabet[strings.IndexByte(alphabet, sig[len(sig)-1])^1])
	if _, err := s.Verify(f.Context(), twin); err == nil {
		f.Fatal("a token whose signature differs only in padding bits was accepted")
	}
	for _, seed := range []string{good, twin, "", "a.b.c", "..", parts[0] + "." + parts[1] + ".", parts[0] + ".e30." + parts[2],
		"eyJhbGciOiJub25lIn0." + parts[1] + ".", strings.Repeat("x", 5000), good + "x", "\x00.\xff.\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		sess, err := s.Verify(t.Context(), tok)
		if err == nil {
			if tok != good || sess.User == nil || sess.User.Email != adminEmail {
				t.Fatalf("accepted %q as %+v", tok, sess)
			}
		} else if k := KindOf(err); k != Unauthenticated {
			t.Fatalf("kind %d for %q: %v", k, tok, err)
		}
		if _, err := s.parseExpired(t.Context(), tok); err != nil {
			if k := KindOf(err); k != Unauthenticated {
				t.Fatalf("refresh parser: kind %d for %q", k, tok)
			}
		}
	})
}
