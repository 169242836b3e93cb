package system

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// maxRecords is the most records a list returns (DreamFactory's
// MAX_RECORDS_RETURNED); larger limits are capped.
const maxRecords = 1000

// params are the query parameters of a system resource request, with the
// aliases of the table API, plus the options a wrapped body may carry.
type params struct {
	q    url.Values
	body map[string]string
}

func newParams(q url.Values) *params { return &params{q: q} }

// withBody returns p reading also the options of a wrapped body (query
// parameters win).
func (p *params) withBody(opts map[string]string) *params {
	return &params{q: p.q, body: opts}
}

// get returns the first non-empty value among names.
func (p *params) get(names ...string) string {
	for _, n := range names {
		if v := p.q.Get(n); v != "" {
			return v
		}
	}
	for _, n := range names {
		if v := p.body[n]; v != "" {
			return v
		}
	}
	return ""
}

// has reports whether any of names was given.
func (p *params) has(names ...string) bool { return p.get(names...) != "" }

// flag reads a boolean option.
func (p *params) flag(names ...string) bool { return boolParam(p.get(names...)) }

// fields returns the fields asked for; nil means all. Only plain names are
// allowed.
func (p *params) fields() ([]string, error) {
	src := p.get("fields", "select")
	if src == "" {
		return nil, nil
	}
	sel, err := filter.ParseFields(src)
	if err != nil {
		return nil, apierr.BadRequest("Invalid fields parameter: %v", err).WithCause(err)
	}
	if sel.All {
		return nil, nil
	}
	out := make([]string, 0, len(sel.Items))
	for _, it := range sel.Items {
		if it.Alias != "" || it.Term.Agg != filter.NoAggregate || len(it.Term.Path) != 1 {
			return nil, apierr.BadRequest("Invalid fields parameter: '%s' is not a field name; system resources accept field names only.", it.Term.Name())
		}
		out = append(out, it.Term.Path[0])
	}
	return out, nil
}

// related returns the relation names asked for; all is set for "*".
func (p *params) related() (names []string, all bool) {
	src := p.get("related")
	if src == "" {
		return nil, false
	}
	for _, n := range strings.Split(src, ",") {
		n = strings.TrimSpace(n)
		if n == "*" {
			return nil, true
		}
		if n != "" {
			names = append(names, n)
		}
	}
	return names, false
}

// nonNegative reads an integer option that must not be negative.
func (p *params) nonNegative(names ...string) (int64, bool, error) {
	s := p.get(names...)
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, false, apierr.BadRequest("Invalid value '%s' for parameter '%s': expected a non-negative integer.", s, names[0])
	}
	return n, true, nil
}

// limit returns the page size, capped at maxRecords; 0 and absence mean
// maxRecords.
func (p *params) limit() (int64, error) {
	n, ok, err := p.nonNegative("limit", "top")
	if err != nil {
		return 0, err
	}
	if !ok || n == 0 || n > maxRecords {
		return maxRecords, nil
	}
	return n, nil
}

// offset returns the number of records to skip.
func (p *params) offset() (int64, error) {
	n, _, err := p.nonNegative("offset", "skip")
	return n, err
}

// filterExpr parses the filter parameter; nil when absent.
func (p *params) filterExpr() (filter.Expr, error) {
	src := p.get("filter", "where")
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	e, err := filter.Parse(src)
	if err != nil {
		return nil, apierr.BadRequest("Invalid filter: %v", err).WithCause(err)
	}
	return e, nil
}

// order parses the order parameter.
func (p *params) order() ([]filter.OrderItem, error) {
	src := p.get("order", "sort", "order_by")
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	items, err := filter.ParseOrder(src)
	if err != nil {
		return nil, apierr.BadRequest("Invalid order parameter: %v", err).WithCause(err)
	}
	return items, nil
}

// ids parses the ids parameter; nil when absent.
func (p *params) ids() ([]string, error) {
	src := p.get("ids")
	if src == "" {
		return nil, nil
	}
	vals, err := filter.ParseIDs(src)
	if err != nil {
		return nil, apierr.BadRequest("Invalid ids parameter: %v", err).WithCause(err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.Text
	}
	return out, nil
}

// compileErr turns a filter compile error into a 400.
func compileErr(param string, err error) error {
	var ce *filter.CompileError
	if errors.As(err, &ce) {
		if errors.Is(err, filter.ErrUnknownField) {
			return apierr.BadRequest("Invalid or unparsable field in %s request: '%s'.", param, ce.Field).WithCause(err)
		}
		return apierr.BadRequest("Invalid %s: %v", param, err).WithCause(err)
	}
	return apierr.BadRequest("Invalid %s: %v", param, err).WithCause(err)
}
