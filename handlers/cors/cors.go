package cors

import (
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Rule is one CORS rule.
type Rule struct {
	Path                string
	Origins             []string // "*" allows any origin
	Headers             []string // allowed request headers; "*" allows any
	ExposedHeaders      []string
	Methods             []string // upper case
	MaxAge              int
	SupportsCredentials bool
}

// Options configures the stage.
type Options struct {
	// Rules returns the rules in force; it is called per request, so it
	// should return a precompiled, immutable value (see Compile).
	Rules func() *Set
}

// Set is a compiled, immutable list of rules.
type Set struct {
	rules []compiled
}

type compiled struct {
	Rule
	re *regexp.Regexp
}

// Compile validates and compiles rules. Invalid patterns are reported all
// at once.
func Compile(rules []Rule) (*Set, error) {
	var errs []error
	s := &Set{}
	for _, r := range rules {
		c := compiled{Rule: r}
		pattern := r.Path
		if strings.HasPrefix(pattern, "^") {
			re, err := regexp.Compile("(?i)" + pattern)
			if err != nil {
				errs = append(errs, errors.New("cors path "+strconv.Quote(r.Path)+": "+err.Error()))
				continue
			}
			c.re = re
		} else {
			parts := strings.Split(strings.TrimPrefix(pattern, "/"), "*")
			for i, p := range parts {
				parts[i] = regexp.QuoteMeta(p)
			}
			c.re = regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
		}
		s.rules = append(s.rules, c)
	}
	slices.SortStableFunc(s.rules, func(a, b compiled) int { return len(b.Path) - len(a.Path) })
	return s, errors.Join(errs...)
}

// match returns the rule for path, or nil.
func (s *Set) match(path string) *compiled {
	if s == nil {
		return nil
	}
	p := strings.TrimPrefix(path, "/")
	for i := range s.rules {
		if s.rules[i].re.MatchString(p) {
			return &s.rules[i]
		}
	}
	return nil
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Rules == nil {
		return nil, errors.New("cors: Rules is required")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var origin string
			if vs := r.Header["Origin"]; len(vs) > 0 { // Header.Get without canonicalizing
				origin = vs[0]
			}
			if origin == "" {
				next.ServeHTTP(w, r)
				return
			}
			rule := opts.Rules().match(r.URL.Path)
			if rule == nil {
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h.Add("Vary", "Origin")
			allowOrigin := ""
			for _, o := range rule.Origins {
				if o == "*" {
					allowOrigin = "*"
					if rule.SupportsCredentials {
						allowOrigin = origin // "*" is not allowed with credentials
					}
					break
				}
				if strings.EqualFold(o, origin) {
					allowOrigin = origin
					break
				}
			}
			if allowOrigin == "" {
				next.ServeHTTP(w, r)
				return
			}
			h.Set("Access-Control-Allow-Origin", allowOrigin)
			if rule.SupportsCredentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
			if !preflight {
				if len(rule.ExposedHeaders) > 0 {
					h.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposedHeaders, ", "))
				}
				next.ServeHTTP(w, r)
				return
			}
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			method := strings.ToUpper(r.Header.Get("Access-Control-Request-Method"))
			if !slices.Contains(rule.Methods, method) {
				apierr.Write(w, apierr.MethodNotAllowed(method).WithContext(map[string]any{"allowed_methods": rule.Methods}))
				return
			}
			h.Set("Access-Control-Allow-Methods", strings.Join(rule.Methods, ", "))
			if slices.Contains(rule.Headers, "*") {
				if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
					h.Set("Access-Control-Allow-Headers", req)
				}
			} else if len(rule.Headers) > 0 {
				h.Set("Access-Control-Allow-Headers", strings.Join(rule.Headers, ", "))
			}
			if rule.MaxAge > 0 {
				h.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAge))
			}
			w.WriteHeader(http.StatusNoContent)
		})
	}, nil
}
