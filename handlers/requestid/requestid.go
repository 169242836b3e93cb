package requestid

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Header is the request and response header carrying the id.
const Header = "X-Request-Id"

// Options configures the stage.
type Options struct {
	// TrustClient accepts the client's X-Request-Id (up to 64 characters of
	// letters, digits, '-', '_' and '.'); otherwise every id is generated.
	TrustClient bool
}

// From returns the request id in ctx, or "" (caller.RequestID: stages and
// backends read it there, without importing this stage).
func From(ctx context.Context) string { return caller.RequestID(ctx) }

// With returns a context carrying id (caller.WithRequestID).
func With(ctx context.Context, id string) context.Context { return caller.WithRequestID(ctx, id) }

// New returns the stage. It places the request's [caller.State] (the
// stages after it fill it in) when the request has none; a new id and the
// header's value are held in the State's room.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st, fresh := caller.Ensure(r.Context())
			var id string
			if vs := r.Header[Header]; len(vs) > 0 { // Header.Get without canonicalizing
				id = vs[0]
			}
			if !opts.TrustClient || !valid(id) {
				id = newID(st)
			}
			w.Header()[Header] = st.HeaderValue(id) // Header is in canonical form
			st.SetRequestID(id)
			if fresh {
				r = r.WithContext(st)
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

func valid(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// newID returns 24 random hex digits, held in st's room. The bits come
// from the runtime's generator (math/rand/v2's global source: ChaCha8,
// seeded from the operating system, one state per thread), not from
// crypto/rand: an id is a label the response echoes (and a client may
// choose with TrustClient), not a secret, and the generator costs no
// call into the kernel's random source and no lock (callgrind: about 350
// instructions fewer per request).
func newID(st *caller.State) string {
	var b [16]byte
	var out [24]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	hex.Encode(out[:], b[:12])
	return st.Text(out[:])
}
