package logship

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/Graylog2/go-gelf.v2/gelf"
)

// Protocols a connector speaks.
const (
	// ProtocolGELF is GELF over UDP, compressed and chunked.
	ProtocolGELF = "gelf"
	// ProtocolUDP is the GELF message uncompressed over UDP, chunked
	// when large.
	ProtocolUDP = "udp"
	// ProtocolTCP is GELF over TCP: NUL-terminated JSON.
	ProtocolTCP = "tcp"
	// ProtocolHTTP is one POST of the JSON message per event.
	ProtocolHTTP = "http"
)

// Defaults of a Config.
const (
	DefaultPort         = 12201
	DefaultQueue        = 1024
	DefaultContentLimit = 4096
	DefaultTimeout      = 2 * time.Second
)

// Config is a connector: where to ship, what and from which level.
type Config struct {
	// Name names the connector in metrics and logs (the service's name).
	Name string
	// Host and Port are the collector's address.
	Host string
	Port int
	// Protocol is one of the Protocol constants.
	Protocol string
	// Compression is gzip (default), zlib or none, for ProtocolGELF.
	Compression string
	// Level is the minimum level shipped, by name or GELF number (see
	// ParseLevel): an event less severe is not shipped. Empty means DEBUG:
	// everything.
	Level string
	// Context lists the context keys shipped; empty means DefaultContext.
	Context []string
	// EventMap maps events to a level and message of their own.
	EventMap []Mapping
	// ContentLimit is the most bytes of a body shipped (0:
	// DefaultContentLimit; negative: no body); a longer body is cut and
	// the message says so.
	ContentLimit int
	// Queue is the number of events waiting to be sent, beyond which new
	// ones are dropped (0: DefaultQueue).
	Queue int
	// Timeout bounds one send (dial and write); 0: DefaultTimeout.
	Timeout time.Duration
	// Hostname is the GELF host field; empty: this machine's name.
	Hostname string
	// Version is the platform's version, shipped in _platform.config.
	Version string
}

// Mapping gives the events it matches a level and a message:
// DreamFactory's service_event_map. Event is an event name
// ({service}.{resource path with "."}.{verb}, see Event.Name), a prefix
// ending in ".*" (db.* matches every event of the db service), or "*".
type Mapping struct {
	Event string
	// Level is a level name or GELF number; empty means INFO.
	Level   string
	Message string

	level Level
}

func (m Mapping) matches(ev *Event, name func() string) bool {
	switch {
	case m.Event == "*":
		return true
	case strings.HasSuffix(m.Event, ".*"):
		prefix := m.Event[:len(m.Event)-1]
		svc, _ := ev.target()
		if !strings.Contains(prefix[:len(prefix)-1], ".") {
			return svc+"." == prefix
		}
		return strings.HasPrefix(name(), prefix)
	}
	return name() == m.Event
}

// Transport sends one message to a collector. Send is called from one
// goroutine at a time; Close once, after the last Send.
type Transport interface {
	Send(m *gelf.Message) error
	Close() error
}

// Options wires a connector.
type Options struct {
	// Transport sends the messages; nil dials Config's address with
	// Dial (required for ProtocolHTTP).
	Transport Transport
	// Dial opens connections to the collector; nil means net.Dialer with
	// the connector's timeout. proxy/upstream's AllowList.Dialer fits.
	Dial DialFunc
	// Metrics counts shipped, dropped and failed events; nil counts in
	// Stats only.
	Metrics *Metrics
	// Logger receives send failures (at most one line per minute); nil
	// discards them.
	Logger *slog.Logger
}

// Stats are a connector's counters.
type Stats struct {
	Sent    uint64 `json:"sent"`
	Dropped uint64 `json:"dropped"`
	Failed  uint64 `json:"failed"`
	Queued  int    `json:"queued"`
}

// Connector ships events to one collector. Ship never blocks: events wait
// in a bounded queue for the connector's sender goroutine, and are
// dropped and counted when it is full. Several connectors each format
// and send their own copy of an event.
type Connector struct {
	cfg       Config
	min       Level
	sel       selection
	needs     Needs
	transport Transport
	logger    *slog.Logger

	queue  chan *Event
	done   chan struct{}
	exited chan struct{}
	closed atomic.Bool
	once   sync.Once

	sent, dropped, failed atomic.Uint64
	mSent, mDropped       prometheus.Counter
	mFailed               prometheus.Counter
	lastLog               time.Time
}

// Needs says which parts of a request a connector's messages use, so that
// the stage captures nothing more.
type Needs struct {
	// RequestBody and ResponseBody: this many bytes of the body (0: none).
	RequestBody  int
	ResponseBody int
	// Identity: the caller's identity (_platform.session).
	Identity bool
}

