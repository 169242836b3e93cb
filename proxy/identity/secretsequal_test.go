package identity

import (
	"crypto/subtle"
	"strings"
	"testing"
)

// TestEqual: the same answers as subtle.ConstantTimeCompare,
// for every length around the word size and a difference at every byte.
func TestSecretsEqual(t *testing.T) {
	cases := []struct{ a, b string }{
		{"", ""},
		{"a", ""},
		{"", "a"},
		{"abcdefgh", "abcdefgh"},
		{"abcdefgh", "abcdefgi"},
		{"abcdefgh", "abcdefg"},
	}
	for n := 0; n <= 70; n++ {
		base := strings.Repeat("k", n)
		cases = append(cases, struct{ a, b string }{base, base})
		for i := range n {
			other := []byte(base)
			other[i] ^= 0x20
			cases = append(cases, struct{ a, b string }{base, string(other)})
		}
	}
	for _, c := range cases {
		want := subtle.ConstantTimeCompare([]byte(c.a), []byte(c.b)) == 1
		if got := SecretsEqual(c.a, c.b); got != want {
			t.Errorf("SecretsEqual(%q, %q) = %v, want %v", c.a, c.b, got, want)
		}
	}
}
