package session

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
)

// FuzzStages feeds arbitrary header values, tokens and query strings to the
// apikey and session stages chained as in the pipeline: they must never
// panic, must answer 200, 401 or 403, and must let a request through only
// with a valid key, and with a user only for a valid token.
func FuzzStages(f *testing.F) {
	fx := newFixture(f, dbtest.Fresh(f, dialects.SQLite))
	good := fx.token(f, false, userEmail, userPassword, nil)
	past, err := identity.New(fx.st, identity.Options{Now: func() time.Time { return time.Now().Add(-48 * time.Hour) }})
	if err != nil {
		f.Fatal(err)
	}
	expired := fx.token(f, false, userEmail, userPassword, past)
	parts := strings.Split(good, ".")
	seeds := []struct{ key, token, authz, query string }{
		{apiKey, good, "", ""},
		{apiKey, "", "Bearer " + good, ""},
		{apiKey, "", "", "session_token=" + good},
		{"", good, "", "api_key=" + apiKey},
		{apiKey, expired, "", ""},
		{apiKey, parts[0] + "." + parts[1] + ".", "", ""},
		{apiKey, parts[0] + ".." + parts[2], "", ""},
		{apiKey, "eyJhbGciOiJub25lIn0." + parts[1] + ".", "", ""},
		{apiKey, strings.Repeat("A", 5000), "", ""},
		{strings.Repeat("k", 300), "", "", ""},
		{"", "", "Bearer", "api_key=%zz"},
		{"", "", "Basic dXNlcjpwYXNz", "api_key=" + apiKey + "&session_token=%00"},
		{apiKey, "\x00\xff", "Bearer \t ", ";;&&=="},
		{"", "", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.key, s.token, s.authz, s.query)
	}
	h, seen := fx.stack(f, nil)
	f.Fuzz(func(t *testing.T, key, token, authz, query string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.RawQuery = query
		if key != "" {
			r.Header["X-Platform-Api-Key"] = []string{key}
		}
		if token != "" {
			r.Header["X-Platform-Session-Token"] = []string{token}
		}
		if authz != "" {
			r.Header["Authorization"] = []string{authz}
		}
		*seen = nil
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK:
			id := *seen
			if id == nil || id.AppID != fx.appID || id.Requestor != caller.API {
				t.Fatalf("passed without a valid key: %+v", id)
			}
			if id.UserID != 0 && id.UserID != fx.user.ID {
				t.Fatalf("signed in as user %d", id.UserID)
			}
		case http.StatusUnauthorized, http.StatusForbidden:
			if *seen != nil {
				t.Fatal("the next handler ran after a refusal")
			}
			if body := w.Body.String(); len(token) > 16 && strings.Contains(body, token) {
				t.Fatal("the error echoes the token")
			}
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}
