package rws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// Defaults applied by New to a zero Config field.
const (
	// DefaultTimeout bounds a whole exchange with the upstream.
	DefaultTimeout = 30 * time.Second
	// DefaultCacheTTL is how long a cached GET response lives, as
	// DreamFactory's default_cache_ttl.
	DefaultCacheTTL = 300 * time.Second
	// DefaultCacheMaxEntries bounds the number of cached responses.
	DefaultCacheMaxEntries = 1024
	// DefaultCacheMaxBytes bounds the bytes held by the cache.
	DefaultCacheMaxBytes int64 = 32 << 20
	// DefaultCacheMaxEntryBytes is the largest response body that is cached.
	DefaultCacheMaxEntryBytes int64 = 1 << 20
)

// Verbs is a set of HTTP methods as a DreamFactory verb mask (GET 1, POST 2,
// PUT 4, PATCH 8, DELETE 16, OPTIONS 32, HEAD 64). The zero value means
// every method.
type Verbs int

// Verb bits of a Verbs mask.
const (
	VerbGet     Verbs = 1
	VerbPost    Verbs = 2
	VerbPut     Verbs = 4
	VerbPatch   Verbs = 8
	VerbDelete  Verbs = 16
	VerbOptions Verbs = 32
	VerbHead    Verbs = 64
	// AllVerbs is every verb a service answers.
	AllVerbs = VerbGet | VerbPost | VerbPut | VerbPatch | VerbDelete | VerbOptions | VerbHead
)

var verbBits = map[string]Verbs{
	http.MethodGet: VerbGet, http.MethodPost: VerbPost, http.MethodPut: VerbPut,
	http.MethodPatch: VerbPatch, http.MethodDelete: VerbDelete,
	http.MethodOptions: VerbOptions, http.MethodHead: VerbHead,
	// DreamFactory's synonyms.
	"READ": VerbGet, "CREATE": VerbPost, "UPDATE": VerbPut, "MERGE": VerbPatch,
}

// Has reports whether method is in v; the zero Verbs has every method.
func (v Verbs) Has(method string) bool {
	if v == 0 {
		return true
	}
	return v&verbBits[strings.ToUpper(method)] != 0
}

// Header is a header the proxy sets on every request it forwards.
type Header struct {
	// Name is the header's name.
	Name string
	// Value is the value sent. It may hold lookups such as {user.email},
	// {role.name} or a named lookup {tenant}; see the package doc.
	Value string
	// PassFromClient sends the client's own value of the header instead,
	// falling back to Value when the client sent none. It is the only way
	// Authorization and Cookie, which are stripped by default, reach the
	// upstream; platform credentials never do.
	PassFromClient bool
	// Verbs restricts the header to some methods; zero means every method.
	Verbs Verbs
}

// Parameter is a query parameter the proxy adds to, or removes from, every
// request it forwards.
type Parameter struct {
	// Name is the parameter's name. Names are compared case-insensitively
	// when excluding, as DreamFactory does.
	Name string
	// Value is the value sent; it may hold lookups like a Header's.
	Value string
	// Exclude removes the client's parameters named Name instead of adding
	// one.
	Exclude bool
	// NotOutbound (DreamFactory's outbound: false) keeps an added parameter
	// out of the upstream request, so it only varies the cache key; on an
	// excluded parameter it still forwards the client's value.
	NotOutbound bool
	// NotCacheKey (DreamFactory's cache_key: false) keeps an excluded
	// client parameter in the cache key. It applies to Exclude entries
	// only: added parameters, whose values may carry identity, are always
	// part of the key.
	NotCacheKey bool
	// Verbs restricts the parameter to some methods; zero means every
	// method.
	Verbs Verbs
}

