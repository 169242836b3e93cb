package iot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// AMQP is a [Broker] over an AMQP 0-9-1 server (RabbitMQ), with
// github.com/rabbitmq/amqp091-go. One connection is shared by every
// operation, each on its own channel; a closed connection is dialled
// again by the next operation.
type AMQP struct {
	url  string
	name string

	mu   sync.Mutex
	conn *amqp.Connection
}

// NewAMQP returns a broker for the server at url (amqp://user:pass@host:port/vhost);
// name labels its connections. It does not connect until used.
func NewAMQP(url, name string) *AMQP { return &AMQP{url: url, name: name} }

// DialTimeout bounds connecting to a broker.
const DialTimeout = 5 * time.Second

// connection returns the open connection, dialling when there is none.
func (a *AMQP) connection() (*amqp.Connection, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil && !a.conn.IsClosed() {
		return a.conn, nil
	}
	c, err := amqp.DialConfig(a.url, amqp.Config{
		Dial:       amqp.DefaultDial(DialTimeout),
		Heartbeat:  10 * time.Second,
		Properties: amqp.Table{"connection_name": "portcullis " + a.name},
	})
	if err != nil {
		return nil, unavailable(err)
	}
	a.conn = c
	return c, nil
}

// channel opens a channel, dialling again once when the connection
// turns out to be closed.
func (a *AMQP) channel() (*amqp.Channel, error) {
	for attempt := 0; ; attempt++ {
		c, err := a.connection()
		if err != nil {
			return nil, err
		}
		ch, err := c.Channel()
		if err == nil {
			return ch, nil
		}
		if attempt > 0 || !c.IsClosed() {
			return nil, unavailable(err)
		}
	}
}

// Close closes the connection.
func (a *AMQP) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil && !a.conn.IsClosed() {
		return a.conn.Close()
	}
	return nil
}

// amqpQueue is a queue as a request names it: a name, or an object with
// declaration flags.
type amqpQueue struct {
	Name       string     `json:"name"`
	Durable    bool       `json:"durable"`
	Exclusive  bool       `json:"exclusive"`
	AutoDelete bool       `json:"auto_delete"`
	Passive    bool       `json:"passive"`
	Arguments  amqp.Table `json:"arguments"`
	declared   bool       // given as an object: declare with these flags
}

// amqpExchange is an exchange as a request names it.
type amqpExchange struct {
	Name       string     `json:"name"`
	Type       string     `json:"type"`
	Durable    bool       `json:"durable"`
	AutoDelete *bool      `json:"auto_delete"`
	Internal   bool       `json:"internal"`
	Passive    bool       `json:"passive"`
	Arguments  amqp.Table `json:"arguments"`
	declared   bool
}

// amqpSource is where an AMQP request sends to or takes from.
type amqpSource struct {
	Queue      *amqpQueue
	Exchange   *amqpExchange
	RoutingKey string
	Prefetch   int
}

func (s *amqpSource) String() string {
	var parts []string
	if s.Exchange != nil {
		parts = append(parts, "exchange "+s.Exchange.Name)
	}
	if s.Queue != nil {
		parts = append(parts, "queue "+s.Queue.Name)
	}
	if s.RoutingKey != "" {
		parts = append(parts, "routing key "+s.RoutingKey)
	}
	return strings.Join(parts, ", ")
}

// parseAMQPSource reads queue (alias topic), exchange, routing_key (alias
// routing) and qos from a request object.
func parseAMQPSource(m map[string]json.RawMessage) (*amqpSource, error) {
	s := &amqpSource{}
	for _, k := range []string{"queue", "topic"} {
		if raw, ok := m[k]; ok && string(raw) != "null" {
			q := &amqpQueue{}
			if err := nameOrObject(raw, &q.Name, q); err != nil {
				return nil, apierr.BadRequest("Invalid %s: %v.", k, err)
			}
			q.declared = raw[0] == '{'
			q.Arguments = fixTable(q.Arguments)
			if q.Name == "" && !q.declared {
				return nil, apierr.BadRequest("Invalid %s: a name is required.", k)
			}
			s.Queue = q
			break
		}
	}
	if raw, ok := m["exchange"]; ok && string(raw) != "null" {
		e := &amqpExchange{}
		if err := nameOrObject(raw, &e.Name, e); err != nil {
			return nil, apierr.BadRequest("Invalid exchange: %v.", err)
		}
		e.declared = raw[0] == '{'
		e.Arguments = fixTable(e.Arguments)
		if e.Name == "" {
			return nil, apierr.BadRequest("Invalid exchange: a name is required (the default exchange is used when none is given).")
		}
		switch e.Type {
		case "":
			e.Type = amqp.ExchangeFanout
		case amqp.ExchangeFanout, amqp.ExchangeDirect, amqp.ExchangeTopic, amqp.ExchangeHeaders:
		default:
			return nil, apierr.BadRequest("Invalid exchange type '%s': fanout, direct, topic or headers.", e.Type)
		}
		s.Exchange = e
	}
	for _, k := range []string{"routing_key", "routing"} {
		if raw, ok := m[k]; ok {
			if err := json.Unmarshal(raw, &s.RoutingKey); err != nil {
				return nil, apierr.BadRequest("Invalid %s: a string is required.", k)
			}
			break
		}
	}
	if raw, ok := m["qos"]; ok {
		var q struct {
			PrefetchCount int `json:"prefetch_count"`
		}
		if err := json.Unmarshal(raw, &q); err != nil || q.PrefetchCount < 0 {
			return nil, apierr.BadRequest("Invalid qos: {\"prefetch_count\": N} is expected.")
		}
		s.Prefetch = q.PrefetchCount
	}
	return s, nil
}

