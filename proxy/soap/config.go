package soap

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is a soap service's configuration (the service's config object).
type Config struct {
	// WSDL is an http(s) URL or a bare file name under
	// DIR/storage/wsdl/.
	WSDL string `json:"wsdl"`
	// Options are the SOAP client options (soap_version, location, login,
	// password, ntlm_username, ntlm_password, connection_timeout,
	// cache_wsdl, stream_context, uri, user_agent); see Options.
	Options map[string]any `json:"options"`
	// Headers are SOAP headers sent with every call.
	Headers []Header `json:"headers"`
	// WSSEUsernameToken is the wsu:Id of the WSSE UsernameToken.
	WSSEUsernameToken string `json:"wsse_username_token"`
	// CacheEnabled caches GET results per service and caller role for
	// CacheTTL seconds.
	CacheEnabled bool `json:"cache_enabled"`
	// CacheTTL is the cache lifetime in seconds (default 18000).
	CacheTTL *int `json:"cache_ttl"`
}

// Header is one configured SOAP header.
type Header struct {
	// Type is "generic" (default) or "wsse".
	Type string `json:"type"`
	// Namespace and Name name the header element (generic).
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Data is the header's content: a JSON object (or its text) whose
	// string values "plat:<param>" take the incoming query parameter, or a
	// plain value. For wsse rows, Name is "username" or "password" and Data
	// the value.
	Data any `json:"data"`
	// MustUnderstand and Actor are the SOAP header attributes.
	MustUnderstand flexBool `json:"mustunderstand"`
	Actor          string   `json:"actor"`
}

// flexBool reads true/false, 1/0 and their strings.
type flexBool bool

// UnmarshalJSON accepts a boolean, a number or a string.
func (b *flexBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*b = false
	case bool:
		*b = flexBool(x)
	case float64:
		*b = x != 0
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		*b = s == "1" || s == "true" || s == "yes" || s == "on"
	default:
		return fmt.Errorf("want a boolean, got %s", data)
	}
	return nil
}

// Options are the resolved client options.
type Options struct {
	// Version is "1.1" or "1.2"; empty follows the WSDL's binding (1.1
	// first).
	Version string
	// Location overrides the endpoint of the WSDL's port.
	Location string
	// URI is the target namespace of calls without a WSDL (rpc).
	URI string
	// Login and Password are HTTP basic credentials.
	Login, Password string
	// NTLMUser and NTLMPassword switch on NTLM authentication.
	NTLMUser, NTLMPassword string
	// Timeout bounds each call and WSDL fetch (connection_timeout).
	Timeout time.Duration
	// CacheWSDL is false when cache_wsdl is WSDL_CACHE_NONE: the WSDL is
	// re-read on every request.
	CacheWSDL bool
	// UserAgent is sent with every request when set.
	UserAgent string
	// HTTPHeaders are extra HTTP headers (stream_context.http.header).
	HTTPHeaders map[string]string
}

// DefaultTimeout bounds calls when connection_timeout is not set.
const DefaultTimeout = 30 * time.Second

// DefaultCacheTTL is the default cache_ttl (DreamFactory's
// df.default_cache_ttl), in seconds.
const DefaultCacheTTL = 18000

// constants are the PHP SoapClient constants an option value may name.
var constants = map[string]int{
	"SOAP_1_1": 1, "SOAP_1_2": 2,
	"WSDL_CACHE_NONE": 0, "WSDL_CACHE_DISK": 1, "WSDL_CACHE_MEMORY": 2, "WSDL_CACHE_BOTH": 3,
	"SOAP_AUTHENTICATION_BASIC": 0, "SOAP_AUTHENTICATION_DIGEST": 1,
	"SOAP_COMPRESSION_ACCEPT": 32, "SOAP_COMPRESSION_GZIP": 0, "SOAP_COMPRESSION_DEFLATE": 16,
	"SOAP_RPC": 1, "SOAP_DOCUMENT": 2, "SOAP_ENCODED": 1, "SOAP_LITERAL": 2,
	"SOAP_SINGLE_ELEMENT_ARRAYS": 1, "SOAP_USE_XSI_ARRAY_TYPE": 4, "SOAP_WAIT_ONE_WAY_CALLS": 2,
	"SOAP_SSL_METHOD_TLS": 0, "SOAP_SSL_METHOD_SSLv2": 1, "SOAP_SSL_METHOD_SSLv3": 2, "SOAP_SSL_METHOD_SSLv23": 3,
}

// resolve turns a value naming a constant into its number.
func resolve(v any) any {
	if s, ok := v.(string); ok {
		if n, ok := constants[strings.TrimSpace(s)]; ok {
			return n
		}
	}
	return v
}

// ParseConfig reads and checks a configuration, reporting every problem
// at once.
func ParseConfig(raw json.RawMessage) (*Config, *Options, error) {
	cfg := &Config{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, cfg); err != nil {
			return nil, nil, fmt.Errorf("invalid soap configuration: %w", err)
		}
	}
	var errs []error
	cfg.WSDL = strings.TrimSpace(cfg.WSDL)
	if cfg.WSDL != "" {
		if err := checkWSDLRef(cfg.WSDL); err != nil {
			errs = append(errs, err)
		}
	}
	opts, err := parseOptions(cfg.Options)
	if err != nil {
		errs = append(errs, err)
	}
	if cfg.WSDL == "" && (opts == nil || opts.Location == "" || opts.URI == "") {
		errs = append(errs, errors.New("SOAP Services require either a WSDL or both location and URI to be configured."))
	}
	for i, h := range cfg.Headers {
		switch strings.ToLower(h.Type) {
		case "", "generic":
		case "wsse":
			if n := strings.ToLower(h.Name); n != "username" && n != "password" {
				errs = append(errs, fmt.Errorf("headers[%d]: a wsse header's name is 'username' or 'password', not %q", i, h.Name))
			}
		default:
			errs = append(errs, fmt.Errorf("headers[%d]: type must be 'generic' or 'wsse', not %q", i, h.Type))
		}
	}
	if cfg.CacheTTL != nil && *cfg.CacheTTL < 0 {
		errs = append(errs, errors.New("cache_ttl must not be negative"))
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return cfg, opts, nil
}