// Config is the configuration of one remote HTTP service. ParseConfig
// builds it from a service's JSON config; a Go program may fill it directly
// and call New.
type Config struct {
	// BaseURL is the absolute http or https URL requests are forwarded
	// below; its path prefixes every forwarded path and its query is sent
	// with every request. Userinfo becomes a Basic Authorization header.
	BaseURL string
	// Headers are set on every forwarded request (replacing the client's
	// header of the same name).
	Headers []Header
	// Parameters are added to or removed from the forwarded query (an
	// added parameter replaces the client's of the same name).
	Parameters []Parameter
	// CacheEnabled caches 200 answers to GET requests for CacheTTL.
	CacheEnabled bool
	// CacheTTL is how long a cached response lives; zero means
	// DefaultCacheTTL.
	CacheTTL time.Duration
	// Timeout bounds a whole exchange, body included; zero means
	// DefaultTimeout and a negative value means no overall bound (for
	// long-lived event streams; dial, TLS and response-header timeouts
	// still apply).
	Timeout time.Duration
	// HeaderTimeout bounds the wait for the upstream's response headers
	// alone, whatever Timeout says; zero means no bound of its own. With a
	// negative Timeout it lets an event stream run for as long as it
	// lasts while a silent upstream still fails in time (504).
	HeaderTimeout time.Duration

	// Name names the service in error messages; default "remote".
	Name string
	// UpstreamAllow restricts the addresses the proxy connects to: CIDRs,
	// IP addresses and host names ("api.example.com", "*.example.com").
	// Empty allows every address. See the package doc.
	UpstreamAllow []string
	// Lookups returns the named lookups for a request (in a Portcullis
	// instance: the system lookups after global, app, role and user
	// precedence). Built-in lookups from the caller's identity are added
	// on top. Nil means none.
	Lookups func(r *http.Request) map[string]string
	// Version is reported as {df.version}.
	Version string
	// CacheMaxEntries, CacheMaxBytes and CacheMaxEntryBytes bound the GET
	// cache; zero means the Default values.
	CacheMaxEntries    int
	CacheMaxBytes      int64
	CacheMaxEntryBytes int64
	// Logger receives upstream failures; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time
}

// Validate reports every problem with c at once. It has no side effects.
func (c Config) Validate() error {
	var errs []error
	if _, err := parseBaseURL(c.BaseURL); err != nil {
		errs = append(errs, err)
	}
	for i, h := range c.Headers {
		errs = append(errs, validateHeader(fmt.Sprintf("headers[%d]", i), h)...)
	}
	for i, p := range c.Parameters {
		errs = append(errs, validateParameter(fmt.Sprintf("parameters[%d]", i), p)...)
	}
	if c.CacheTTL < 0 {
		errs = append(errs, errors.New("cache_ttl must not be negative"))
	}
	if c.CacheMaxEntries < 0 || c.CacheMaxBytes < 0 || c.CacheMaxEntryBytes < 0 {
		errs = append(errs, errors.New("cache bounds must not be negative"))
	}
	if _, err := upstream.ParseAllowList(c.UpstreamAllow); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "remote"
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CacheMaxEntries == 0 {
		c.CacheMaxEntries = DefaultCacheMaxEntries
	}
	if c.CacheMaxBytes == 0 {
		c.CacheMaxBytes = DefaultCacheMaxBytes
	}
	if c.CacheMaxEntryBytes == 0 {
		c.CacheMaxEntryBytes = DefaultCacheMaxEntryBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// parseBaseURL checks that s is an absolute http(s) URL with a host and no
// fragment.
func parseBaseURL(s string) (*url.URL, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("base_url is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("base_url %q is not a URL: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base_url %q must be an absolute http or https URL", s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("base_url %q has no host", s)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("base_url %q must not have a fragment", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("base_url %q has an invalid port", s)
		}
	}
	return u, nil
}

// unsettable are headers a configuration may not set: they describe the
// connection or the message framing, which the proxy owns.
var unsettable = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Transfer-Encoding": true,
	"Te": true, "Trailer": true, "Upgrade": true, "Content-Length": true,
	"Proxy-Authorization": true, "Proxy-Authenticate": true,
}

func validateHeader(at string, h Header) []error {
	var errs []error
	name := http.CanonicalHeaderKey(h.Name)
	switch {
	case h.Name == "":
		errs = append(errs, fmt.Errorf("%s.name is required", at))
	case !validToken(h.Name):
		errs = append(errs, fmt.Errorf("%s.name %q is not a valid header name", at, h.Name))
	case unsettable[name]:
		errs = append(errs, fmt.Errorf("%s.name %q is a connection header the proxy manages and cannot be set", at, h.Name))
	case h.PassFromClient && isPlatformCredential(name):
		errs = append(errs, fmt.Errorf("%s: %s cannot be passed from the client: platform credentials are never forwarded", at, h.Name))
	}
	if strings.ContainsAny(h.Value, "\r\n\x00") {
		errs = append(errs, fmt.Errorf("%s.value must not contain line breaks or NUL", at))
	}
	if err := checkLookups(h.Value); err != nil {
		errs = append(errs, fmt.Errorf("%s.value: %w", at, err))
	}
	if h.Verbs < 0 || h.Verbs > AllVerbs {
		errs = append(errs, fmt.Errorf("%s.action %d is not a verb mask (0 to %d)", at, h.Verbs, AllVerbs))
	}
	return errs
}

