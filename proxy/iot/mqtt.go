package iot

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// MQTT is a [Broker] over an MQTT 3.1.1 server (Mosquitto), with
// github.com/eclipse/paho.mqtt.golang. Publishing shares one connection,
// dialled again when it is lost; every consume and subscription has a
// connection of its own.
type MQTT struct {
	cfg MQTTConfig
	tls *tls.Config

	mu  sync.Mutex
	pub mqtt.Client
}

// NewMQTT returns a broker for cfg. It does not connect until used.
func NewMQTT(cfg MQTTConfig) (*MQTT, error) {
	t, err := cfg.TLSConfig()
	if err != nil {
		return nil, err
	}
	return &MQTT{cfg: cfg, tls: t}, nil
}

// OpTimeout bounds connecting, publishing and subscribing.
const OpTimeout = 10 * time.Second

func (m *MQTT) options() *mqtt.ClientOptions {
	id := m.cfg.ClientID
	if id == "" {
		id = "portcullis"
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	o := mqtt.NewClientOptions().AddBroker(m.cfg.Broker()).
		SetClientID(id + "-" + hex.EncodeToString(b)).
		SetUsername(m.cfg.Username).SetPassword(m.cfg.Password).
		SetProtocolVersion(4).
		SetConnectTimeout(DialTimeout).SetWriteTimeout(OpTimeout).
		SetAutoReconnect(false).SetConnectRetry(false).
		SetCleanSession(true).SetKeepAlive(15 * time.Second)
	if m.tls != nil {
		o.SetTLSConfig(m.tls)
	}
	return o
}

// connect opens a client with o.
func connect(ctx context.Context, o *mqtt.ClientOptions) (mqtt.Client, error) {
	c := mqtt.NewClient(o)
	if err := wait(ctx, c.Connect()); err != nil {
		return nil, unavailable(err)
	}
	return c, nil
}

// wait waits for a token within OpTimeout (or until ctx ends).
func wait(ctx context.Context, t mqtt.Token) error {
	timer := time.NewTimer(OpTimeout)
	defer timer.Stop()
	select {
	case <-t.Done():
		return t.Error()
	case <-timer.C:
		return errors.New("mqtt: the broker did not answer in time")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publisher returns the shared publishing connection, dialling it when
// there is none.
func (m *MQTT) publisher(ctx context.Context) (mqtt.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pub != nil && m.pub.IsConnectionOpen() {
		return m.pub, nil
	}
	if m.pub != nil {
		m.pub.Disconnect(0)
		m.pub = nil
	}
	c, err := connect(ctx, m.options())
	if err != nil {
		return nil, err
	}
	m.pub = c
	return c, nil
}

// Close disconnects the publishing connection.
func (m *MQTT) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pub != nil {
		m.pub.Disconnect(250)
		m.pub = nil
	}
	return nil
}

// Publish sends {"topic", "message" (alias msg), "qos" (default 1),
// "retain" (default true)}, as DreamFactory does.
func (m *MQTT) Publish(ctx context.Context, body json.RawMessage) error {
	var req struct {
		Topic   string          `json:"topic"`
		Message json.RawMessage `json:"message"`
		Msg     json.RawMessage `json:"msg"`
		QoS     *byte           `json:"qos"`
		Retain  *bool           `json:"retain"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return apierr.BadRequest("Invalid data provided for publishing: %v.", err)
	}
	msg := req.Message
	if len(msg) == 0 || string(msg) == "null" {
		msg = req.Msg
	}
	if req.Topic == "" || len(msg) == 0 || string(msg) == "null" {
		return apierr.BadRequest("No topic and/or message supplied for publishing.")
	}
	if strings.ContainsAny(req.Topic, "+#\x00") {
		return apierr.BadRequest("Invalid topic '%s': a topic to publish to has no wildcards.", req.Topic)
	}
	qos, retain := byte(1), true
	if req.QoS != nil {
		if *req.QoS > 2 {
			return apierr.BadRequest("Invalid qos %d: 0, 1 or 2.", *req.QoS)
		}
		qos = *req.QoS
	}
	if req.Retain != nil {
		retain = *req.Retain
	}
	data, _ := payload(msg)
	for attempt := 0; ; attempt++ {
		c, err := m.publisher(ctx)
		if err != nil {
			return err
		}
		err = wait(ctx, c.Publish(req.Topic, qos, retain, data))
		if err == nil {
			return nil
		}
		if attempt > 0 || c.IsConnectionOpen() {
			return unavailable(fmt.Errorf("mqtt publish: %w", err))
		}
	}
}

// mqttSource is the topic filters a consumer subscribes to.
type mqttSource struct {
	Topics []string
	QoS    byte
}

func (s *mqttSource) String() string { return "topic " + strings.Join(s.Topics, ", ") }

// Source reads {"topic": "a/+/c" | ["a/#", "b"], "qos": 0}.
func (m *MQTT) Source(entry json.RawMessage) (Source, error) {
	var req struct {
		Topic json.RawMessage `json:"topic"`
		QoS   byte            `json:"qos"`
	}
	if err := json.Unmarshal(entry, &req); err != nil {
		return nil, apierr.BadRequest("Invalid topic or qos: %v.", err)
	}
	s := &mqttSource{QoS: req.QoS}
	if len(req.Topic) > 0 && req.Topic[0] == '[' {
		if err := json.Unmarshal(req.Topic, &s.Topics); err != nil {
			return nil, apierr.BadRequest("Invalid topic: a string or a list of strings is expected.")
		}
	} else if len(req.Topic) > 0 {
		var t string
		if err := json.Unmarshal(req.Topic, &t); err != nil {
			return nil, apierr.BadRequest("Invalid topic: a string or a list of strings is expected.")
		}
		s.Topics = []string{t}
	}
	if len(s.Topics) == 0 {
		return nil, apierr.BadRequest("No topic provided.")
	}
	for _, t := range s.Topics {
		if err := checkFilter(t); err != nil {
			return nil, apierr.BadRequest("Invalid topic '%s': %v.", t, err)
		}
	}
	if s.QoS > 2 {
		return nil, apierr.BadRequest("Invalid qos %d: 0, 1 or 2.", s.QoS)
	}
	return s, nil
}

// checkFilter applies MQTT's rules to a topic filter: '#' only as the
// last level, '+' only as a whole level.
func checkFilter(f string) error {
	if f == "" || strings.ContainsRune(f, 0) {
		return errors.New("empty or NUL")
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		if strings.Contains(l, "#") && (l != "#" || i != len(levels)-1) {
			return errors.New("'#' must be the whole last level")
		}
		if strings.Contains(l, "+") && l != "+" {
			return errors.New("'+' must be a whole level")
		}
	}
	return nil
}

// subscribe connects a client of its own, subscribes to src and feeds
// messages to out; lost is closed when the connection drops.
func (m *MQTT) subscribe(ctx context.Context, src *mqttSource, out chan<- Message) (mqtt.Client, <-chan struct{}, error) {
	lost := make(chan struct{})
	var once sync.Once
	o := m.options().SetConnectionLostHandler(func(mqtt.Client, error) { once.Do(func() { close(lost) }) })
	c, err := connect(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	filters := map[string]byte{}
	for _, t := range src.Topics {
		filters[t] = src.QoS
	}
	handler := func(_ mqtt.Client, msg mqtt.Message) {
		select {
		case out <- Message{Body: msg.Payload(), Message: string(msg.Payload()), Topic: msg.Topic(), Retained: msg.Retained()}:
		case <-ctx.Done():
		}
	}
	if err := wait(ctx, c.SubscribeMultiple(filters, handler)); err != nil {
		c.Disconnect(0)
		return nil, nil, unavailable(fmt.Errorf("mqtt subscribe: %w", err))
	}
	return c, lost, nil
}

// Consume subscribes for at most wait and returns up to limit messages
// (retained ones first).
func (m *MQTT) Consume(ctx context.Context, s Source, limit int, wait time.Duration) ([]Message, error) {
	src := s.(*mqttSource)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan Message, limit)
	c, lost, err := m.subscribe(ctx, src, msgs)
	if err != nil {
		return nil, err
	}
	defer c.Disconnect(0)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	out := []Message{}
	for size := 0; len(out) < limit && size < MaxConsumeBytes; {
		select {
		case msg := <-msgs:
			out = append(out, msg)
			size += len(msg.Body)
		case <-timer.C:
			return out, nil
		case <-lost:
			return out, nil
		case <-ctx.Done():
			return out, nil
		}
	}
	return out, nil
}

// Listen keeps a subscription to src until ctx ends, connecting again
// after a loss.
func (m *MQTT) Listen(ctx context.Context, s Source, deliver func(Message), state func(error)) {
	src := s.(*mqttSource)
	msgs := make(chan Message, 64)
	go func() {
		for {
			select {
			case msg := <-msgs:
				deliver(msg)
			case <-ctx.Done():
				return
			}
		}
	}()
	for attempt := 0; ctx.Err() == nil; attempt++ {
		c, lost, err := m.subscribe(ctx, src, msgs)
		if err == nil {
			attempt = 0
			state(nil)
			select {
			case <-ctx.Done():
				c.Disconnect(250)
				return
			case <-lost:
				err = unavailable(errors.New("mqtt: the connection to the broker was lost"))
			}
		}
		if ctx.Err() != nil {
			return
		}
		state(err)
		if !sleep(ctx, backoff(attempt)) {
			return
		}
	}
}