// Merge returns the needs of both.
func (n Needs) Merge(o Needs) Needs {
	return Needs{RequestBody: max(n.RequestBody, o.RequestBody), ResponseBody: max(n.ResponseBody, o.ResponseBody),
		Identity: n.Identity || o.Identity}
}

// New checks cfg and starts a connector's sender. Close it when done.
func New(cfg Config, opts Options) (*Connector, error) {
	cfg, err := cfg.Normal()
	if err != nil {
		return nil, err
	}
	t := opts.Transport
	if t == nil {
		if t, err = Dial(cfg, opts.Dial); err != nil {
			return nil, err
		}
	}
	c := &Connector{
		cfg:       cfg,
		min:       mustLevel(cfg.Level),
		sel:       selection(cfg.Context),
		transport: t,
		logger:    opts.Logger,
		queue:     make(chan *Event, cfg.Queue),
		done:      make(chan struct{}),
		exited:    make(chan struct{}),
	}
	if c.sel.want("_event.request.content") || c.sel.want("_event.request.payload") {
		c.needs.RequestBody = max(cfg.ContentLimit, 0)
	}
	if c.sel.want("_event.response.content") {
		c.needs.ResponseBody = max(cfg.ContentLimit, 0)
	}
	c.needs.Identity = c.sel.want("_platform.session")
	if opts.Metrics != nil {
		c.mSent = opts.Metrics.sent.WithLabelValues(cfg.Name)
		c.mDropped = opts.Metrics.dropped.WithLabelValues(cfg.Name)
		c.mFailed = opts.Metrics.failed.WithLabelValues(cfg.Name)
	}
	go c.run()
	return c, nil
}

// Normal checks a Config, reporting every problem at once, and returns
// it with its defaults filled in.
func (cfg Config) Normal() (Config, error) {
	var errs []error
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		errs = append(errs, fmt.Errorf("port: %d is not between 1 and 65535", cfg.Port))
	}
	cfg.Protocol = strings.ToLower(cfg.Protocol)
	switch cfg.Protocol {
	case "":
		cfg.Protocol = ProtocolGELF
	case ProtocolGELF, ProtocolUDP, ProtocolTCP, ProtocolHTTP:
	default:
		errs = append(errs, fmt.Errorf("protocol: %q is not one of gelf, udp, tcp, http", cfg.Protocol))
	}
	switch cfg.Compression = strings.ToLower(cfg.Compression); cfg.Compression {
	case "":
		cfg.Compression = "gzip"
	case "gzip", "zlib", "none":
	default:
		errs = append(errs, fmt.Errorf("compression: %q is not one of gzip, zlib, none", cfg.Compression))
	}
	if cfg.Level == "" {
		cfg.Level = Debug.String()
	} else if l, err := ParseLevel(cfg.Level); err != nil {
		errs = append(errs, fmt.Errorf("level: %w", err))
	} else {
		cfg.Level = l.String()
	}
	if len(cfg.Context) == 0 {
		cfg.Context = DefaultContext
	}
	for _, k := range cfg.Context {
		if err := CheckContextKey(k); err != nil {
			errs = append(errs, err)
		}
	}
	cfg.EventMap = append([]Mapping(nil), cfg.EventMap...)
	for i := range cfg.EventMap {
		m := &cfg.EventMap[i]
		m.Event = strings.TrimSpace(m.Event)
		if m.Event == "" {
			errs = append(errs, fmt.Errorf("service_event_map[%d]: event is required", i))
		}
		m.level = Info
		if m.Level != "" {
			l, err := ParseLevel(m.Level)
			if err != nil {
				errs = append(errs, fmt.Errorf("service_event_map[%d]: level: %w", i, err))
			}
			m.level, m.Level = l, l.String()
		}
	}
	switch {
	case cfg.ContentLimit == 0:
		cfg.ContentLimit = DefaultContentLimit
	case cfg.ContentLimit < 0:
		cfg.ContentLimit = -1
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
		if cfg.Hostname == "" {
			cfg.Hostname = "portcullis"
		}
	}
	return cfg, errors.Join(errs...)
}

func mustLevel(s string) Level {
	l, _ := ParseLevel(s)
	return l
}

// CheckContextKey reports whether key can be a context key: _event or
// _platform, or a dotted path below them.
func CheckContextKey(key string) error {
	root, _, _ := strings.Cut(key, ".")
	if (root != "_event" && root != "_platform") || strings.HasSuffix(key, ".") || strings.Contains(key, "..") {
		return fmt.Errorf("context: %q is not _event, _platform or a dotted key below them (such as _event.request.headers)", key)
	}
	return nil
}

