package script

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Defaults of a Queue.
const (
	// DefaultQueueWorkers is how many queued scripts run at once when
	// QueueOptions.Workers is zero.
	DefaultQueueWorkers = 4
	// DefaultQueueSize is how many queued scripts may wait when
	// QueueOptions.Size is zero.
	DefaultQueueSize = 1024
)

// QueueOptions configure a Queue.
type QueueOptions struct {
	// Workers is how many jobs run at once; zero means DefaultQueueWorkers.
	Workers int
	// Size is how many jobs may wait; zero means DefaultQueueSize.
	Size int
	// Dropped, when set, is called for every job refused because the queue
	// was full (or closed).
	Dropped func()
	// Logger receives dropped jobs; nil means slog.Default().
	Logger *slog.Logger
}

// Queue runs queued scripts ({event}.queued) after their response has
// been sent, on a bounded pool of goroutines: a full queue drops the job
// (counted and logged) rather than delay anything.
type Queue struct {
	o       QueueOptions
	jobs    chan func(context.Context)
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.RWMutex
	closed  bool
	dropped atomic.Int64
}

// NewQueue starts a queue's workers; Close stops them.
func NewQueue(o QueueOptions) *Queue {
	if o.Workers <= 0 {
		o.Workers = DefaultQueueWorkers
	}
	if o.Size <= 0 {
		o.Size = DefaultQueueSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	q := &Queue{o: o, jobs: make(chan func(context.Context), o.Size)}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	for range o.Workers {
		q.wg.Add(1)
		go q.work()
	}
	return q
}

func (q *Queue) work() {
	defer q.wg.Done()
	for {
		select {
		case <-q.ctx.Done():
			return
		case job := <-q.jobs:
			q.run(job)
		}
	}
}

// run runs one job; a panic fails that job only.
func (q *Queue) run(job func(context.Context)) {
	defer func() {
		if r := recover(); r != nil {
			q.o.Logger.Error("queued script panicked", "panic", r)
		}
	}()
	job(q.ctx)
}

// ErrQueueFull is returned by Submit when the job was dropped.
var ErrQueueFull = errors.New("script queue full")

// Submit queues job without waiting; a full or closed queue drops it,
// counts it and returns ErrQueueFull. name is for the log.
func (q *Queue) Submit(name string, job func(ctx context.Context)) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if !q.closed {
		select {
		case q.jobs <- job:
			return nil
		default:
		}
	}
	q.dropped.Add(1)
	if q.o.Dropped != nil {
		q.o.Dropped()
	}
	q.o.Logger.Warn("queued script dropped: the script queue is full", "event", name, "size", q.o.Size, "workers", q.o.Workers)
	return ErrQueueFull
}

// Dropped returns how many jobs were dropped.
func (q *Queue) Dropped() int64 { return q.dropped.Load() }

// Len returns how many jobs wait.
func (q *Queue) Len() int { return len(q.jobs) }

// Close stops taking jobs, cancels the running ones' context and waits for
// the workers to end; jobs still waiting are dropped.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.mu.Unlock()
	q.cancel()
	q.wg.Wait()
}
