package iot_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/iot"
	"github.com/portcullis-dev/portcullis/proxy/proxytest/relay"
)

func unique() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "pctest-" + hex.EncodeToString(b)
}

// amqpAddr and mqttAddr are the brokers' host:port, or the test skips.
func amqpAddr(t *testing.T) string {
	t.Helper()
	v := os.Getenv("PORTCULLIS_TEST_AMQP")
	if v == "" {
		t.Skip("PORTCULLIS_TEST_AMQP is not set (amqp://guest:guest@127.0.0.1:5672/)")
	}
	u, err := url.Parse(v)
	if err != nil {
		t.Fatalf("PORTCULLIS_TEST_AMQP: %v", err)
	}
	return u.Host
}

func mqttAddr(t *testing.T) string {
	t.Helper()
	v := os.Getenv("PORTCULLIS_TEST_MQTT")
	if v == "" {
		t.Skip("PORTCULLIS_TEST_MQTT is not set (tcp://127.0.0.1:1883)")
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return v
	}
	return u.Host
}

// brokerAt builds a broker of kind for the server at addr (host:port).
func brokerAt(t *testing.T, kind, addr string) iot.Broker {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	cfg := json.RawMessage(fmt.Sprintf(`{"host":%q,"port":%q}`, host, port))
	if kind == "amqp" {
		c, err := iot.ParseAMQPConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if v := os.Getenv("PORTCULLIS_TEST_AMQP"); v != "" {
			if u, err := url.Parse(v); err == nil && u.User != nil {
				c.Username = u.User.Username()
				c.Password, _ = u.User.Password()
			}
		}
		return iot.NewAMQP(c.URL(), "test")
	}
	c, err := iot.ParseMQTTConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := iot.NewMQTT(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var kinds = []struct {
	name string
	addr func(t *testing.T) string
	// src names a fresh queue or topic in a request body.
	src func(name string) string
}{
	{"amqp", amqpAddr, func(n string) string { return `"queue":` + tempQueue(n) }},
	{"mqtt", mqttAddr, func(n string) string { return fmt.Sprintf(`"topic":%q`, "pctest/"+n) }},
}

// tempQueue declares a test queue that the broker drops a minute after
// its last use.
func tempQueue(name string) string {
	return fmt.Sprintf(`{"name":%q,"arguments":{"x-expires":60000}}`, name)
}

type reply struct {
	status int
	body   string
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("not JSON (%d): %s", r.status, r.body)
	}
}

// sink is the pipeline subscriptions deliver to: it records every call.
type sink struct {
	mu    sync.Mutex
	calls []string
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Source")+" "+string(data))
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func serve(t *testing.T, kind string, b iot.Broker, pipeline http.Handler) *httptest.Server {
	h := &iot.Handler{Name: "iot", Kind: kind, Broker: b, Pipeline: func() http.Handler { return pipeline }}
	srv := httptest.NewServer(http.StripPrefix("/m", h))
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv
}

func do(t *testing.T, srv *httptest.Server, method, path, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, srv.URL+"/m"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, strings.TrimSpace(string(data))}
}

func expect(t *testing.T, what string, r reply, status int, contains string) {
	t.Helper()
	if r.status != status || !strings.Contains(r.body, contains) {
		t.Fatalf("%s = %d %s, want %d with %q", what, r.status, r.body, status, contains)
	}
}

type messages struct {
	Resource []struct {
		Message  string `json:"message"`
		Topic    string `json:"topic"`
		Retained bool   `json:"retained"`
	} `json:"resource"`
}

func texts(m messages) string {
	var out []string
	for _, r := range m.Resource {
		out = append(out, r.Message)
	}
	return strings.Join(out, ",")
}

// TestPublishAndConsume publishes and takes messages back with the
// bounded consume, on each real broker.
func TestPublishAndConsume(t *testing.T) {
	t.Run("amqp", func(t *testing.T) {
		srv := serve(t, "amqp", brokerAt(t, "amqp", amqpAddr(t)), nil)
		q := unique()
		expect(t, "resources", do(t, srv, "GET", "/", ""), 200, `{"resource":[{"name":"pub"},{"name":"sub"},{"name":"consume"}]}`)
		for i, m := range []string{`"one"`, `{"body":{"n":2},"message_id":"m2"}`, `3`} {
			expect(t, fmt.Sprint("publish ", i), do(t, srv, "POST", "/pub", fmt.Sprintf(`{"queue":%s,"message":%s}`, tempQueue(q), m)), 200, `{"success":true}`)
		}
		var got messages
		r := do(t, srv, "POST", "/consume", fmt.Sprintf(`{"queue":%q,"limit":2,"timeout":3}`, q))
		expect(t, "consume 2", r, 200, `"resource"`)
		r.json(t, &got)
		if texts(got) != `one,{"n":2}` || got.Resource[0].Topic != q {
			t.Errorf("first two = %s", r.body)
		}
		r = do(t, srv, "POST", "/consume?queue="+q+"&limit=5&timeout=0.5", "")
		r.json(t, &got)
		if texts(got) != "3" {
			t.Errorf("the rest = %s", r.body)
		}
		start := time.Now()
		expect(t, "empty", do(t, srv, "POST", "/consume", fmt.Sprintf(`{"queue":%q,"timeout":0.3}`, q)), 200, `{"resource":[]}`)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("an empty consume took %v", d)
		}

		// Through an exchange with a routing key, to a bound queue.
		ex, bound := unique(), unique()
		body := fmt.Sprintf(`{"exchange":{"name":%q,"type":"direct"},"queue":%s,"routing_key":"rk","message":"via exchange"}`, ex, tempQueue(bound))
		expect(t, "publish to an exchange", do(t, srv, "POST", "/pub", body), 200, "success")
		r = do(t, srv, "POST", "/consume", fmt.Sprintf(`{"queue":%q,"timeout":1}`, bound))
		r.json(t, &got)
		if texts(got) != "via exchange" {
			t.Errorf("from the exchange = %s", r.body)
		}

		for _, c := range []struct{ name, body, want string }{
			{"no message", fmt.Sprintf(`{"queue":%q}`, q), "No message provided in data to publish."},
			{"no destination", `{"message":"x"}`, "No topic/queue/exchange provided for message publishing."},
			{"object without body", fmt.Sprintf(`{"queue":%q,"message":{"a":1}}`, q), "No message body provided in message data object."},
			{"bad exchange type", `{"exchange":{"name":"x","type":"weird"},"message":"x"}`, "Invalid exchange type"},
			{"empty", `{}`, "Invalid or no data provided for publishing."},
		} {
			expect(t, c.name, do(t, srv, "POST", "/pub", c.body), 400, c.want)
		}
		expect(t, "passive missing queue", do(t, srv, "POST", "/pub", fmt.Sprintf(`{"queue":{"name":%q,"passive":true},"message":"x"}`, unique())), 404, "no queue")
		expect(t, "queue redeclared with other flags", do(t, srv, "POST", "/pub", fmt.Sprintf(`{"queue":{"name":%q,"durable":true},"message":"x"}`, q)), 409, "PRECONDITION_FAILED")
		expect(t, "bad limit", do(t, srv, "POST", "/consume", fmt.Sprintf(`{"queue":%q,"limit":0}`, q)), 400, "Invalid limit")
		expect(t, "no source", do(t, srv, "POST", "/consume", `{"limit":1}`), 400, "No queue/topic/exchange")
		expect(t, "unknown resource", do(t, srv, "GET", "/nope", ""), 404, "Resource 'nope' not found")
		expect(t, "wrong verb", do(t, srv, "GET", "/pub", ""), 405, "")
		expect(t, "consume is not a read", do(t, srv, "GET", "/consume?queue="+q, ""), 405, "")
	})
	t.Run("mqtt", func(t *testing.T) {
		srv := serve(t, "mqtt", brokerAt(t, "mqtt", mqttAddr(t)), nil)
		topic := "pctest/" + unique()
		// A retained message (DreamFactory's default) is there for a later consumer.
		expect(t, "publish retained", do(t, srv, "POST", "/pub", fmt.Sprintf(`{"topic":%q,"message":{"t":22.5}}`, topic+"/retained")), 200, `{"success":true}`)
		var got messages
		r := do(t, srv, "POST", "/consume", fmt.Sprintf(`{"topic":%q,"limit":1,"timeout":3}`, topic+"/#"))
		r.json(t, &got)
		if texts(got) != `{"t":22.5}` || !got.Resource[0].Retained || got.Resource[0].Topic != topic+"/retained" {
			t.Errorf("retained = %s", r.body)
		}
		expect(t, "clear the retained message", do(t, srv, "POST", "/pub", fmt.Sprintf(`{"topic":%q,"message":""}`, topic+"/retained")), 200, "success")

		// Live messages reach a consumer that is waiting.
		done := make(chan reply)
		go func() {
			done <- do(t, srv, "POST", "/consume?topic="+url.QueryEscape(topic+"/live/+")+"&limit=2&timeout=5", "")
		}()
		time.Sleep(500 * time.Millisecond)
		for _, m := range []string{"a", "b"} {
			expect(t, "publish live", do(t, srv, "POST", "/pub", fmt.Sprintf(`{"topic":%q,"message":%q,"retain":false}`, topic+"/live/"+m, m)), 200, "success")
		}
		r = <-done
		r.json(t, &got)
		if texts(got) != "a,b" {
			t.Errorf("live = %s", r.body)
		}

		for _, c := range []struct{ name, body, want string }{
			{"no topic", `{"message":"x"}`, "No topic and/or message supplied for publishing."},
			{"no message", `{"topic":"a"}`, "No topic and/or message supplied for publishing."},
			{"wildcard", `{"topic":"a/#","message":"x"}`, "has no wildcards"},
			{"bad qos", `{"topic":"a","message":"x","qos":3}`, "Invalid qos"},
		} {
			expect(t, c.name, do(t, srv, "POST", "/pub", c.body), 400, c.want)
		}
		expect(t, "bad filter", do(t, srv, "POST", "/consume", `{"topic":"a/#/b"}`), 400, "Invalid topic")
	})
}

