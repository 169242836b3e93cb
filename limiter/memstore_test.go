package limiter

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// TestMemCountersMatchUlule runs random sequences of counts, reads,
// deletions, cleanings and sleeps (windows of 1 to 4 seconds, so many
// roll over) on ulule's memory cache and on memCounters side by side, in
// a synctest bubble whose fake clock both read, and requires the same
// count and window end from every call. Half of the counts go through a
// keyCache, as an Engine's do.
func TestMemCountersMatchUlule(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 17))
				ul := memory.NewCache(0)
				mine := &memCounters{}
				keys := []string{"a", "b", "c", "d"}
				periods := map[string]time.Duration{}
				caches := map[string]*keyCache{}
				for _, k := range keys {
					periods[k] = time.Duration(1+rng.IntN(4)) * time.Second
					caches[k] = &keyCache{key: k}
				}
				for i := range 3000 {
					k := keys[rng.IntN(len(keys))]
					d := periods[k]
					switch op := rng.IntN(100); {
					case op < 70:
						wantN, wantEnd := ul.Increment(k, 1, d)
						var kc *keyCache
						if rng.IntN(2) == 0 {
							kc = caches[k]
						}
						n, end := mine.hit(k, kc, d, time.Now().UnixNano())
						if n != wantN || end != wantEnd.UnixNano() {
							t.Fatalf("op %d: hit %s = %d, %d; ulule %d, %d", i, k, n, end, wantN, wantEnd.UnixNano())
						}
					case op < 80:
						wantN, wantEnd := ul.Get(k, d)
						n, end := mine.peek(k, d, time.Now().UnixNano())
						if n != wantN || end != wantEnd.UnixNano() {
							t.Fatalf("op %d: peek %s = %d, %d; ulule %d, %d", i, k, n, end, wantN, wantEnd.UnixNano())
						}
					case op < 83:
						ul.Delete(k)
						mine.drop(k)
					case op < 86:
						ul.Clean()
						mine.clean(time.Now().UnixNano())
					default:
						time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond)
					}
				}
			})
		})
	}
}

// TestMemCountersRollOver checks a window's edges: the count goes on up
// to the window's last nanosecond and starts again at 1 after it, with a
// new window from that instant.
func TestMemCountersRollOver(t *testing.T) {
	s := &memCounters{}
	kc := &keyCache{key: "k"}
	const d = time.Minute
	t0 := int64(1_700_000_000_123_456_789)
	if n, end := s.hit("k", kc, d, t0); n != 1 || end != t0+int64(d) {
		t.Fatalf("first hit = %d, %d", n, end)
	}
	if n, end := s.hit("k", kc, d, t0+int64(d)); n != 2 || end != t0+int64(d) {
		t.Fatalf("hit at the window's end = %d, %d", n, end)
	}
	if n, end := s.peek("k", d, t0+int64(d)); n != 2 || end != t0+int64(d) {
		t.Fatalf("peek at the window's end = %d, %d", n, end)
	}
	t1 := t0 + int64(d) + 1
	if n, end := s.peek("k", d, t1); n != 0 || end != t1+int64(d) {
		t.Fatalf("peek after the window = %d, %d", n, end)
	}
	if n, end := s.hit("k", kc, d, t1); n != 1 || end != t1+int64(d) {
		t.Fatalf("hit after the window = %d, %d", n, end)
	}
	if n, _ := s.hit("k", nil, d, t1+5); n != 2 {
		t.Fatalf("hit by key after the window = %d", n)
	}
}

