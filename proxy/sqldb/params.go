package sqldb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// record is one record of a request body: field names as sent, JSON
// values decoded with numbers as json.Number.
type record = map[string]any

// options are the table options of one request, from the query string and
// the JSON body (the query string wins).
type options struct {
	fields      string
	fieldsGiven bool
	filter      string
	limit       int // 0: not given
	offset      int
	order       string
	group       string
	having      string
	related     string

	includeCount bool
	countOnly    bool
	ids          []filter.Value
	idsGiven     bool
	idField      string
	cont         bool
	rollback     bool
	force        bool
	asList       bool
	// allowRelatedDelete lets a nested write delete related records it
	// releases whose foreign key cannot be null.
	allowRelatedDelete bool

	// rel holds per-relation options ({rel}.fields, {rel}.order,
	// {rel}.limit), keyed by the lowercased relation name.
	rel map[string]*relOptions

	// records are the body's records ({"resource":[…]} or […]); object is a
	// bare object body (a record for by-id routes and for writes by ids or
	// filter). hasBody says any body was sent.
	records []record
	object  record
	hasBody bool
	// raw is the one record of a POST body kept as text (body.go), in
	// place of records; materialize decodes it into records.
	raw *rawRecord
}

// relOptions are the options of one relation in related.
type relOptions struct {
	fields string
	order  string
	limit  int
}

// aliases maps every accepted parameter name to its canonical name.
var aliases = map[string]string{
	"fields": "fields", "select": "fields",
	"filter": "filter", "where": "filter",
	"limit": "limit", "top": "limit",
	"offset": "offset", "skip": "offset",
	"order": "order", "sort": "order", "order_by": "order",
	"group": "group", "group_by": "group",
	"having":        "having",
	"related":       "related",
	"include_count": "include_count",
	"count_only":    "count_only",
	"ids":           "ids",
	"id_field":      "id_field",
	"id_type":       "id_type",
	"continue":      "continue",
	"rollback":      "rollback",
	"force":         "force",
	"as_list":       "as_list",

	"allow_related_delete": "allow_related_delete",
}

// maxBodyRecords caps the records of one batch.
const maxBodyRecords = 10000

// parseOptions reads the table options of r: its query string and, when
// present, its JSON body. rawOK lets a body of one flat record be kept as
// text (options.raw), for a POST to a table.
func parseOptions(r *http.Request, maxRecords int, rawOK bool) (*options, error) {
	o := &options{}
	var params map[string]any // nil: no parameters at all
	if r.Body != nil && r.Body != http.NoBody {
		params = map[string]any{}
		if err := o.readBody(r.Body, params, rawOK && rawBodies && r.ContentLength <= rawBodyMax); err != nil {
			return nil, err
		}
	}
	// The query string wins over the body.
	if r.URL.RawQuery != "" {
		if params == nil {
			params = map[string]any{}
		}
		for k, vs := range r.URL.Query() {
			if len(vs) > 0 {
				params[k] = vs[len(vs)-1]
			}
		}
	}
	return o, o.apply(params, maxRecords)
}

// readBody decodes a JSON body: {"resource":[…], options…}, a bare array of
// records, or a bare object. It decodes as it reads, one record at a time,
// so a large batch costs its decoded records and not also its text (issue
// 16: a body cost about five times its size). With rawOK, a small body of
// one flat record is kept as text instead (readRaw).
func (o *options) readBody(body io.Reader, params map[string]any, rawOK bool) error {
	if rawOK {
		pb := getBuf()
		defer putBuf(pb)
		rec, rest := readRaw(body, pb)
		if rec != nil {
			o.raw, o.hasBody = rec, true
			return nil
		}
		body = rest
	}
	src := &readErr{r: body}
	dec := json.NewDecoder(src)
	dec.UseNumber()
	fail := func(err error) error {
		if src.err != nil {
			return apierr.As(src.err)
		}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return apierr.BadRequest("Invalid value for field '%s': expected %s.", ute.Field, ute.Type.String()).WithCause(err)
		}
		return apierr.InvalidJSON(err)
	}
	tok, err := dec.Token()
	if err == io.EOF && src.err == nil {
		return nil // empty or blank body
	}
	if err != nil {
		return fail(err)
	}
	o.hasBody = true
	switch tok {
	case json.Delim('['):
		if err := o.streamRecords(dec, fail); err != nil {
			return err
		}
	case json.Delim('{'):
		top := map[string]any{}
		wrapped := false
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			k, _ := kt.(string)
			if k != "resource" {
				var v any
				if err := dec.Decode(&v); err != nil {
					return fail(err)
				}
				top[k] = v
				continue
			}
			wrapped = true
			o.records = nil
			vt, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			switch vt {
			case json.Delim('['):
				if err := o.streamRecords(dec, fail); err != nil {
					return err
				}
			case json.Delim('{'):
				rec, err := decodeMembers(dec, fail)
				if err != nil {
					return err
				}
				o.records = []record{rec}
			case nil:
			default:
				return apierr.BadRequest("The 'resource' member must be an array of records.")
			}
		}
		if _, err := dec.Token(); err != nil { // the closing brace
			return fail(err)
		}
		if wrapped {
			for k, v := range top {
				params[k] = v
			}
		} else {
			o.object = top
		}
	default:
		if d, ok := tok.(json.Delim); ok {
			return fail(fmt.Errorf("invalid character %q", rune(d)))
		}
		return apierr.BadRequest("The request body must be a JSON object or an array of records.")
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the JSON value")
		}
		return fail(err)
	}
	return nil
}