func validateParameter(at string, p Parameter) []error {
	var errs []error
	if strings.TrimSpace(p.Name) == "" {
		errs = append(errs, fmt.Errorf("%s.name is required", at))
	}
	if err := checkLookups(p.Value); err != nil {
		errs = append(errs, fmt.Errorf("%s.value: %w", at, err))
	}
	if p.Verbs < 0 || p.Verbs > AllVerbs {
		errs = append(errs, fmt.Errorf("%s.action %d is not a verb mask (0 to %d)", at, p.Verbs, AllVerbs))
	}
	if !p.Exclude && isPlatformParameter(p.Name) {
		errs = append(errs, fmt.Errorf("%s.name %q is a platform credential parameter and cannot be added", at, p.Name))
	}
	return errs
}

// validToken reports whether s is an RFC 9110 token (a header name).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// isPlatformCredential reports whether a canonical header name carries a
// Portcullis (or DreamFactory) credential.
func isPlatformCredential(name string) bool {
	return name == "X-Platform-Api-Key" || name == "X-Platform-Session-Token" ||
		strings.HasPrefix(name, "X-Dreamfactory-")
}

// isPlatformParameter reports whether a query parameter carries a platform
// credential.
func isPlatformParameter(name string) bool {
	return strings.EqualFold(name, "api_key") || strings.EqualFold(name, "session_token")
}

// ParseConfig reads a service's JSON configuration (the DreamFactory shape:
// base_url, headers, parameters, cache_enabled, cache_ttl, timeout) and
// reports every problem at once. Keys it does not know are ignored.
//
// headers and parameters are arrays of objects with name, value, action (a
// verb mask, or a list of verbs; absent or 0 means every verb) and, for
// headers, pass_from_client, for parameters exclude, outbound (default
// true) and cache_key (default true); either may also be a plain object
// mapping names to values. cache_ttl and timeout are seconds; timeout 0
// removes the overall bound.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return c, errors.New("base_url is required")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return c, fmt.Errorf("config must be a JSON object: %w", err)
	}
	var errs []error
	fail := func(err error) { errs = append(errs, err) }

	if v, ok := present(m, "base_url"); ok {
		if err := json.Unmarshal(v, &c.BaseURL); err != nil {
			fail(errors.New("base_url must be a string"))
		}
	}
	if v, ok := present(m, "headers"); ok {
		items, err := entries("headers", v)
		if err != nil {
			fail(err)
		}
		for i, it := range items {
			at := fmt.Sprintf("headers[%d]", i)
			h := Header{Name: it.name, Value: it.value}
			if it.obj != nil {
				var es []error
				h.PassFromClient, es = flag(it.obj, at, "pass_from_client", false)
				errs = append(errs, es...)
				h.Verbs, es = verbsField(it.obj, at)
				errs = append(errs, es...)
			}
			c.Headers = append(c.Headers, h)
		}
	}
	if v, ok := present(m, "parameters"); ok {
		items, err := entries("parameters", v)
		if err != nil {
			fail(err)
		}
		for i, it := range items {
			at := fmt.Sprintf("parameters[%d]", i)
			p := Parameter{Name: it.name, Value: it.value}
			if it.obj != nil {
				var es []error
				var outbound, cacheKey bool
				p.Exclude, es = flag(it.obj, at, "exclude", false)
				errs = append(errs, es...)
				outbound, es = flag(it.obj, at, "outbound", true)
				errs = append(errs, es...)
				cacheKey, es = flag(it.obj, at, "cache_key", true)
				errs = append(errs, es...)
				p.NotOutbound, p.NotCacheKey = !outbound, !cacheKey
				p.Verbs, es = verbsField(it.obj, at)
				errs = append(errs, es...)
			}
			c.Parameters = append(c.Parameters, p)
		}
	}
	if v, ok := present(m, "cache_enabled"); ok {
		b, err := parseBool(v)
		if err != nil {
			fail(errors.New("cache_enabled must be true or false"))
		}
		c.CacheEnabled = b
	}
	if v, ok := present(m, "cache_ttl"); ok {
		n, err := parseNumber(v)
		if err != nil || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
			fail(errors.New("cache_ttl must be a whole number of seconds, 0 or more"))
		} else {
			c.CacheTTL = time.Duration(n) * time.Second
		}
	}
	if v, ok := present(m, "timeout"); ok {
		n, err := parseNumber(v)
		switch {
		case err != nil || n < 0 || n > math.MaxInt32:
			fail(errors.New("timeout must be a number of seconds, 0 or more"))
		case n == 0:
			c.Timeout = -1
		default:
			c.Timeout = time.Duration(n * float64(time.Second))
		}
	}
	if len(errs) == 0 {
		if err := c.Validate(); err != nil {
			fail(err)
		}
	} else {
		// Report the value problems too, without repeating shape errors.
		if err := (Config{BaseURL: c.BaseURL, Headers: c.Headers, Parameters: c.Parameters}).Validate(); err != nil {
			fail(err)
		}
	}
	return c, errors.Join(errs...)
}

