package logstash

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Config is the configuration of a logstash service, with DreamFactory's
// keys and Portcullis's additions (content_limit, queue, compression,
// hostname, path, timeout).
type Config struct {
	Host     string       `json:"host,omitempty"`
	Port     service.Port `json:"port,omitempty"`
	Protocol string       `json:"protocol,omitempty"`
	// Level is the minimum level shipped, by name or GELF number
	// (default DEBUG: everything).
	Level LevelValue `json:"level,omitempty"`
	// Context lists the context keys shipped (an array, or one string
	// with commas); default ["_event"].
	Context Keys `json:"context,omitempty"`
	// ServiceEventMap gives events a level and message of their own.
	ServiceEventMap []EventMapping `json:"service_event_map,omitempty"`
	// ContentLimit is the most bytes of a body shipped (default 4096, at
	// most 1 MiB; 0 ships no body).
	ContentLimit *int `json:"content_limit,omitempty"`
	// Queue is the number of events that may wait (default 1024, at most
	// 1,000,000).
	Queue int `json:"queue,omitempty"`
	// Compression is gzip (default), zlib or none, for protocol gelf.
	Compression string `json:"compression,omitempty"`
	// Hostname is the GELF host field (default: the machine's name).
	Hostname string `json:"hostname,omitempty"`
	// Path is the URL path of protocol http (default /gelf).
	Path string `json:"path,omitempty"`
	// Timeout bounds one send, in seconds (default 2, at most 60).
	Timeout float64 `json:"timeout,omitempty"`
}

// EventMapping is one entry of service_event_map.
type EventMapping struct {
	Event   string     `json:"event"`
	Level   LevelValue `json:"level,omitempty"`
	Message string     `json:"message,omitempty"`
}

// LevelValue is a level in a configuration: a name ("WARNING") or a GELF
// number (4); Set says one was given.
type LevelValue struct {
	Level logship.Level
	Set   bool
	err   error
}

// UnmarshalJSON reads a name or a number; a bad one is reported by Parse.
func (l *LevelValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	if s == "" {
		return nil
	}
	l.Set = true
	l.Level, l.err = logship.ParseLevel(s)
	return nil
}

// MarshalJSON writes the level's name.
func (l LevelValue) MarshalJSON() ([]byte, error) { return json.Marshal(l.Level.String()) }

// Keys is a list of context keys: a JSON array, or a string with commas.
type Keys []string

// UnmarshalJSON reads an array of strings or one string.
func (k *Keys) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*k = trimKeys(list)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("context: expected an array of keys or a string of keys separated by commas")
	}
	*k = trimKeys(strings.Split(s, ","))
	return nil
}

func trimKeys(list []string) []string {
	out := list[:0]
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var keys = []string{"host", "port", "protocol", "level", "context", "service_event_map", "content_limit",
	"queue", "compression", "hostname", "path", "timeout"}

// ParseConfig reads and checks a logstash configuration, reporting every
// problem at once, and returns it with the connector configuration it
// makes.
func ParseConfig(raw json.RawMessage) (Config, logship.Config, error) {
	var c Config
	var errs []error
	if err := service.DecodeConfig(raw, &c, keys); err != nil {
		errs = append(errs, err)
	}
	if err := c.Port.Check(); err != nil {
		errs = append(errs, err)
	}
	if strings.ContainsAny(c.Host, "/ \t\r\n@?#") {
		errs = append(errs, fmt.Errorf("host: %q is not a host name or address", c.Host))
	}
	if c.Level.err != nil {
		errs = append(errs, fmt.Errorf("level: %w", c.Level.err))
	}
	lc := logship.Config{
		Host:        c.Host,
		Port:        c.Port.Or(logship.DefaultPort),
		Protocol:    c.Protocol,
		Compression: c.Compression,
		Context:     c.Context,
		Queue:       c.Queue,
		Hostname:    c.Hostname,
	}
	if c.Level.Set {
		lc.Level = c.Level.Level.String()
	}
	for i, m := range c.ServiceEventMap {
		if m.Level.err != nil {
			errs = append(errs, fmt.Errorf("service_event_map[%d]: level: %w", i, m.Level.err))
		}
		lvl := ""
		if m.Level.Set {
			lvl = m.Level.Level.String()
		}
		lc.EventMap = append(lc.EventMap, logship.Mapping{Event: m.Event, Level: lvl, Message: m.Message})
	}
	lc.ContentLimit = logship.DefaultContentLimit
	if c.ContentLimit != nil {
		switch n := *c.ContentLimit; {
		case n < 0 || n > 1<<20:
			errs = append(errs, fmt.Errorf("content_limit: %d is not between 0 and 1048576", n))
		case n == 0:
			lc.ContentLimit = -1 // no body
		default:
			lc.ContentLimit = n
		}
	}
	if c.Queue < 0 || c.Queue > 1_000_000 {
		errs = append(errs, fmt.Errorf("queue: %d is not between 1 and 1000000", c.Queue))
	}
	if c.Timeout < 0 || c.Timeout > 60 {
		errs = append(errs, fmt.Errorf("timeout: %g is not between 0 and 60 seconds", c.Timeout))
	}
	lc.Timeout = time.Duration(c.Timeout * float64(time.Second))
	if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
		errs = append(errs, fmt.Errorf("path: %q must start with /", c.Path))
	}
	lc, err := lc.Normal()
	if err != nil {
		errs = append(errs, err)
	}
	return c, lc, errors.Join(errs...)
}
