package policy

import (
	"hash/maphash"
	"sync"
)

// cacheKey identifies one decision: role|service|component|verb|requestor.
type cacheKey struct {
	role      int64
	service   string
	component string
	deep      bool // component is cut; see role.cacheComponent
	verb      uint16
	requestor uint8
}

// lru is a bounded least-recently-used map from cacheKey to outcome, split
// into shards so that concurrent callers rarely wait on the same lock. The
// bound is global: the shards' capacities add up to the size asked for.
type lru struct {
	seed   maphash.Seed
	shards []lruShard
}

// lruShard is one shard: a map and a doubly linked list, most recent at
// the front, behind one mutex.
type lruShard struct {
	mu   sync.Mutex
	m    map[cacheKey]*lruNode
	root lruNode // sentinel: root.next is the most recent, root.prev the least
	cap  int
	_    [40]byte // keep hot shards on separate cache lines
}

type lruNode struct {
	key        cacheKey
	val        outcome
	prev, next *lruNode
}

// shardCount returns how many shards a cache of size n gets: up to 32,
// and no shard below 64 entries, so small caches stay close to exact LRU.
func shardCount(n int) int {
	s := 1
	for s < 32 && n/(s*2) >= 64 {
		s *= 2
	}
	return s
}

func newLRU(size int) *lru {
	n := shardCount(size)
	c := &lru{seed: maphash.MakeSeed(), shards: make([]lruShard, n)}
	for i := range c.shards {
		s := &c.shards[i]
		s.cap = size / n
		if i < size%n {
			s.cap++
		}
		s.m = make(map[cacheKey]*lruNode)
		s.root.next, s.root.prev = &s.root, &s.root
	}
	return c
}

func (c *lru) shard(k *cacheKey) *lruShard {
	if len(c.shards) == 1 {
		return &c.shards[0]
	}
	h := maphash.String(c.seed, k.component)
	h ^= uint64(k.role)*0x9e3779b97f4a7c15 ^ uint64(k.verb)<<8 ^ uint64(k.requestor)
	h ^= uint64(len(k.service)) * 0xbf58476d1ce4e5b9
	h ^= h >> 31
	return &c.shards[h&uint64(len(c.shards)-1)]
}

// get returns the outcome cached for k and marks it most recently used.
func (c *lru) get(k cacheKey) (outcome, bool) {
	s := c.shard(&k)
	s.mu.Lock()
	n, ok := s.m[k]
	if !ok {
		s.mu.Unlock()
		return outcome{}, false
	}
	s.moveToFront(n)
	v := n.val
	s.mu.Unlock()
	return v, true
}

// add stores v under k, evicting the least recently used entry of the
// shard when it is full.
func (c *lru) add(k cacheKey, v outcome) {
	s := c.shard(&k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.m[k]; ok {
		n.val = v
		s.moveToFront(n)
		return
	}
	var n *lruNode
	if len(s.m) >= s.cap {
		n = s.root.prev // reuse the evicted node
		s.unlink(n)
		delete(s.m, n.key)
	} else {
		n = new(lruNode)
	}
	n.key, n.val = k, v
	s.pushFront(n)
	s.m[k] = n
}

// len returns the number of cached decisions.
func (c *lru) len() int {
	total := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		total += len(s.m)
		s.mu.Unlock()
	}
	return total
}

func (s *lruShard) unlink(n *lruNode) {
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
}

func (s *lruShard) pushFront(n *lruNode) {
	n.prev = &s.root
	n.next = s.root.next
	s.root.next.prev = n
	s.root.next = n
}

func (s *lruShard) moveToFront(n *lruNode) {
	if s.root.next == n {
		return
	}
	s.unlink(n)
	s.pushFront(n)
}