// TestSubscriptions runs background subscriptions that deliver each
// message to an endpoint through the pipeline, and stops them.
func TestSubscriptions(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			sk := &sink{}
			srv := serve(t, k.name, brokerAt(t, k.name, k.addr(t)), sk)
			name := unique()
			expect(t, "no subscriptions", do(t, srv, "GET", "/sub", ""), 404, "Did not find any subscribed")
			expect(t, "empty", do(t, srv, "POST", "/sub", ""), 400, "No payload provided")
			expect(t, "no service", do(t, srv, "POST", "/sub", "{"+k.src(name)+"}"), 400, "service information")
			sub := fmt.Sprintf(`[{%s,"service":{"endpoint":"api/v2/sink/in","verb":"PUT","parameter":{"x":"1"},"header":{"X-Source":"iot"},"payload":{"source":"test","message":"overwritten"}}}]`, k.src(name))
			expect(t, "subscribe", do(t, srv, "POST", "/sub", sub), 200, `{"success":true,"job_count":1}`)
			expect(t, "subscribe again", do(t, srv, "POST", "/sub", sub), 409, "currently running a subscription job")
			waitFor(t, "connected", func() bool { return strings.Contains(do(t, srv, "GET", "/sub", "").body, `"connected":true`) })
			pub := fmt.Sprintf(`{%s,"message":"hello","retain":false}`, k.src(name))
			expect(t, "publish", do(t, srv, "POST", "/pub", pub), 200, "success")
			waitFor(t, "delivery", func() bool { return len(sk.got()) == 1 })
			if got, want := sk.got()[0], `PUT /api/v2/sink/in?x=1 iot {"message":"hello","source":"test"}`; got != want {
				t.Errorf("delivered %s, want %s", got, want)
			}
			r := do(t, srv, "GET", "/sub", "")
			expect(t, "status", r, 200, `"delivered":1`)
			expect(t, "stop", do(t, srv, "DELETE", "/sub", ""), 200, `{"success":true}`)
			expect(t, "stop again", do(t, srv, "DELETE", "/sub", ""), 404, "Could not find any subscription")
			expect(t, "publish after stop", do(t, srv, "POST", "/pub", pub), 200, "success")
			time.Sleep(300 * time.Millisecond)
			if n := len(sk.got()); n != 1 {
				t.Errorf("%d deliveries after the subscription stopped", n)
			}
			if k.name == "amqp" {
				// The message published after the stop waits in the queue.
				var got messages
				do(t, srv, "POST", "/consume", fmt.Sprintf(`{"queue":%q,"timeout":1}`, name)).json(t, &got)
				if texts(got) != "hello" {
					t.Errorf("queued after stop: %+v", got)
				}
			}
		})
	}
}

