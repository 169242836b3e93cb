package script

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// ErrMemoryLimit is wrapped by the Failure of a JavaScript run stopped by
// the heap watchdog.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// jsHeapPoll is how often the watchdog looks at the runs in progress (their
// contexts and deadlines) and at the Go heap while a JavaScript run is in
// progress.
const jsHeapPoll = 5 * time.Millisecond

// jsWatchIdle is how many polls without a run in progress the watchdog
// makes before it stops (it starts again with the next run).
const jsWatchIdle = 200

// heapMetric is the Go heap occupied by objects, live or not yet swept;
// reading it does not stop the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapWatch is the one watchdog of the process.
var heapWatch = &heapWatchdog{running: map[*jsVM]struct{}{}}

// heapWatchdog watches the JavaScript runs in progress: it interrupts a run
// whose context has ended (its time limit, or the caller gone) and, when
// the Go heap grows past a limit, every run in progress. Polling every
// jsHeapPoll replaces a timer per run: a run costs one registration, and
// a time limit ends a run at most one poll late. goja has no allocation
// accounting of its own, so the heap check is the one bound on a script
// that grows a string or an array in a loop faster than its time limit
// ends it. The heap is the process's, so when it trips every run in
// progress at that moment fails with "Script error: memory limit
// exceeded"; the server goes on. The poll runs only while runs are in
// progress (and a second after), so an idle server does not wake up.
type heapWatchdog struct {
	mu      sync.Mutex
	running map[*jsVM]struct{}
	polling bool
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

// start sets the limit, once.
func (w *heapWatchdog) start() {
	w.once.Do(func() {
		l := heapLimit()
		w.mu.Lock()
		w.limit = l
		w.mu.Unlock()
	})
}

// enter registers a run in progress on vm (vm.ctx set), starting the poll
// when it is not running.
func (w *heapWatchdog) enter(vm *jsVM) {
	w.start()
	w.mu.Lock()
	w.running[vm] = struct{}{}
	vm.interrupted = false
	if !w.polling {
		w.polling = true
		go w.loop()
	}
	w.mu.Unlock()
}

// leave removes a run that ended and reports whether the watchdog
// interrupted it (then the runtime must not be reused: the interrupt may
// not have been seen yet).
func (w *heapWatchdog) leave(vm *jsVM) (interrupted bool) {
	w.mu.Lock()
	delete(w.running, vm)
	interrupted = vm.interrupted
	w.mu.Unlock()
	return interrupted
}

func (w *heapWatchdog) loop() {
	t := time.NewTicker(jsHeapPoll)
	defer t.Stop()
	idle := 0
	for range t.C {
		w.mu.Lock()
		n, limit := len(w.running), w.limit
		if n == 0 {
			if idle++; idle >= jsWatchIdle {
				w.polling = false
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			continue
		}
		idle = 0
		now := time.Now()
		for vm := range w.running {
			if vm.interrupted {
				continue
			}
			if err := vm.ctx.Err(); err != nil && (err != context.DeadlineExceeded || !now.Before(vm.deadline)) {
				vm.interrupted = true
				vm.rt.Interrupt(ErrTimeLimit)
			}
		}
		w.mu.Unlock()
		if readHeap() < limit {
			continue
		}
		w.mu.Lock()
		for vm := range w.running {
			vm.interrupted = true
			vm.rt.Interrupt(ErrMemoryLimit)
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