// streamRecords decodes the records of an array whose opening bracket dec
// has read, and its closing bracket.
func (o *options) streamRecords(dec *json.Decoder, fail func(error) error) error {
	o.records = []record{}
	for i := 0; dec.More(); i++ {
		if i >= maxBodyRecords {
			return apierr.BadRequest("A batch may hold at most %d records.", maxBodyRecords)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return fail(err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return apierr.BadRequest("Record %d is not a JSON object.", i)
		}
		o.records = append(o.records, m)
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	return nil
}

// decodeMembers decodes the members of an object whose opening brace dec
// has read, and its closing brace.
func decodeMembers(dec *json.Decoder, fail func(error) error) (map[string]any, error) {
	m := map[string]any{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		k, _ := kt.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fail(err)
		}
		m[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err)
	}
	return m, nil
}

// readErr remembers the error of reading a body (a cap, a client that went
// away) apart from what the JSON decoder makes of it.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// apply sets the options from params (canonical names and aliases,
// per-relation options), checking their types.
func (o *options) apply(params map[string]any, maxRecords int) error {
	var errs []string
	for key, raw := range params {
		name, ok := aliases[key]
		if !ok {
			if rel, opt, ok := relationOption(key); ok {
				if err := o.setRelOption(rel, opt, raw); err != nil {
					errs = append(errs, err.Error())
				}
			}
			continue // unknown parameters are ignored, as DreamFactory does
		}
		switch name {
		case "fields":
			o.fields, o.fieldsGiven = listText(raw), true
		case "filter":
			o.filter = text(raw)
		case "order":
			o.order = listText(raw)
		case "group":
			o.group = listText(raw)
		case "having":
			o.having = text(raw)
		case "related":
			o.related = listText(raw)
		case "id_field":
			o.idField = listText(raw)
		case "id_type":
			// Types come from the schema; accepted for compatibility.
		case "limit", "offset":
			n, err := integer(name, raw)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if name == "limit" && n < 0 {
				errs = append(errs, "limit must not be negative")
			} else if name == "limit" {
				o.limit = n
			} else if n < 0 {
				errs = append(errs, "offset must not be negative")
			} else {
				o.offset = n
			}
		case "include_count", "count_only", "continue", "rollback", "force", "as_list", "allow_related_delete":
			b, err := boolean(name, raw)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			switch name {
			case "include_count":
				o.includeCount = b
			case "count_only":
				o.countOnly = b
			case "continue":
				o.cont = b
			case "rollback":
				o.rollback = b
			case "force":
				o.force = b
			case "as_list":
				o.asList = b
			case "allow_related_delete":
				o.allowRelatedDelete = b
			}
		case "ids":
			ids, err := idList(raw)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			o.ids, o.idsGiven = ids, true
		}
	}
	if len(errs) > 0 {
		return apierr.BadRequest("%s.", strings.Join(sortedUnique(errs), "; "))
	}
	if o.limit < 1 || o.limit > maxRecords {
		o.limit = maxRecords
	}
	if o.cont && o.rollback {
		return apierr.BadRequest("Rollback and continue operations can not be requested at the same time.")
	}
	return nil
}

// relationOption splits "{rel}.fields" (or DreamFactory's "{rel}_fields")
// into the relation and the option.
func relationOption(key string) (rel, opt string, ok bool) {
	for _, o := range []string{"fields", "order", "limit"} {
		for _, sep := range []string{".", "_"} {
			if suffix := sep + o; strings.HasSuffix(key, suffix) && len(key) > len(suffix) {
				return key[:len(key)-len(suffix)], o, true
			}
		}
	}
	return "", "", false
}

func (o *options) setRelOption(rel, opt string, raw any) error {
	if o.rel == nil {
		o.rel = map[string]*relOptions{}
	}
	key := strings.ToLower(rel)
	ro := o.rel[key]
	if ro == nil {
		ro = &relOptions{}
		o.rel[key] = ro
	}
	switch opt {
	case "fields":
		ro.fields = listText(raw)
	case "order":
		ro.order = listText(raw)
	case "limit":
		n, err := integer(rel+"."+opt, raw)
		if err != nil {
			return err
		}
		if n < 0 {
			return errors.New(rel + ".limit must not be negative")
		}
		ro.limit = n
	}
	return nil
}

// text returns a parameter as a string.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// listText returns a parameter that may also be sent as a JSON array of
// names as a comma-separated string.
func listText(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, 0, len(l))
		for _, it := range l {
			parts = append(parts, text(it))
		}
		return strings.Join(parts, ",")
	}
	return text(v)
}

