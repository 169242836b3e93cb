package iot

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Limits of a bounded consume.
const (
	DefaultConsumeLimit = 10
	MaxConsumeLimit     = 1000
	DefaultConsumeWait  = 5 * time.Second
	MaxConsumeWait      = 60 * time.Second
	// MaxConsumeBytes bounds the message bytes one consume collects: it
	// returns once they reach it (AMQP leaves the rest queued).
	MaxConsumeBytes = 16 << 20
	// MaxJobs caps the subscriptions of one service.
	MaxJobs = 100
	// DeliveryTimeout bounds each call a subscription makes.
	DeliveryTimeout = 30 * time.Second
)

// Handler serves a [Broker] with DreamFactory's IoT API (see the package
// doc): POST /pub, POST, GET and DELETE /sub, and Portcullis's bounded
// /consume. It is an http.Handler usable alone (the path below its mount
// point is the resource) or as a service's backend (the request's
// [service.Target] resource).
type Handler struct {
	// Name is the service's name, for messages.
	Name string
	// Kind is "amqp" or "mqtt", for messages.
	Kind string
	// Broker is the message server.
	Broker Broker
	// Pipeline returns the /api/v2 pipeline that subscriptions deliver
	// messages through; nil (or a nil result) makes POST /sub a 501.
	Pipeline func() http.Handler
	// Logger receives delivery failures; nil discards.
	Logger *slog.Logger

	mu   sync.Mutex
	subs *subscriptions
}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.Handler(h.serve).ServeHTTP(w, r)
}

// Close stops the subscriptions and closes the broker. The router closes
// a backend when its service changes or the server stops; running
// subscriptions end then, which is logged.
func (h *Handler) Close() error {
	if h.stop() {
		h.logger().Info("iot: subscriptions stopped with the service (changed, deleted or the server stopping)")
	}
	return h.Broker.Close()
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.New(slog.DiscardHandler)
}

type resourceName struct {
	Name string `json:"name"`
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	res := strings.Trim(r.URL.Path, "/")
	if t := service.TargetFrom(r.Context()); t != nil {
		res = t.Resource
	}
	switch res {
	case "":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return apierr.MethodNotAllowed(r.Method)
		}
		return apierr.WriteJSON(w, http.StatusOK, map[string][]resourceName{"resource": {{"pub"}, {"sub"}, {"consume"}}})
	case "pub":
		if r.Method != http.MethodPost {
			return apierr.MethodNotAllowed(r.Method)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return apierr.BadRequest("Invalid or no data provided for publishing.")
		}
		if err := h.Broker.Publish(r.Context(), body); err != nil {
			return h.brokerErr(r.Context(), err)
		}
		return apierr.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
	case "sub":
		switch r.Method {
		case http.MethodPost:
			return h.subscribe(w, r)
		case http.MethodGet, http.MethodHead:
			return h.listSubs(w)
		case http.MethodDelete:
			if !h.stop() {
				return apierr.NotFound("Could not find any subscription job(s) to delete.")
			}
			return apierr.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
		}
		return apierr.MethodNotAllowed(r.Method)
	case "consume":
		// POST only, also with the request in the query: consuming AMQP
		// removes messages, which a role allowed only to read must not do.
		if r.Method != http.MethodPost {
			return apierr.MethodNotAllowed(r.Method)
		}
		return h.consume(w, r)
	}
	return apierr.NotFound("Resource '%s' not found for service '%s'.", res, h.Name)
}

// readBody reads a JSON body ("" when empty).
func readBody(r *http.Request) (json.RawMessage, error) {
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apierr.As(err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, nil
	}
	if !json.Valid(data) {
		var v any
		return nil, apierr.Unmarshal(data, &v, false)
	}
	return data, nil
}

// consume answers POST /consume: {queue|topic|exchange…, limit, timeout}
// in the body, or in the query when there is no body.
func (h *Handler) consume(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if body == nil {
		body = queryObject(r.URL.Query())
	}
	var opts struct {
		Limit   json.Number `json:"limit"`
		Timeout json.Number `json:"timeout"`
	}
	if err := json.Unmarshal(body, &opts); err != nil {
		return apierr.BadRequest("Invalid consume request: an object with limit and timeout as numbers is expected.")
	}
	limit := DefaultConsumeLimit
	if opts.Limit != "" {
		n, err := strconv.Atoi(opts.Limit.String())
		if err != nil || n < 1 || n > MaxConsumeLimit {
			return apierr.BadRequest("Invalid limit '%s': between 1 and %d.", opts.Limit, MaxConsumeLimit)
		}
		limit = n
	}
	wait := DefaultConsumeWait
	if opts.Timeout != "" {
		f, err := strconv.ParseFloat(opts.Timeout.String(), 64)
		if err != nil || f < 0 || f > MaxConsumeWait.Seconds() {
			return apierr.BadRequest("Invalid timeout '%s': seconds between 0 and %d.", opts.Timeout, int(MaxConsumeWait.Seconds()))
		}
		wait = time.Duration(f * float64(time.Second))
	}
	src, err := h.Broker.Source(body)
	if err != nil {
		return err
	}
	msgs, err := h.Broker.Consume(r.Context(), src, limit, wait)
	if err != nil {
		return h.brokerErr(r.Context(), err)
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string][]Message{"resource": msgs})
}

// queryObject turns query parameters into a JSON object of strings
// (numbers stay numbers for limit, timeout and qos).
func queryObject(q url.Values) json.RawMessage {
	m := map[string]any{}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "limit", "timeout", "qos":
			m[k] = json.Number(v)
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				m[k] = v
			}
		default:
			m[k] = v
		}
	}
	data, _ := json.Marshal(m)
	return data
}

// brokerErr turns a broker's failure into the envelope's error.
func (h *Handler) brokerErr(ctx context.Context, err error) error {
	var e *apierr.Error
	switch {
	case errors.As(err, &e):
		return e
	case ctx.Err() != nil:
		return apierr.ClientClosed(err)
	case errors.Is(err, ErrUnavailable):
		return apierr.Unavailable("%s service '%s' cannot reach its broker now; try again later.", strings.ToUpper(h.Kind), h.Name).WithCause(err)
	}
	h.logger().Error("iot: broker failed", "err", err)
	return apierr.Internal(err)
}
