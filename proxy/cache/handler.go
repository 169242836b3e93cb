package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// MaxKeys caps the keys one request reads, writes or deletes.
const MaxKeys = 1000

// Handler serves a [Store] with DreamFactory's cache API (see the package
// doc). It is an http.Handler usable alone (the path below its mount
// point is the key) or as a service's backend (the key is the request's
// [service.Target] resource).
type Handler struct {
	// Name is the service's name, for messages.
	Name string
	// Store holds the values.
	Store Store
	// TTL is the lifetime of a value written without ?ttl=; 0 means
	// DefaultTTL.
	TTL time.Duration
	// Logger receives failures that are not the client's; nil discards.
	Logger *slog.Logger
}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.Handler(h.serve).ServeHTTP(w, r)
}

// Close closes the store.
func (h *Handler) Close() error { return h.Store.Close() }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	key := strings.Trim(r.URL.Path, "/")
	if t := service.TargetFrom(r.Context()); t != nil {
		key = t.Resource
	}
	if key != "" {
		if err := h.checkKey(key); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if key == "" {
			keys, err := h.keysParam(q)
			if err != nil {
				return err
			}
			if keys == nil {
				return apierr.BadRequest("No key/resource provided. Please provide a cache key to retrieve (or ?keys=k1,k2).")
			}
			return h.getMany(w, r, keys)
		}
		return h.getOne(w, r, key, q)
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		ttl, err := h.ttl(q)
		if err != nil {
			return err
		}
		add := r.Method == http.MethodPost
		if key == "" {
			return h.writeMany(w, r, add, ttl)
		}
		return h.writeOne(w, r, key, add, ttl)
	case http.MethodDelete:
		if key != "" {
			deleted, err := h.Store.Delete(r.Context(), key)
			if err != nil {
				return h.storeErr(r.Context(), err)
			}
			return apierr.WriteJSON(w, http.StatusOK, map[string]bool{"success": deleted[key]})
		}
		keys, err := h.keysParam(q)
		if err != nil {
			return err
		}
		if keys == nil {
			return apierr.BadRequest("No key/resource provided. Please provide a cache key to delete (or ?keys=k1,k2).")
		}
		deleted, err := h.Store.Delete(r.Context(), keys...)
		if err != nil {
			return h.storeErr(r.Context(), err)
		}
		return apierr.WriteJSON(w, http.StatusOK, deleted)
	}
	return apierr.MethodNotAllowed(r.Method)
}

// getOne answers GET /{key}: the value as the body, ?default= when it is
// missing, ?clear=true (or pull) deletes it after reading.
func (h *Handler) getOne(w http.ResponseWriter, r *http.Request, key string, q url.Values) error {
	found, err := h.Store.Get(r.Context(), key)
	if err != nil {
		return h.storeErr(r.Context(), err)
	}
	v, ok := found[key]
	if !ok {
		if q.Has("default") {
			return writeValue(w, []byte(q.Get("default")))
		}
		return apierr.NotFound("No value found for key '%s'.", key)
	}
	if truthy(q.Get("clear")) || truthy(q.Get("pull")) {
		if _, err := h.Store.Delete(r.Context(), key); err != nil {
			return h.storeErr(r.Context(), err)
		}
	}
	return writeValue(w, v)
}

