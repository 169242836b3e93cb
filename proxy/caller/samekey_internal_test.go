package caller

import (
	"math"
	"testing"
)

type keyA struct{}
type keyB struct{}
type keyN struct{ n int }

// TestFindKey: a State finds a key put in it as == would, whichever
// kind of key it is.
func TestFindKey(t *testing.T) {
	p, q := new(int), new(int)
	s1, s2 := "key", string([]byte("key"))
	cases := []struct {
		name     string
		put, get any
		want     bool
	}{
		{"same empty struct type", keyA{}, keyA{}, true},
		{"other empty struct type", keyA{}, keyB{}, false},
		{"equal structs", keyN{1}, keyN{1}, true},
		{"different structs", keyN{1}, keyN{2}, false},
		{"same pointer", p, p, true},
		{"other pointer", p, q, false},
		{"equal strings in different memory", s1, s2, true},
		{"different strings", "a", "b", false},
		{"equal ints", 7, 7, true},
		{"int and int64", 7, int64(7), false},
		{"NaNs in different boxes", math.NaN(), math.NaN(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s State
			s.Put(c.put, "v")
			if got := s.find(c.get) >= 0; got != c.want {
				t.Errorf("put %v, find %v: %v, want %v", c.put, c.get, got, c.want)
			}
		})
	}
}