// nameOrObject decodes a JSON string into *name or an object into v.
func nameOrObject(raw json.RawMessage, name *string, v any) error {
	if len(raw) > 0 && raw[0] == '{' {
		return json.Unmarshal(raw, v)
	}
	if err := json.Unmarshal(raw, name); err != nil {
		return errors.New("a name or an object is expected")
	}
	return nil
}

// Source reads an AMQP subscription entry or consume request.
func (a *AMQP) Source(entry json.RawMessage) (Source, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(entry, &m); err != nil || m == nil {
		return nil, apierr.BadRequest("An object with a queue, topic or exchange is expected.")
	}
	s, err := parseAMQPSource(m)
	if err != nil {
		return nil, err
	}
	if s.Queue == nil && s.Exchange == nil {
		return nil, apierr.BadRequest("No queue/topic/exchange provided.")
	}
	return s, nil
}

// Publish sends {"queue"|"topic"|"exchange"|"routing_key", "message"}.
func (a *AMQP) Publish(ctx context.Context, body json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || len(m) == 0 {
		return apierr.BadRequest("Invalid or no data provided for publishing.")
	}
	msg, err := amqpPublishing(m)
	if err != nil {
		return err
	}
	src, err := parseAMQPSource(m)
	if err != nil {
		return err
	}
	if src.Queue == nil && src.Exchange == nil && src.RoutingKey == "" {
		return apierr.BadRequest("No topic/queue/exchange provided for message publishing.")
	}
	ch, err := a.channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	exchange, key := "", src.RoutingKey
	if src.Queue != nil {
		q, err := a.declareQueue(ch, src.Queue, false)
		if err != nil {
			return err
		}
		if key == "" {
			key = q
		}
	}
	if src.Exchange != nil {
		if err := a.declareExchange(ch, src.Exchange); err != nil {
			return err
		}
		exchange = src.Exchange.Name
		if src.Queue != nil {
			if err := ch.QueueBind(src.Queue.Name, key, exchange, false, nil); err != nil {
				return amqpErr(err)
			}
		}
	}
	if err := ch.Confirm(false); err != nil {
		return amqpErr(err)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, msg)
	if err != nil {
		return amqpErr(err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return amqpErr(err)
	}
	if !ok {
		return apierr.BadGateway("The broker did not accept the message.")
	}
	return nil
}

// amqpPublishing builds the message of a publish body: message (alias
// msg) is a string, or an object with body (alias message, msg) and AMQP
// properties.
func amqpPublishing(m map[string]json.RawMessage) (amqp.Publishing, error) {
	raw, ok := m["message"]
	if !ok {
		raw, ok = m["msg"]
	}
	if !ok || string(raw) == "null" {
		return amqp.Publishing{}, apierr.BadRequest("No message provided in data to publish.")
	}
	p := amqp.Publishing{}
	if raw[0] != '{' {
		body, ctype := payload(raw)
		p.Body, p.ContentType = body, ctype
		return p, nil
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(raw, &obj)
	var body json.RawMessage
	for _, k := range []string{"body", "message", "msg"} {
		if b, ok := obj[k]; ok {
			body = b
			delete(obj, k)
			break
		}
	}
	if body == nil {
		return p, apierr.BadRequest("No message body provided in message data object.")
	}
	p.Body, p.ContentType = payload(body)
	var props struct {
		ContentType     string     `json:"content_type"`
		ContentEncoding string     `json:"content_encoding"`
		DeliveryMode    uint8      `json:"delivery_mode"`
		Priority        uint8      `json:"priority"`
		CorrelationID   string     `json:"correlation_id"`
		ReplyTo         string     `json:"reply_to"`
		Expiration      string     `json:"expiration"`
		MessageID       string     `json:"message_id"`
		Timestamp       int64      `json:"timestamp"`
		Type            string     `json:"type"`
		UserID          string     `json:"user_id"`
		AppID           string     `json:"app_id"`
		Headers         amqp.Table `json:"headers"`
		AppHeaders      amqp.Table `json:"application_headers"`
	}
	rest, _ := json.Marshal(obj)
	if err := json.Unmarshal(rest, &props); err != nil {
		return p, apierr.BadRequest("Invalid message properties: %v.", err)
	}
	if props.ContentType != "" {
		p.ContentType = props.ContentType
	}
	p.ContentEncoding, p.DeliveryMode, p.Priority = props.ContentEncoding, props.DeliveryMode, props.Priority
	p.CorrelationId, p.ReplyTo, p.Expiration, p.MessageId = props.CorrelationID, props.ReplyTo, props.Expiration, props.MessageID
	p.Type, p.UserId, p.AppId = props.Type, props.UserID, props.AppID
	if props.Timestamp > 0 {
		p.Timestamp = time.Unix(props.Timestamp, 0)
	}
	p.Headers = fixTable(props.Headers)
	if p.Headers == nil {
		p.Headers = fixTable(props.AppHeaders)
	}
	if p.Headers != nil {
		if err := p.Headers.Validate(); err != nil {
			return p, apierr.BadRequest("Invalid message headers: %v.", err)
		}
	}
	return p, nil
}

// payload is a JSON value as message bytes: a string as its text, any
// other value as its JSON, with the matching content type.
func payload(raw json.RawMessage) ([]byte, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []byte(s), "text/plain"
	}
	return []byte(raw), "application/json"
}

// declareQueue makes sure q exists and returns its name. A queue named
// only is used as it is when it exists, else declared non-durable; a
// queue given as an object is declared with its flags. With anonymous, a
// missing name declares a server-named exclusive queue.
func (a *AMQP) declareQueue(ch *amqp.Channel, q *amqpQueue, anonymous bool) (string, error) {
	if q == nil || (q.Name == "" && anonymous) {
		d, err := ch.QueueDeclare("", false, true, true, false, nil)
		if err != nil {
			return "", amqpErr(err)
		}
		return d.Name, nil
	}
	if q.Passive || !q.declared {
		exists, err := a.exists(func(c *amqp.Channel) error {
			_, err := c.QueueDeclarePassive(q.Name, false, false, false, false, nil)
			return err
		})
		if err != nil {
			return "", err
		}
		if exists {
			return q.Name, nil
		}
		if q.Passive {
			return "", apierr.NotFound("The broker has no queue '%s'.", q.Name)
		}
	}
	d, err := ch.QueueDeclare(q.Name, q.Durable, q.AutoDelete, q.Exclusive, false, q.Arguments)
	if err != nil {
		return "", amqpErr(err)
	}
	return d.Name, nil
}

// declareExchange makes sure e exists: a name only is used as it is when
// it exists, else declared as DreamFactory does (fanout, non-durable,
// auto-delete); an object is declared with its flags.
func (a *AMQP) declareExchange(ch *amqp.Channel, e *amqpExchange) error {
	if e.Passive || !e.declared {
		exists, err := a.exists(func(c *amqp.Channel) error {
			return c.ExchangeDeclarePassive(e.Name, e.Type, false, false, false, false, nil)
		})
		if err != nil || exists {
			return err
		}
		if e.Passive {
			return apierr.NotFound("The broker has no exchange '%s'.", e.Name)
		}
	}
	autoDelete := e.AutoDelete == nil || *e.AutoDelete
	return amqpErr(ch.ExchangeDeclare(e.Name, e.Type, e.Durable, autoDelete, e.Internal, false, e.Arguments))
}

// exists runs a passive declaration on a channel of its own (the broker
// closes the channel when the entity is missing).
func (a *AMQP) exists(check func(*amqp.Channel) error) (bool, error) {
	ch, err := a.channel()
	if err != nil {
		return false, err
	}
	defer ch.Close()
	err = check(ch)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false, nil
	}
	if err != nil {
		return false, amqpErr(err)
	}
	return true, nil
}