func integer(name string, v any) (int, error) {
	s := strings.TrimSpace(text(v))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 1<<40 || n < -(1<<40) {
		return 0, errors.New(name + " must be an integer")
	}
	return n, nil
}

func boolean(name string, v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	switch strings.ToLower(strings.TrimSpace(text(v))) {
	case "true", "1", "yes", "on", "y":
		return true, nil
	case "false", "0", "no", "off", "n", "":
		return false, nil
	}
	return false, errors.New(name + " must be true or false")
}

// idList reads ids: a comma-separated string in the ids grammar, or a JSON
// array of scalars.
func idList(v any) ([]filter.Value, error) {
	if l, ok := v.([]any); ok {
		out := make([]filter.Value, 0, len(l))
		for _, it := range l {
			switch it := it.(type) {
			case json.Number:
				out = append(out, filter.Value{Kind: filter.ValueNumber, Text: it.String()})
			case string:
				out = append(out, filter.Value{Kind: filter.ValueString, Text: it})
			case bool:
				out = append(out, filter.Value{Kind: filter.ValueBool, Text: strconv.FormatBool(it)})
			default:
				return nil, errors.New("ids must be a list of scalar values")
			}
		}
		return out, nil
	}
	ids, err := filter.ParseIDs(text(v))
	if err != nil {
		return nil, err
	}
	return ids, nil
}

func sortedUnique(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	// map iteration made the order random; sort for a stable message
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// writeList writes names as DreamFactory lists resources:
// {"resource":[{"name":…}]}, or {"resource":[…names]} with as_list=true.
func writeList(w http.ResponseWriter, names []string, r *http.Request) error {
	if r.URL.RawQuery != "" {
		if asList, _ := boolean("as_list", r.URL.Query().Get("as_list")); asList {
			return writeJSON(w, nameList[[]string]{names})
		}
	}
	out := make([]namedResource, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return writeJSON(w, nameList[[]namedResource]{out})
}

// rootList is the list of a service's root resources, with writeList's
// answer to a request without a query encoded once.
type rootList struct {
	names []string
	body  []byte
}

// rootSQLite and rootOther are the root resources of a SQLite service and
// of the others.
var (
	rootSQLite = newRootList("_schema", "_table")
	rootOther  = newRootList("_schema", "_table", "_proc", "_func")
)

func newRootList(names ...string) rootList {
	out := make([]namedResource, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // as apierr.WriteJSON encodes
	enc.SetEscapeHTML(false)
	_ = enc.Encode(nameList[[]namedResource]{out})
	return rootList{names: names, body: b.Bytes()}
}

// write answers r with the list, as writeList does.
func (l rootList) write(w http.ResponseWriter, r *http.Request) error {
	if r.URL.RawQuery != "" {
		return writeList(w, l.names, r)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(l.body)
	return nil
}

// nameList is DreamFactory's list envelope, {"resource": …}.
type nameList[T any] struct {
	Resource T `json:"resource"`
}

// namedResource is one entry of a resource list, {"name": …}.
type namedResource struct {
	Name string `json:"name"`
}

func writeJSON(w http.ResponseWriter, v any) error {
	_ = apierr.WriteJSON(w, http.StatusOK, v)
	return nil
}