// TestMemCountersDeadCounter checks that a counter cleaned or dropped
// while an Engine still holds it (in a keyCache) is not counted into:
// the next hit finds the key's new counter in the table, which every
// reader sees.
func TestMemCountersDeadCounter(t *testing.T) {
	s := &memCounters{}
	kc := &keyCache{key: "k"}
	const d = time.Second
	t0 := int64(1_700_000_000_000_000_000)
	s.hit("k", kc, d, t0)
	old := kc.ctr.Load()
	s.clean(t0 + int64(d) + 1) // the window ended: removed
	if !old.dead {
		t.Fatal("the cleaned counter is not marked dead")
	}
	if n, _ := s.hit("k", kc, d, t0+int64(d)+2); n != 1 {
		t.Fatalf("hit after cleaning = %d", n)
	}
	if kc.ctr.Load() == old {
		t.Fatal("the keyCache still holds the dead counter")
	}
	if n, _ := s.hit("k", nil, d, t0+int64(d)+3); n != 2 {
		t.Fatalf("hit by key = %d: the cached and the table's counters differ", n)
	}
	s.drop("k")
	if n, _ := s.peek("k", d, t0+int64(d)+4); n != 0 {
		t.Fatalf("peek after drop = %d", n)
	}
	if n, _ := s.hit("k", kc, d, t0+int64(d)+5); n != 1 {
		t.Fatalf("hit after drop = %d", n)
	}
	if n, _ := s.peek("k", d, t0+int64(d)+6); n != 1 {
		t.Fatalf("peek after the hit = %d", n)
	}
	// A counter not yet ended is not cleaned.
	s.clean(t0 + int64(d) + 7)
	if n, _ := s.hit("k", kc, d, t0+int64(d)+8); n != 2 {
		t.Fatalf("hit after a clean that had nothing to remove = %d", n)
	}
}

// TestMemCountersConcurrent counts from many goroutines, half through
// shared keyCaches and half by key, while other goroutines clean (nothing
// has ended) and drop and count a key of their own: every count of the
// shared keys is kept, and the dropped key's counts after its last drop
// are exact.
func TestMemCountersConcurrent(t *testing.T) {
	s := &memCounters{}
	const d = time.Hour
	now := time.Now().UnixNano()
	keys := []string{"a", "b", "c"}
	caches := []*keyCache{{key: "a"}, {key: "b"}, {key: "c"}}
	const workers, per = 16, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				j := (w + i) % len(keys)
				if w%2 == 0 {
					s.hit(keys[j], caches[j], d, now)
				} else {
					s.hit(keys[j], nil, d, now)
				}
			}
		})
	}
	dropped := &keyCache{key: "x"}
	wg.Go(func() {
		for range 500 {
			s.clean(now)
			s.drop("x")
			s.hit("x", dropped, d, now)
		}
	})
	wg.Wait()
	var total int64
	for _, k := range keys {
		n, _ := s.peek(k, d, now)
		total += n
	}
	if total != workers*per {
		t.Errorf("counted %d, want %d", total, workers*per)
	}
	if n, _ := s.peek("x", d, now); n != 1 {
		t.Errorf("dropped key counts %d, want 1", n)
	}
}

// TestMemCountersCleanRaces ends a window, then counts in the next one
// from several goroutines (through a shared keyCache and by key) while
// another cleans at the same instant, round after round: the cleaner
// removes the ended counter before, during or after the first counts of
// the new window, and none of them may be lost into a removed counter.
func TestMemCountersCleanRaces(t *testing.T) {
	s := &memCounters{}
	kc := &keyCache{key: "k"}
	const d = time.Second
	const workers, per = 4, 50
	for round := range int64(300) {
		now := (round + 1) * 2 * int64(d) // each round's window ended before the next
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			s.clean(now)
		})
		for w := range workers {
			wg.Go(func() {
				<-start
				for range per {
					if w%2 == 0 {
						s.hit("k", kc, d, now)
					} else {
						s.hit("k", nil, d, now)
					}
				}
			})
		}
		close(start)
		wg.Wait()
		if n, _ := s.peek("k", d, now); n != workers*per {
			t.Fatalf("round %d: counted %d, want %d", round, n, workers*per)
		}
	}
}

func TestUnixSeconds(t *testing.T) {
	for _, ns := range []int64{0, 1, 999_999_999, 1_000_000_000, 1_700_000_000_123_456_789, -1, -999_999_999, -1_000_000_000, -1_000_000_001} {
		if got, want := unixSeconds(ns), time.Unix(0, ns).Unix(); got != want {
			t.Errorf("unixSeconds(%d) = %d, want %d", ns, got, want)
		}
	}
}