// getMany answers GET /?keys=a,b: an object of the keys that exist.
func (h *Handler) getMany(w http.ResponseWriter, r *http.Request, keys []string) error {
	found, err := h.Store.Get(r.Context(), keys...)
	if err != nil {
		return h.storeErr(r.Context(), err)
	}
	out := make(map[string]json.RawMessage, len(found))
	for k, v := range found {
		out[k] = jsonValue(v)
	}
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// writeOne answers POST, PUT and PATCH /{key}: the body is the value.
func (h *Handler) writeOne(w http.ResponseWriter, r *http.Request, key string, add bool, ttl time.Duration) error {
	v, err := readValue(r)
	if err != nil {
		return err
	}
	items := []Item{{Key: key, Value: v, TTL: ttl}}
	status := http.StatusOK
	if add {
		existing, err := h.Store.Add(r.Context(), items)
		if err != nil {
			return h.storeErr(r.Context(), err)
		}
		if len(existing) > 0 {
			return apierr.Conflict("Key '%s' already exists in cache. Use PUT to update existing key.", key)
		}
		status = http.StatusCreated
	} else if err := h.Store.Set(r.Context(), items); err != nil {
		return h.storeErr(r.Context(), err)
	}
	return apierr.WriteJSON(w, status, map[string]json.RawMessage{key: jsonValue(v)})
}

// writeMany answers POST, PUT and PATCH / with an object of key/value
// pairs (or form fields). POST stores nothing when any key exists.
func (h *Handler) writeMany(w http.ResponseWriter, r *http.Request, add bool, ttl time.Duration) error {
	pairs, err := readPairs(r)
	if err != nil {
		return err
	}
	if len(pairs) > MaxKeys {
		return apierr.BadRequest("At most %d keys may be written at once.", MaxKeys)
	}
	items := make([]Item, 0, len(pairs))
	for k, v := range pairs {
		if err := h.checkKey(k); err != nil {
			return err
		}
		items = append(items, Item{Key: k, Value: v, TTL: ttl})
	}
	slices.SortFunc(items, func(a, b Item) int { return strings.Compare(a.Key, b.Key) })
	status := http.StatusOK
	if add {
		existing, err := h.Store.Add(r.Context(), items)
		if err != nil {
			return h.storeErr(r.Context(), err)
		}
		if len(existing) > 0 {
			slices.Sort(existing)
			return apierr.Conflict("Nothing was stored in cache. One or more key(s) already exists (%s).", strings.Join(existing, ",")).
				WithContext(map[string]any{"existing": existing})
		}
		status = http.StatusCreated
	} else if err := h.Store.Set(r.Context(), items); err != nil {
		return h.storeErr(r.Context(), err)
	}
	return apierr.WriteJSON(w, status, map[string]bool{"success": true})
}

// ttl reads ?ttl= (seconds) and ?forever=true.
func (h *Handler) ttl(q url.Values) (time.Duration, error) {
	if truthy(q.Get("forever")) {
		return 0, nil
	}
	if s := q.Get("ttl"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > 10*365*24*3600 {
			return 0, apierr.BadRequest("Invalid ttl '%s': give a positive number of seconds (at most ten years), or forever=true.", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	if h.TTL > 0 {
		return h.TTL, nil
	}
	return DefaultTTL, nil
}

// keysParam reads ?keys=a,b (nil when absent).
func (h *Handler) keysParam(q url.Values) ([]string, error) {
	if !q.Has("keys") {
		return nil, nil
	}
	var keys []string
	for _, k := range strings.Split(q.Get("keys"), ",") {
		if k = strings.TrimSpace(k); k == "" || slices.Contains(keys, k) {
			continue
		}
		if err := h.checkKey(k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, apierr.BadRequest("No key provided in 'keys'.")
	}
	if len(keys) > MaxKeys {
		return nil, apierr.BadRequest("At most %d keys may be named at once.", MaxKeys)
	}
	return keys, nil
}

func (h *Handler) checkKey(key string) error {
	if err := h.Store.CheckKey(key); err != nil {
		return apierr.BadRequest("Invalid cache key '%s': %v.", key, err)
	}
	return nil
}

// storeErr turns a store's failure into the envelope's error.
func (h *Handler) storeErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return apierr.ClientClosed(err)
	case errors.Is(err, ErrWrongType):
		return apierr.Conflict("The key holds a value of another kind (a Redis list, hash or set); it cannot be used as a cache value.").WithCause(err)
	case errors.Is(err, ErrTooLarge):
		return (&apierr.Error{Status: http.StatusRequestEntityTooLarge, Message: "The value is too large for the cache server."}).WithCause(err)
	case errors.Is(err, ErrUnavailable):
		return apierr.Unavailable("Cache service '%s' cannot reach its server now; try again later.", h.Name).WithCause(err)
	}
	if h.Logger != nil {
		h.Logger.Error("cache: store failed", "err", err)
	}
	return apierr.Internal(err)
}

// isJSON says whether a request body is declared as JSON; bodies without
// a type are JSON when they parse.
func isJSON(r *http.Request, body []byte) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return json.Valid(body)
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// readBody reads a request body, which must not be empty.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, apierr.BadRequest("No value/payload provided to store in cache.")
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apierr.As(err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, apierr.BadRequest("No value/payload provided to store in cache.")
	}
	return data, nil
}

// readValue reads the value of a single-key write: a JSON body is stored
// as its compact JSON text, any other body as its bytes.
func readValue(r *http.Request) ([]byte, error) {
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if !isJSON(r, data) {
		return data, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, apierr.InvalidJSON(err)
	}
	return buf.Bytes(), nil
}

// readPairs reads the key/value pairs of a keyless write: a JSON object
// (each value stored as its compact JSON text) or form fields (stored as
// JSON strings).
func readPairs(r *http.Request) (map[string][]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/x-www-form-urlencoded" {
		data, err := readBody(r)
		if err != nil {
			return nil, err
		}
		form, err := url.ParseQuery(string(data))
		if err != nil {
			return nil, apierr.BadRequest("Invalid form body: %v.", err)
		}
		out := make(map[string][]byte, len(form))
		for k, vs := range form {
			out[k], _ = json.Marshal(vs[len(vs)-1])
		}
		return out, nil
	}
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if !isJSON(r, data) {
		return nil, apierr.BadRequest("Invalid payload provided. Please provide a key/value pair.")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		if !json.Valid(data) {
			return nil, apierr.InvalidJSON(err)
		}
		return nil, apierr.BadRequest("Invalid payload provided. Please provide a key/value pair.")
	}
	if len(m) == 0 {
		return nil, apierr.BadRequest("No value/payload provided to store in cache.")
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		var buf bytes.Buffer
		_ = json.Compact(&buf, v)
		out[k] = buf.Bytes()
	}
	return out, nil
}

// writeValue answers with a stored value: JSON as application/json, other
// text as text/plain, other bytes as application/octet-stream.
func writeValue(w http.ResponseWriter, v []byte) error {
	switch {
	case json.Valid(v):
		w.Header().Set("Content-Type", "application/json")
	case utf8.Valid(v):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(v)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(v)
	return err
}

// jsonValue is a stored value inside a JSON answer: JSON as it is, other
// bytes as a JSON string.
func jsonValue(v []byte) json.RawMessage {
	if json.Valid(v) {
		return v
	}
	s, _ := json.Marshal(string(v))
	return s
}

// truthy reads a boolean query parameter.
func truthy(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b || s == "yes" || s == "on"
}
