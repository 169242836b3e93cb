package identity

import (
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// BenchmarkVerify measures the hot path of the session stage: a token
// verified again within the cache's second (signature, claims, cached row
// and user), and with the cache off (two indexed reads of SQLite).
func BenchmarkVerify(b *testing.B) {
	for _, tc := range []struct {
		name string
		ttl  int64
	}{{"cached", 0}, {"uncached", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			st, err := store.OpenConfig(b.Context(), dbtest.Fresh(b, dialects.SQLite))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Init(b.Context(), store.InitOptions{Email: adminEmail, Password: adminPassword}); err != nil {
				b.Fatal(err)
			}
			s, err := New(st, Options{CacheTTL: 0})
			if err != nil {
				b.Fatal(err)
			}
			if tc.ttl < 0 {
				s.opts.CacheTTL = -1
			}
			in, err := s.Login(b.Context(), true, Fields{"email": adminEmail, "password": adminPassword}, "")
			if err != nil {
				b.Fatal(err)
			}
			tok := in.Response.SessionToken
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Verify(b.Context(), tok); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
