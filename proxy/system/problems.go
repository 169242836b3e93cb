package system

import (
	"fmt"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// problems collects every validation problem of a record, so that a client
// learns them all from one 400.
type problems struct {
	prefix string
	list   []problem
}

// problem is one invalid field.
type problem struct {
	Field   string
	Message string
}

// add records a problem of field.
func (p *problems) add(field, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	p.list = append(p.list, problem{Field: p.prefix + field, Message: msg})
}

// addErr records err, splitting joined errors into one problem each.
func (p *problems) addErr(field string, err error) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			p.addErr(field, e)
		}
		return
	}
	p.add(field, "%s", err.Error())
}

// nested returns a collector whose fields are prefixed with prefix and whose
// problems land in p.
func (p *problems) nested(prefix string) *problems {
	return &problems{prefix: p.prefix + prefix}
}

// merge adds q's problems to p.
func (p *problems) merge(q *problems) { p.list = append(p.list, q.list...) }

// empty reports whether nothing was found.
func (p *problems) empty() bool { return len(p.list) == 0 }

// err returns the 400 listing every problem, or nil. The message names
// them all; the context maps each field to its messages, as DreamFactory's
// validation errors do.
func (p *problems) err() error {
	if p.empty() {
		return nil
	}
	msgs := make([]string, 0, len(p.list))
	ctx := map[string][]string{}
	for _, pr := range p.list {
		m := pr.Message
		if pr.Field != "" && !strings.Contains(m, pr.Field) {
			m = pr.Field + ": " + m
		}
		msgs = append(msgs, m)
		ctx[pr.Field] = append(ctx[pr.Field], pr.Message)
	}
	return &validationError{api: apierr.BadRequest("Invalid data supplied: %s", strings.Join(msgs, "; ")).WithContext(ctx)}
}

// validationError marks a 400 built from problems.
type validationError struct{ api *apierr.Error }

// Error returns the message.
func (v *validationError) Error() string { return v.api.Error() }

// Unwrap returns the API error.
func (v *validationError) Unwrap() error { return v.api }