// prepare declares what a consumer of src needs and returns the queue to
// consume.
func (a *AMQP) prepare(ch *amqp.Channel, src *amqpSource, prefetch int) (string, error) {
	if src.Exchange != nil {
		if err := a.declareExchange(ch, src.Exchange); err != nil {
			return "", err
		}
	}
	q, err := a.declareQueue(ch, src.Queue, src.Exchange != nil)
	if err != nil {
		return "", err
	}
	if src.Exchange != nil {
		if err := ch.QueueBind(q, src.RoutingKey, src.Exchange.Name, false, nil); err != nil {
			return "", amqpErr(err)
		}
	}
	if src.Prefetch > 0 {
		prefetch = src.Prefetch
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return "", amqpErr(err)
	}
	return q, nil
}

// Consume takes up to limit messages from the source's queue within wait,
// acknowledging those it returns; the others stay queued.
func (a *AMQP) Consume(ctx context.Context, s Source, limit int, wait time.Duration) ([]Message, error) {
	src := s.(*amqpSource)
	ch, err := a.channel()
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	q, err := a.prepare(ch, src, limit)
	if err != nil {
		return nil, err
	}
	tag := consumerTag()
	// Not ConsumeWithContext: see listenOnce. The consumer is cancelled
	// below, before the channel closes.
	deliveries, err := ch.Consume(q, tag, false, false, false, false, nil)
	if err != nil {
		return nil, amqpErr(err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	out := []Message{}
	var last *amqp.Delivery
	size := 0
collect:
	for len(out) < limit && size < MaxConsumeBytes {
		select {
		case d, ok := <-deliveries:
			if !ok {
				break collect
			}
			last = &d
			out = append(out, amqpMessage(d))
			size += len(d.Body)
		case <-timer.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	if last != nil {
		if err := last.Ack(true); err != nil {
			return nil, amqpErr(err)
		}
	}
	_ = ch.Cancel(tag, false)
	return out, nil
}

// Listen consumes src until ctx ends, acknowledging each message once
// deliver returns.
func (a *AMQP) Listen(ctx context.Context, s Source, deliver func(Message), state func(error)) {
	src := s.(*amqpSource)
	for attempt := 0; ctx.Err() == nil; attempt++ {
		err := a.listenOnce(ctx, src, deliver, func() { attempt = 0; state(nil) })
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = unavailable(errors.New("the broker closed the consumer"))
		}
		state(err)
		if !sleep(ctx, backoff(attempt)) {
			return
		}
	}
}

func (a *AMQP) listenOnce(ctx context.Context, src *amqpSource, deliver func(Message), consuming func()) error {
	ch, err := a.channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	q, err := a.prepare(ch, src, 1)
	if err != nil {
		return err
	}
	// Not ConsumeWithContext: it cancels the consumer from a goroutine of
	// its own when ctx ends, which can reach the broker after the deferred
	// Close, on a channel number a new channel (a publish) has taken: the
	// broker answers CHANNEL_ERROR and closes the whole connection. The
	// consumer is cancelled here, before the channel closes.
	tag := consumerTag()
	deliveries, err := ch.Consume(q, tag, false, false, false, false, nil)
	if err != nil {
		return amqpErr(err)
	}
	consuming()
	for {
		select {
		case <-ctx.Done():
			_ = ch.Cancel(tag, false)
			return nil
		case d, ok := <-deliveries:
			if !ok {
				return nil
			}
			deliver(amqpMessage(d))
			if err := d.Ack(false); err != nil {
				return amqpErr(err)
			}
		}
	}
}

func amqpMessage(d amqp.Delivery) Message {
	m := Message{Body: d.Body, Message: string(d.Body), Topic: d.RoutingKey, Exchange: d.Exchange,
		ContentType: d.ContentType, MessageID: d.MessageId, CorrelationID: d.CorrelationId}
	if len(d.Headers) > 0 {
		m.Headers = d.Headers
	}
	if !d.Timestamp.IsZero() {
		t := d.Timestamp
		m.Timestamp = &t
	}
	return m
}

func consumerTag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "portcullis-" + hex.EncodeToString(b)
}

// amqpErr classifies an AMQP error: the broker's refusals of a request
// (a missing or differently declared queue or exchange, access refused)
// are client errors with the broker's reason; anything else means the
// broker cannot be used now (503).
func amqpErr(err error) error {
	if err == nil {
		return nil
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && !errors.Is(err, ErrUnavailable) {
		switch ae.Code {
		case amqp.NotFound:
			return apierr.NotFound("The broker answered: %s.", ae.Reason).WithCause(err)
		case amqp.PreconditionFailed, amqp.ResourceLocked:
			return apierr.Conflict("The broker answered: %s.", ae.Reason).WithCause(err)
		case amqp.AccessRefused:
			return apierr.BadGateway("The broker refused access: %s.", ae.Reason).WithCause(err)
		}
	}
	var e *apierr.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return unavailable(fmt.Errorf("amqp: %w", err))
}

// fixTable makes a table decoded from JSON valid for AMQP: whole numbers
// become int64 (brokers refuse doubles where they expect integers, e.g.
// x-expires) and nested objects become tables.
func fixTable(t amqp.Table) amqp.Table {
	if t == nil {
		return nil
	}
	out := amqp.Table{}
	for k, v := range t {
		out[k] = fixValue(v)
	}
	return out
}

func fixValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case map[string]any:
		return fixTable(x)
	case amqp.Table:
		return fixTable(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fixValue(e)
		}
		return out
	}
	return v
}