// TestBrokerDown puts a relay between the service and the broker: while
// it is closed publishing is a 503, and afterwards both publishing and a
// running subscription recover without a restart.
func TestBrokerDown(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			rl := relay.New(t, k.addr(t))
			sk := &sink{}
			srv := serve(t, k.name, brokerAt(t, k.name, rl.Addr()), sk)
			name := unique()
			pub := fmt.Sprintf(`{%s,"message":"m","retain":false}`, k.src(name))
			expect(t, "publish", do(t, srv, "POST", "/pub", pub), 200, "success")
			sub := fmt.Sprintf(`{%s,"service":"api/v2/sink/in"}`, k.src(name))
			expect(t, "subscribe", do(t, srv, "POST", "/sub", sub), 200, "job_count")
			waitFor(t, "connected", func() bool { return strings.Contains(do(t, srv, "GET", "/sub", "").body, `"connected":true`) })

			rl.Stop()
			r := do(t, srv, "POST", "/pub", pub)
			if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "cannot reach its broker") || !strings.Contains(r.body, `"status_code":503`) {
				t.Fatalf("broker down: publish = %d %s", r.status, r.body)
			}
			waitFor(t, "the subscription notices", func() bool { return strings.Contains(do(t, srv, "GET", "/sub", "").body, `"connected":false`) })

			rl.Start()
			waitFor(t, "publishing recovers", func() bool { return do(t, srv, "POST", "/pub", pub).status == 200 })
			waitFor(t, "the subscription reconnects", func() bool { return strings.Contains(do(t, srv, "GET", "/sub", "").body, `"connected":true`) })
			n := len(sk.got())
			expect(t, "publish after recovery", do(t, srv, "POST", "/pub", pub), 200, "success")
			waitFor(t, "delivery after recovery", func() bool { return len(sk.got()) > n })
		})
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
