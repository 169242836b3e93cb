package iot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// subscriptions is the running set of a service's subscription jobs.
type subscriptions struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	jobs   []*job
}

// job is one subscription: a source and the endpoint its messages go to.
type job struct {
	entry  json.RawMessage
	src    Source
	target target

	received, delivered, failed atomic.Int64
	connected                   atomic.Bool
	lastErr                     atomic.Pointer[string]
}

// target is the endpoint a subscription calls for each message.
type target struct {
	Path    string
	Verb    string
	Query   url.Values
	Header  http.Header
	Payload map[string]any
}

// parseTarget reads an entry's "service": an endpoint string, or
// {endpoint, verb|method, parameter(s), header(s), payload}.
func parseTarget(raw json.RawMessage) (target, error) {
	t := target{Verb: http.MethodPost}
	var svc struct {
		Endpoint   string            `json:"endpoint"`
		Verb       string            `json:"verb"`
		Method     string            `json:"method"`
		Parameter  map[string]any    `json:"parameter"`
		Parameters map[string]any    `json:"parameters"`
		Header     map[string]string `json:"header"`
		Headers    map[string]string `json:"headers"`
		Payload    map[string]any    `json:"payload"`
	}
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &svc.Endpoint); err != nil {
			return t, err
		}
	} else if err := json.Unmarshal(raw, &svc); err != nil {
		return t, fmt.Errorf("service: %v", err)
	}
	p := strings.TrimLeft(strings.TrimSpace(svc.Endpoint), "/")
	p = strings.TrimPrefix(p, "api/v2/")
	if p == "" || strings.Contains(p, "..") {
		return t, fmt.Errorf("service: an endpoint such as \"api/v2/myservice/resource\" is required")
	}
	t.Path = p
	if v := strings.ToUpper(svc.Verb + svc.Method); v != "" {
		switch v {
		case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			t.Verb = v
		default:
			return t, fmt.Errorf("service: verb %q is not GET, POST, PUT, PATCH or DELETE", v)
		}
	}
	t.Query = url.Values{}
	for _, m := range []map[string]any{svc.Parameter, svc.Parameters} {
		for k, v := range m {
			t.Query.Set(k, fmt.Sprint(v))
		}
	}
	t.Header = http.Header{}
	for _, m := range []map[string]string{svc.Header, svc.Headers} {
		for k, v := range m {
			t.Header.Set(k, v)
		}
	}
	t.Payload = svc.Payload
	return t, nil
}

