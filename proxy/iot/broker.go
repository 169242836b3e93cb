package iot

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Broker is a message server an IoT service publishes to and consumes
// from. Request bodies are parsed by the broker, which knows its kind's
// keys; a bad body is an *apierr.Error (400).
type Broker interface {
	// Publish sends the message the body of POST /pub describes.
	Publish(ctx context.Context, body json.RawMessage) error
	// Source reads where messages come from (a queue, exchange or topic)
	// out of a consume request or a subscription entry.
	Source(entry json.RawMessage) (Source, error)
	// Consume waits up to wait for at most limit messages from src and
	// returns those that came (none is not an error).
	Consume(ctx context.Context, src Source, limit int, wait time.Duration) ([]Message, error)
	// Listen receives messages from src until ctx ends, calling deliver
	// for each, in order. It reconnects by itself, with a growing pause,
	// and calls state with nil once it receives and with the error each
	// time it cannot.
	Listen(ctx context.Context, src Source, deliver func(Message), state func(error))
	// Close releases the broker's connections.
	Close() error
}

// Source is where messages come from, as a broker parsed it.
type Source interface {
	// String names the source for status and logs.
	String() string
}

// Message is one message received.
type Message struct {
	// Body is the message's payload.
	Body []byte `json:"-"`
	// Message is Body as text, as DreamFactory delivers it.
	Message string `json:"message"`
	// Topic is the MQTT topic, or the AMQP routing key.
	Topic string `json:"topic,omitempty"`
	// Exchange is the AMQP exchange the message came through ("" for the
	// default exchange).
	Exchange string `json:"exchange,omitempty"`
	// ContentType, MessageID, CorrelationID and Headers are AMQP
	// properties, when set.
	ContentType   string         `json:"content_type,omitempty"`
	MessageID     string         `json:"message_id,omitempty"`
	CorrelationID string         `json:"correlation_id,omitempty"`
	Headers       map[string]any `json:"headers,omitempty"`
	// Timestamp is when the message was sent (AMQP), when set.
	Timestamp *time.Time `json:"timestamp,omitempty"`
	// Retained marks an MQTT message the broker kept from before.
	Retained bool `json:"retained,omitempty"`
}

// ErrUnavailable marks a broker that cannot be reached or used now: 503;
// the next request connects again.
var ErrUnavailable = errors.New("broker unavailable")

func unavailable(err error) error { return errors.Join(ErrUnavailable, err) }

// backoff is the pause before the n-th reconnection attempt of a
// listener: 0.5 s doubling up to 10 s.
func backoff(n int) time.Duration {
	d := 500 * time.Millisecond
	for i := 0; i < n && d < 10*time.Second; i++ {
		d *= 2
	}
	return min(d, 10*time.Second)
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
