package session

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkStage measures the session stage on a request that carries a
// valid token: the JWT check, the session row and user (from the verify
// cache, refreshed from SQLite once per CacheTTL as in production), the
// role resolution and the new identity. "api key and session" is the
// apikey stage in front of it, as in the pipeline.
func BenchmarkStage(b *testing.B) {
	f := newFixture(b, dbtest.Fresh(b, dialects.SQLite))
	tok := f.token(b, false, userEmail, userPassword, nil)
	sess, err := New(Options{Verifier: f.verifier()})
	if err != nil {
		b.Fatal(err)
	}
	var seen *caller.Identity
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = caller.IdentityFrom(r.Context()) })
	both, bothSeen := f.stack(b, nil)

	run := func(b *testing.B, h http.Handler, r *http.Request, seen **caller.Identity) {
		w := &discard{h: http.Header{}}
		h.ServeHTTP(w, r)
		if *seen == nil || (*seen).UserID != f.user.ID {
			b.Fatalf("the token was not accepted: %+v", *seen)
		}
		b.ReportAllocs()
		for b.Loop() {
			*seen = nil
			h.ServeHTTP(w, r)
		}
		if *seen == nil {
			b.Fatal("request refused")
		}
	}
	b.Run("session", func(b *testing.B) {
		r := httptest.NewRequest(http.MethodGet, "/api/v2/db/_table/contact", nil)
		r.Header.Set("X-Platform-Session-Token", tok)
		r = r.WithContext(caller.WithIdentity(r.Context(), &caller.Identity{AppID: f.appID, Requestor: caller.API}))
		run(b, sess(record), r, &seen)
	})
	b.Run("api key and session", func(b *testing.B) {
		r := httptest.NewRequest(http.MethodGet, "/api/v2/db/_table/contact", nil)
		r.Header.Set("X-Platform-API-Key", apiKey)
		r.Header.Set("X-Platform-Session-Token", tok)
		run(b, both, r, bothSeen)
	})
}