// present returns m[key] unless it is absent or null.
func present(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	v, ok := m[key]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, false
	}
	return v, true
}

// entry is one header or parameter as configured.
type entry struct {
	name, value string
	obj         map[string]json.RawMessage // nil for the plain-object form
}

// entries reads an array of {name, value, …} objects or a plain object
// mapping names to values (sorted by name for a stable order).
func entries(field string, v json.RawMessage) ([]entry, error) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) > 0 && v[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, fmt.Errorf("%s must be an array of {name, value} objects or an object of names to values: %w", field, err)
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		var out []entry
		var errs []error
		for _, k := range names {
			s, err := scalar(m[k])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.%s: %w", field, k, err))
				continue
			}
			out = append(out, entry{name: k, value: s})
		}
		return out, errors.Join(errs...)
	case len(v) > 0 && v[0] == '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(v, &arr); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		var out []entry
		var errs []error
		for i, it := range arr {
			at := fmt.Sprintf("%s[%d]", field, i)
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(it, &obj); err != nil || obj == nil {
				errs = append(errs, fmt.Errorf("%s must be an object with name and value", at))
				continue
			}
			e := entry{obj: obj}
			if n, ok := present(obj, "name"); ok {
				if err := json.Unmarshal(n, &e.name); err != nil {
					errs = append(errs, fmt.Errorf("%s.name must be a string", at))
				}
			}
			if val, ok := present(obj, "value"); ok {
				s, err := scalar(val)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s.value: %w", at, err))
				}
				e.value = s
			}
			out = append(out, e)
		}
		return out, errors.Join(errs...)
	default:
		return nil, fmt.Errorf("%s must be an array of {name, value} objects or an object of names to values", field)
	}
}

// scalar turns a JSON string, number or boolean into its text.
func scalar(v json.RawMessage) (string, error) {
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return "", err
	}
	switch t := x.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case json.Number:
		return t.String(), nil
	case bool:
		return strconv.FormatBool(t), nil
	default:
		return "", errors.New("must be a string, number or boolean")
	}
}

// flag reads a boolean field of an entry with a default.
func flag(obj map[string]json.RawMessage, at, key string, def bool) (bool, []error) {
	v, ok := present(obj, key)
	if !ok {
		return def, nil
	}
	b, err := parseBool(v)
	if err != nil {
		return def, []error{fmt.Errorf("%s.%s must be true or false", at, key)}
	}
	return b, nil
}

// parseBool accepts true/false, 1/0 and their string forms, as
// DreamFactory's array_get_bool does.
func parseBool(v json.RawMessage) (bool, error) {
	s, err := scalar(v)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", s)
}

// parseNumber accepts a JSON number or a numeric string.
func parseNumber(v json.RawMessage) (float64, error) {
	s, err := scalar(v)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return n, nil
}

// verbsField reads "action": a verb mask or a list of verb names.
func verbsField(obj map[string]json.RawMessage, at string) (Verbs, []error) {
	v, ok := present(obj, "action")
	if !ok {
		return 0, nil
	}
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '[' {
		var names []string
		if err := json.Unmarshal(v, &names); err != nil {
			return 0, []error{fmt.Errorf("%s.action must be a verb mask or a list of verbs", at)}
		}
		var mask Verbs
		var errs []error
		for _, n := range names {
			b, ok := verbBits[strings.ToUpper(strings.TrimSpace(n))]
			if !ok {
				errs = append(errs, fmt.Errorf("%s.action: unknown verb %q", at, n))
			}
			mask |= b
		}
		return mask, errs
	}
	n, err := parseNumber(v)
	if err != nil || n != math.Trunc(n) || n < 0 || n > 1023 {
		return 0, []error{fmt.Errorf("%s.action must be a verb mask or a list of verbs", at)}
	}
	// Bits beyond HEAD (COPY, TRACE, CONNECT) name verbs the router never
	// forwards; keep the ones it does.
	mask := Verbs(n) & AllVerbs
	if n != 0 && mask == 0 {
		return 0, []error{fmt.Errorf("%s.action %d names no verb the service answers", at, int(n))}
	}
	return mask, nil
}