// checkWSDLRef accepts an http(s) URL or a bare file name.
func checkWSDLRef(ref string) error {
	if !strings.ContainsAny(ref, `/\`) {
		if ref == "." || ref == ".." {
			return fmt.Errorf("wsdl %q is not a file name", ref)
		}
		return nil
	}
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("wsdl must be an http(s) URL or a file name under storage/wsdl/, not %q", ref)
	}
	return nil
}

func parseOptions(m map[string]any) (*Options, error) {
	o := &Options{Timeout: DefaultTimeout, CacheWSDL: true}
	var errs []error
	str := func(k string, v any) string {
		switch x := v.(type) {
		case string:
			return x
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		case nil:
			return ""
		}
		errs = append(errs, fmt.Errorf("options.%s must be a string", k))
		return ""
	}
	for k, v := range m {
		v = resolve(v)
		switch strings.ToLower(k) {
		case "soap_version":
			switch x := v.(type) {
			case int:
				v = float64(x)
			}
			switch fmt.Sprint(v) {
			case "1", "1.1":
				o.Version = "1.1"
			case "2", "1.2":
				o.Version = "1.2"
			case "<nil>", "":
			default:
				errs = append(errs, fmt.Errorf("options.soap_version must be SOAP_1_1 or SOAP_1_2, not %v", v))
			}
		case "location":
			o.Location = str(k, v)
			if o.Location != "" {
				if u, err := url.Parse(o.Location); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					errs = append(errs, fmt.Errorf("options.location must be an http(s) URL, not %q", o.Location))
				}
			}
		case "uri":
			o.URI = str(k, v)
		case "login":
			o.Login = str(k, v)
		case "password":
			o.Password = str(k, v)
		case "ntlm_username":
			o.NTLMUser = str(k, v)
		case "ntlm_password":
			o.NTLMPassword = str(k, v)
		case "user_agent":
			o.UserAgent = str(k, v)
		case "connection_timeout":
			secs, ok := number(v)
			if !ok || secs < 0 {
				errs = append(errs, fmt.Errorf("options.connection_timeout must be a number of seconds, not %v", v))
			} else if secs > 0 {
				o.Timeout = time.Duration(secs * float64(time.Second))
			}
		case "cache_wsdl":
			n, ok := number(v)
			if !ok {
				errs = append(errs, fmt.Errorf("options.cache_wsdl must be a WSDL_CACHE_* constant, not %v", v))
			} else {
				o.CacheWSDL = n != 0
			}
		case "stream_context":
			if err := o.streamContext(v); err != nil {
				errs = append(errs, err)
			}
		case "verify_peer", "verify_peer_name", "allow_self_signed":
			if err := tlsOff(k, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return o, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "on", "yes":
			return 1, true
		case "false", "off", "no":
			return 0, true
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// errStreamContext is DreamFactory's message for a bad stream_context.
var errStreamContext = errors.New("SOAP Services stream_context must be a valid array (or JSON object) of parameters.")

// streamContext reads stream_context: an object (or its JSON text) of
// wrappers. TLS settings that switch off verification are refused;
// http.header and http.user_agent apply.
func (o *Options) streamContext(v any) error {
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return errStreamContext
		}
	}
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return errStreamContext
	}
	var errs []error
	for wrapper, params := range m {
		p, ok := params.(map[string]any)
		if !ok {
			return errStreamContext
		}
		switch strings.ToLower(wrapper) {
		case "ssl":
			for k, v := range p {
				if err := tlsOff("stream_context.ssl."+k, v); err != nil {
					errs = append(errs, err)
				}
			}
		case "http", "https":
			if ua, ok := p["user_agent"].(string); ok {
				o.UserAgent = ua
			}
			if err := o.httpHeaders(p["header"]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// httpHeaders reads stream_context.http.header: "Name: value" lines (a
// string or a list of strings).
func (o *Options) httpHeaders(v any) error {
	var lines []string
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		lines = strings.Split(strings.ReplaceAll(x, "\r\n", "\n"), "\n")
	case []any:
		for _, l := range x {
			s, ok := l.(string)
			if !ok {
				return errStreamContext
			}
			lines = append(lines, s)
		}
	default:
		return errStreamContext
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("stream_context.http.header line %q is not 'Name: value'", l)
		}
		if o.HTTPHeaders == nil {
			o.HTTPHeaders = map[string]string{}
		}
		o.HTTPHeaders[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return nil
}

// tlsOff refuses settings that switch off TLS verification.
func tlsOff(key string, v any) error {
	k := strings.ToLower(key[strings.LastIndex(key, ".")+1:])
	n, isNum := number(resolve(v))
	switch k {
	case "verify_peer", "verify_peer_name":
		if isNum && n == 0 {
			return fmt.Errorf("options.%s: switching off TLS verification is not allowed", key)
		}
	case "allow_self_signed":
		if isNum && n != 0 {
			return fmt.Errorf("options.%s: switching off TLS verification is not allowed", key)
		}
	}
	return nil
}

// cacheTTL is the GET cache lifetime.
func (c *Config) cacheTTL() time.Duration {
	if c.CacheTTL == nil {
		return DefaultCacheTTL * time.Second
	}
	return time.Duration(*c.CacheTTL) * time.Second
}
