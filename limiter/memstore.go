package limiter

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// memCounters is the memory store's counter table. It counts exactly as
// ulule's memory store (drivers/store/memory, which it replaced) does,
// with three differences that change no count:
//
//   - the clock is read once per request by the caller (Engine.EvaluateInto)
//     and handed in, instead of twice per counter;
//   - an Engine keeps, with each counter key it builds (keyCache), the
//     counter it found for it, so a request's counters are reached without
//     hashing their keys into the table;
//   - a counter removed from the table (expired and cleaned, or dropped on
//     reset) is marked dead under its lock, so that an Engine still
//     holding it looks it up again instead of counting into a counter
//     nobody else reads.
//
// A window is fixed and starts at the first request of a counter: a
// counter whose window has ended (now after its end) starts again at 1
// with a new window of the period from now; the end is in Unix nanoseconds
// of the wall clock, as ulule's.
// TestMemCountersMatchUlule checks both on random sequences.
type memCounters struct {
	m sync.Map // key → *memCounter
}

// memCounter is one counter of a memory store.
type memCounter struct {
	mu    sync.Mutex
	value int64
	end   int64 // the window's end, Unix nanoseconds; 0 before the first count
	dead  bool  // removed from the table: look the key up again
}

// incrementLocked counts one request at now, starting a new window of d
// when the current one has ended.
func (c *memCounter) incrementLocked(now int64, d time.Duration) (count, end int64) {
	if c.end == 0 || now > c.end {
		c.value, c.end = 1, now+int64(d)
	} else {
		c.value++
	}
	return c.value, c.end
}

// hit counts one request on key at now (Unix nanoseconds) and returns the
// count and the window's end (Unix nanoseconds). kc, when not nil, holds
// the counter found for key by an earlier hit (read first, and updated
// when the table gave another).
func (s *memCounters) hit(key string, kc *keyCache, d time.Duration, now int64) (count, end int64) {
	if kc != nil {
		if c := kc.ctr.Load(); c != nil {
			c.mu.Lock()
			if !c.dead {
				count, end = c.incrementLocked(now, d)
				c.mu.Unlock()
				return count, end
			}
			c.mu.Unlock()
		}
	}
	for {
		var c *memCounter
		if v, ok := s.m.Load(key); ok {
			c = v.(*memCounter)
		} else {
			fresh := &memCounter{}
			v, _ := s.m.LoadOrStore(key, fresh)
			c = v.(*memCounter)
		}
		c.mu.Lock()
		if c.dead {
			// Removed since we found it; it is no longer in the table.
			c.mu.Unlock()
			continue
		}
		count, end = c.incrementLocked(now, d)
		c.mu.Unlock()
		if kc != nil {
			kc.ctr.Store(c)
		}
		return count, end
	}
}

// peek returns the count of key at now and its window's end, without
// counting; a missing or ended counter reports 0 and a window ending d
// from now.
func (s *memCounters) peek(key string, d time.Duration, now int64) (count, end int64) {
	v, ok := s.m.Load(key)
	if !ok {
		return 0, now + int64(d)
	}
	c := v.(*memCounter)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead || c.end == 0 || now > c.end {
		return 0, now + int64(d)
	}
	return c.value, c.end
}

// drop removes key's counter: the next hit starts a new one.
func (s *memCounters) drop(key string) {
	v, ok := s.m.Load(key)
	if !ok {
		return
	}
	c := v.(*memCounter)
	c.mu.Lock()
	c.dead = true
	s.m.CompareAndDelete(key, c)
	c.mu.Unlock()
}

// clean removes the counters whose window ended before now.
func (s *memCounters) clean(now int64) {
	s.m.Range(func(k, v any) bool {
		c := v.(*memCounter)
		c.mu.Lock()
		if !c.dead && (c.end == 0 || now > c.end) {
			c.dead = true
			s.m.CompareAndDelete(k, c)
		}
		c.mu.Unlock()
		return true
	})
}

// startCleaner cleans s every interval until owner is collected (the
// goroutine holds s, never owner).
func startCleaner(owner *Store, s *memCounters, interval time.Duration) {
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.clean(time.Now().UnixNano())
			case <-stop:
				return
			}
		}
	}()
	runtime.AddCleanup(owner, func(stop chan struct{}) { close(stop) }, stop)
}

// keyCache is the last full key built for a rule (for an each_user rule,
// for user uid) and, in a memory store, the counter found for it.
type keyCache struct {
	epoch, gen uint64
	uid        int64
	key        string
	ctr        atomic.Pointer[memCounter]
}
