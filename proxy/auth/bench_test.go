package auth

import (
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// BenchmarkVerify measures the session-token check: "jwt" is the signed
// token alone (HS256 signature, method, times), "cached" the whole Verify
// with the session row and user from the in-process cache (the hot path:
// a hit for CacheTTL after each read), "uncached" with both read from the
// SQLite system database every time.
func BenchmarkVerify(b *testing.B) {
	ctx := b.Context()
	st, err := store.OpenConfig(ctx, dbtest.Fresh(b, dialects.SQLite))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Init(ctx, store.InitOptions{Email: adminEmail, Password: adminPassword, Name: "Ada Admin"}); err != nil {
		b.Fatal(err)
	}
	u := new(store.User)
	if err := st.DB.NewSelect().Model(u).Where("email = ?", adminEmail).Scan(ctx); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		ttl  time.Duration
		full bool
	}{{"jwt", time.Minute, false}, {"cached", time.Minute, true}, {"uncached", -1, true}} {
		b.Run(bc.name, func(b *testing.B) {
			svc, err := New(st, Options{CacheTTL: bc.ttl})
			if err != nil {
				b.Fatal(err)
			}
			iss, err := svc.open(ctx, u, 0, time.Hour, false)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if bc.full {
					_, err = svc.Verify(ctx, iss.token)
				} else {
					_, err = svc.parse(ctx, iss.token)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