// Config returns the connector's configuration with its defaults.
func (c *Connector) Config() Config { return c.cfg }

// Needs says what the connector's messages use of a request.
func (c *Connector) Needs() Needs { return c.needs }

// Ship queues ev unless its level is below the connector's minimum. It
// never blocks: when the queue is full, ev is dropped and counted. It
// reports whether ev was queued.
func (c *Connector) Ship(ev *Event) bool {
	if c.closed.Load() {
		return false
	}
	if len(c.cfg.EventMap) == 0 && !ev.HasLevel {
		// The common case, decided without formatting anything.
		if StatusLevel(ev.Status) > c.min {
			return false
		}
	} else if lvl, _ := c.level(ev); lvl > c.min {
		return false
	}
	ev.hold()
	select {
	case c.queue <- ev:
		return true
	default:
		ev.Release()
		c.dropped.Add(1)
		if c.mDropped != nil {
			c.mDropped.Inc()
		}
		return false
	}
}

// level is ev's level and the message its mapping gives it.
func (c *Connector) level(ev *Event) (Level, string) {
	if ev.HasLevel {
		return ev.Level, ""
	}
	var name string
	nameOf := func() string {
		if name == "" {
			name = ev.Name()
		}
		return name
	}
	for _, m := range c.cfg.EventMap {
		if m.matches(ev, nameOf) {
			return m.level, m.Message
		}
	}
	return StatusLevel(ev.Status), ""
}

// Stats returns the connector's counters.
func (c *Connector) Stats() Stats {
	return Stats{Sent: c.sent.Load(), Dropped: c.dropped.Load(), Failed: c.failed.Load(), Queued: len(c.queue)}
}

// Close stops the connector: events still queued get a short while
// (Timeout) to be sent, then the transport is closed.
func (c *Connector) Close() error {
	c.once.Do(func() {
		c.closed.Store(true)
		close(c.done)
	})
	<-c.exited
	return nil
}

func (c *Connector) run() {
	defer close(c.exited)
	defer c.transport.Close()
	for {
		select {
		case ev := <-c.queue:
			c.send(ev)
		case <-c.done:
			deadline := time.Now().Add(c.cfg.Timeout)
			for time.Now().Before(deadline) {
				select {
				case ev := <-c.queue:
					c.send(ev)
					continue
				default:
				}
				return
			}
			return
		}
	}
}

func (c *Connector) send(ev *Event) {
	lvl, mapped := c.level(ev)
	m := c.message(ev, lvl, mapped)
	ev.Release() // the message holds copies of what it ships
	err := c.transport.Send(m)
	if err == nil {
		c.sent.Add(1)
		if c.mSent != nil {
			c.mSent.Inc()
		}
		return
	}
	c.failed.Add(1)
	if c.mFailed != nil {
		c.mFailed.Inc()
	}
	if c.logger != nil && time.Since(c.lastLog) > time.Minute {
		c.lastLog = time.Now()
		c.logger.Warn("log shipping failed", "connector", c.cfg.Name, "protocol", c.cfg.Protocol,
			"address", fmt.Sprintf("%s:%d", c.cfg.Host, c.cfg.Port), "error", err)
	}
}

// Metrics are the shipping counters of every connector, by connector
// name.
type Metrics struct {
	sent, dropped, failed *prometheus.CounterVec
}

// NewMetrics registers the counters portcullis_log_events_sent_total,
// _dropped_total (queue full) and _failed_total (the collector refused or
// could not be reached) with reg; a second call on the same reg shares
// them.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "portcullis_log_events_sent_total",
			Help: "Log events sent to collectors, by log service."}, []string{"service"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "portcullis_log_events_dropped_total",
			Help: "Log events dropped because the log service's queue was full, by log service."}, []string{"service"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "portcullis_log_events_failed_total",
			Help: "Log events a collector refused or could not be sent, by log service."}, []string{"service"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, p := range []**prometheus.CounterVec{&m.sent, &m.dropped, &m.failed} {
		if err := reg.Register(*p); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("logship: register metrics: %w", err)
			}
			*p = are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
	return m, nil
}

// Dropped is the dropped-events counter of the connector named name.
func (m *Metrics) Dropped(name string) prometheus.Counter { return m.dropped.WithLabelValues(name) }

// SendNow formats and sends ev on the caller's goroutine, bypassing the
// queue and the level check: for benchmarks and tools. It must not run
// while the connector's sender may be sending (use a connector whose
// queue is empty, and one caller at a time).
func (c *Connector) SendNow(ev *Event) error {
	lvl, mapped := c.level(ev)
	return c.transport.Send(c.message(ev, lvl, mapped))
}
