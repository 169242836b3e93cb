package script

// SetJSHeapLimit sets the heap watchdog's limit, for tests that must not
// take a gigabyte to prove it works; it returns the previous limit.
func SetJSHeapLimit(n uint64) uint64 {
	heapWatch.start()
	heapWatch.mu.Lock()
	defer heapWatch.mu.Unlock()
	old := heapWatch.limit
	heapWatch.limit = n
	return old
}

// HeapInUse is the Go heap the watchdog reads.
func HeapInUse() uint64 { return readHeap() }

// NewJSSandbox builds one JavaScript sandbox, for its benchmark.
func NewJSSandbox() { newJSSandbox() }

// JSSandboxesBuilt is how many JavaScript sandboxes were built so far.
func JSSandboxesBuilt() int64 { return jsBuilt.Load() }

// MaxVariants is maxVariants, for its test.
const MaxVariants = maxVariants

// Variants is how many substituted variants of script name e keeps.
func Variants(e *Engine, name string) int {
	en := e.byName[name]
	en.mu.Lock()
	defer en.mu.Unlock()
	return len(en.variants)
}
