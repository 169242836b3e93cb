package script

import (
	"encoding/json"
	"errors"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// ErrMemoryLimit is wrapped by the Failure of a JavaScript run stopped by
// the heap watchdog.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// jsHeapPoll is how often the heap watchdog looks at the Go heap while a
// JavaScript run is in progress.
const jsHeapPoll = 5 * time.Millisecond

// heapMetric is the Go heap occupied by objects, live or not yet swept;
// reading it does not stop the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapWatch is the one watchdog of the process.
var heapWatch = &heapWatchdog{running: map[*goja.Runtime]struct{}{}}

// heapWatchdog interrupts the JavaScript runs in progress when the Go heap
// grows past a limit. goja has no allocation accounting of its own, so
// this is the one bound on a script that grows a string or an array in a
// loop faster than its time limit ends it. The heap is the process's, so
// when it trips every run in progress at that moment fails with
// "Script error: memory limit exceeded"; the server goes on.
type heapWatchdog struct {
	mu      sync.Mutex
	running map[*goja.Runtime]struct{}
	once    sync.Once
	limit   uint64
}

// heapLimit is the heap size past which runs are interrupted: 90% of the
// Go memory limit (GOMEMLIMIT) when one is set, else the heap in use when
// the first run starts plus 1 GiB.
func heapLimit() uint64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l != math.MaxInt64 {
		return uint64(l) / 10 * 9
	}
	return readHeap() + 1<<30
}

func readHeap() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// enter registers a run in progress (starting the watchdog on first use).
func (w *heapWatchdog) enter(rt *goja.Runtime) *goja.Runtime {
	w.start()
	w.mu.Lock()
	w.running[rt] = struct{}{}
	w.mu.Unlock()
	return rt
}

// start sets the limit and starts the watchdog, once.
func (w *heapWatchdog) start() {
	w.once.Do(func() {
		l := heapLimit()
		w.mu.Lock()
		w.limit = l
		w.mu.Unlock()
		go w.loop()
	})
}

// leave removes a run that ended.
func (w *heapWatchdog) leave(rt *goja.Runtime) {
	w.mu.Lock()
	delete(w.running, rt)
	w.mu.Unlock()
}

func (w *heapWatchdog) loop() {
	t := time.NewTicker(jsHeapPoll)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		n, limit := len(w.running), w.limit
		w.mu.Unlock()
		if n == 0 || readHeap() < limit {
			continue
		}
		w.mu.Lock()
		for rt := range w.running {
			rt.Interrupt(ErrMemoryLimit)
		}
		w.mu.Unlock()
	}
}

// jsonShape turns any Go value into its JSON shape (maps, slices,
// strings, float64, bool, nil).
func jsonShape(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return g, nil
}
