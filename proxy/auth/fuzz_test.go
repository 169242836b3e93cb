package auth

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// FuzzVerify feeds arbitrary tokens to Verify and to the refresh parser:
// they must not panic, must refuse with a 401, and may accept only the
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
	body, _ := json.Marshal(map[string]string{"email": adminEmail, "password": adminPassword})
	w := httptest.NewRecorder()
	s.Login(true).ServeHTTP(w, httptest.NewRequest("POST", "/", bytes.NewReader(body)))
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		f.Fatal(err)
	}
	good := m["session_token"].(string)
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
		} else if e := apierr.As(err); e.Status != 401 {
			t.Fatalf("status %d for %q: %v", e.Status, tok, err)
		}
		if _, err := s.parseExpired(t.Context(), tok); err != nil {
			if e := apierr.As(err); e.Status != 401 {
				t.Fatalf("refresh parser: status %d for %q", e.Status, tok)
			}
		}
	})
}