// subscribe answers POST /sub: one entry or a list, each a source and a
// "service"; the jobs run until DELETE /sub or the service is replaced.
func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if body == nil {
		return apierr.BadRequest("No payload provided for subscriber/consumer.")
	}
	var entries []json.RawMessage
	if body[0] == '[' {
		if err := json.Unmarshal(body, &entries); err != nil {
			return apierr.BadRequest("Invalid subscription payload: a list of objects is expected.")
		}
	} else {
		entries = []json.RawMessage{body}
	}
	if len(entries) == 0 {
		return apierr.BadRequest("No payload provided for subscriber/consumer.")
	}
	if len(entries) > MaxJobs {
		return apierr.BadRequest("At most %d subscriptions per service.", MaxJobs)
	}
	var pipeline http.Handler
	if h.Pipeline != nil {
		pipeline = h.Pipeline()
	}
	if pipeline == nil {
		return apierr.NotImplemented("Subscriptions need the platform's pipeline; this service has none.")
	}
	jobs := make([]*job, 0, len(entries))
	for i, e := range entries {
		where := ""
		if len(entries) > 1 {
			where = fmt.Sprintf("payload[%d]", i)
		} else {
			where = "payload"
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e, &m); err != nil || m == nil {
			return apierr.BadRequest("Invalid subscription %s: an object is expected.", where)
		}
		src, err := h.Broker.Source(e)
		if err != nil {
			return apierr.BadRequest("No queue/topic/exchange and/or service information provided in subscription %s: %s", where, apierr.As(err).Message)
		}
		svc, ok := m["service"]
		if !ok {
			return apierr.BadRequest("No queue/topic/exchange and/or service information provided in subscription %s.", where)
		}
		t, err := parseTarget(svc)
		if err != nil {
			return apierr.BadRequest("Invalid subscription %s: %v.", where, err)
		}
		jobs = append(jobs, &job{entry: e, src: src, target: t})
	}

	id := caller.IdentityFrom(r.Context())
	if id == nil {
		id = &caller.Identity{}
	}
	who := *id

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs != nil {
		return apierr.Conflict("System is currently running a subscription job. Please terminate the current process before subscribing to new topic(s).")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &subscriptions{cancel: cancel, jobs: jobs}
	for _, j := range jobs {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			h.Broker.Listen(ctx, j.src,
				func(m Message) { h.deliver(ctx, pipeline, &who, j, m) },
				func(err error) {
					j.connected.Store(err == nil)
					if err != nil {
						msg := err.Error()
						j.lastErr.Store(&msg)
						h.logger().Warn("iot: subscription cannot receive", "source", j.src.String(), "err", err)
					}
				})
		}()
	}
	h.subs = s
	return apierr.WriteJSON(w, http.StatusOK, struct {
		Success  bool `json:"success"`
		JobCount int  `json:"job_count"`
	}{true, len(jobs)})
}

// deliver calls a job's endpoint with one message, as the caller who
// subscribed.
func (h *Handler) deliver(ctx context.Context, pipeline http.Handler, who *caller.Identity, j *job, m Message) {
	j.received.Add(1)
	body := map[string]any{}
	for k, v := range j.target.Payload {
		body[k] = v
	}
	body["message"] = m.Message
	data, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	reply, err := service.Call(ctx, pipeline, who, service.InnerCall{
		Method: j.target.Verb, Path: j.target.Path, Query: j.target.Query, Header: j.target.Header, Body: data,
		MaxReplyBytes: 1 << 20,
	})
	switch {
	case err != nil:
		msg := "delivery: " + err.Error()
		j.lastErr.Store(&msg)
	case reply.Status >= 300:
		msg := fmt.Sprintf("delivery: %s %s answered %d: %.300s", j.target.Verb, j.target.Path, reply.Status, reply.Body)
		j.lastErr.Store(&msg)
		err = fmt.Errorf("%s", msg)
	}
	if err != nil {
		j.failed.Add(1)
		h.logger().Warn("iot: message delivery failed", "source", j.src.String(), "err", err)
		return
	}
	j.delivered.Add(1)
}

// listSubs answers GET /sub.
func (h *Handler) listSubs(w http.ResponseWriter) error {
	h.mu.Lock()
	s := h.subs
	h.mu.Unlock()
	if s == nil {
		return apierr.NotFound("Did not find any subscribed topic(s)/queue(s). Subscription job may not be running.")
	}
	type status struct {
		Sub       json.RawMessage `json:"sub"`
		Attempted int             `json:"attempted"`
		Connected bool            `json:"connected"`
		Received  int64           `json:"received"`
		Delivered int64           `json:"delivered"`
		Failed    int64           `json:"failed"`
		LastError *string         `json:"last_error"`
	}
	out := make([]status, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, status{Sub: j.entry, Attempted: 1, Connected: j.connected.Load(),
			Received: j.received.Load(), Delivered: j.delivered.Load(), Failed: j.failed.Load(), LastError: j.lastErr.Load()})
	}
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// stop ends the running subscriptions and reports whether there were any.
// It waits a few seconds at most for deliveries in flight.
func (h *Handler) stop() bool {
	h.mu.Lock()
	s := h.subs
	h.subs = nil
	h.mu.Unlock()
	if s == nil {
		return false
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return true
}
