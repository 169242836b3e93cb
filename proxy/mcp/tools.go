package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Tool names of the services form.
const (
	ToolListTables    = "list_tables"
	ToolDescribeTable = "describe_table"
	ToolQueryRecords  = "query_records"
	ToolCreateRecords = "create_records"
	ToolUpdateRecords = "update_records"
	ToolDeleteRecords = "delete_records"
	ToolCallProcedure = "call_procedure"
	ToolCallFunction  = "call_function"
)

// serverCacheTTL bounds how long a tool list built for a role is reused;
// a configuration change (a table created through the API included) makes
// a new one at once.
const serverCacheTTL = 30 * time.Second

// serverCacheMax bounds the tool lists kept (one per role and
// configuration version).
const serverCacheMax = 256

// tools is the services form: an MCP server (streamable HTTP, stateless)
// whose tools call the named database services through the platform's
// pipeline as the caller.
type tools struct {
	name     string
	services []string
	reg      service.Registry
	access   service.AccessChecker
	audit    *Audit
	log      *slog.Logger
	now      func() time.Time
	handler  http.Handler

	mu      sync.Mutex
	servers map[string]cachedServer
	docs    map[string]docEntry // record schemas by data service
}

type cachedServer struct {
	srv     *sdk.Server
	expires time.Time
}

func newTools(name string, services []string, deps service.Deps, audit *Audit, now func() time.Time) *tools {
	t := &tools{name: name, services: services, reg: deps.Registry, access: deps.Access, audit: audit,
		log: deps.Logger, now: now, servers: map[string]cachedServer{}, docs: map[string]docEntry{}}
	if t.log == nil {
		t.log = slog.Default()
	}
	t.handler = sdk.NewStreamableHTTPHandler(t.server, &sdk.StreamableHTTPOptions{
		// Stateless: any instance behind a load balancer answers any
		// request; nothing is kept between requests.
		Stateless:    true,
		JSONResponse: true,
		// Every request already carries an API key checked by the
		// pipeline (and CORS is the pipeline's), so the SDK's
		// localhost-only Host check would only refuse the platform's
		// own clients behind a local reverse proxy.
		DisableLocalhostProtection: true,
		// The pipeline caps bodies (MaxBodyBytes).
		MaxRequestBodyBytes: -1,
	})
	return t
}

// ServeHTTP serves the MCP endpoint at the service root.
func (t *tools) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := ""
	if tg := service.TargetFrom(r.Context()); tg != nil {
		res = tg.Resource
	}
	if res != "" {
		apierr.Write(w, apierr.NotFound("Resource '%s' not found for service '%s': the MCP endpoint is /api/v2/%s.", res, t.name, t.name))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apierr.Write(w, apierr.MethodNotAllowed(r.Method).WithContext(map[string]any{
			"hint": "This MCP server speaks streamable HTTP without sessions: POST JSON-RPC messages here."}))
		return
	}
	t.handler.ServeHTTP(w, r)
}

// server returns the MCP server for a request: its tools' input schemas
// name the tables the caller may use, so it is built per role and
// configuration version and cached.
func (t *tools) server(r *http.Request) *sdk.Server {
	ctx := r.Context()
	id := caller.IdentityFrom(ctx)
	var version int64
	if snap := t.reg.Snapshot(); snap != nil {
		version = snap.Version
	}
	key := "anon"
	if id != nil {
		key = fmt.Sprintf("%t/%d/%d", id.Admin, id.RoleID, id.Requestor)
	}
	key = fmt.Sprintf("%d/%s", version, key)
	now := t.now()
	t.mu.Lock()
	if c, ok := t.servers[key]; ok && now.Before(c.expires) {
		t.mu.Unlock()
		return c.srv
	}
	t.mu.Unlock()

	srv := t.build(ctx)
	t.mu.Lock()
	if len(t.servers) >= serverCacheMax {
		for k, c := range t.servers {
			if !now.Before(c.expires) || len(t.servers) >= serverCacheMax {
				delete(t.servers, k)
			}
		}
	}
	t.servers[key] = cachedServer{srv: srv, expires: now.Add(serverCacheTTL)}
	t.mu.Unlock()
	return srv
}

// tableInfo is what tool schemas say about a table.
type tableInfo struct {
	name    string
	columns []map[string]any // nil when the caller may not read the schema
}

// tablesOf returns the tables of a data service as the platform sees them
// (straight from its backend, without a caller), or nil when it cannot be
// read (not a database service, database down).
func (t *tools) tablesOf(ctx context.Context, name string) []tableInfo {
	snap := t.reg.Snapshot()
	if snap == nil {
		return nil
	}
	svc := snap.Service(name)
	b, ok := t.reg.Backend(name)
	if svc == nil || !ok {
		return nil
	}
	status, body := direct(ctx, b, svc, "_schema", url.Values{"fields": {"name,field"}})
	if status != http.StatusOK {
		return nil
	}
	var out struct {
		Resource []struct {
			Name  string           `json:"name"`
			Field []map[string]any `json:"field"`
		} `json:"resource"`
	}
	if json.Unmarshal(body, &out) != nil {
		return nil
	}
	tables := make([]tableInfo, 0, len(out.Resource))
	for _, r := range out.Resource {
		tables = append(tables, tableInfo{name: r.Name, columns: r.Field})
	}
	return tables
}

// direct calls a backend without the pipeline (for the platform's own
// reads of table structure) and returns the status and body.
func direct(ctx context.Context, b http.Handler, svc *store.Service, resource string, q url.Values) (int, []byte) {
	u := &url.URL{Path: "/api/v2/" + svc.Name + "/" + resource, RawQuery: q.Encode()}
	tg := &service.Target{Service: svc, Resource: resource, Verb: http.MethodGet}
	req, err := http.NewRequestWithContext(service.WithTarget(ctx, tg), http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return 0, nil
	}
	rec := &bufWriter{header: http.Header{}}
	b.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.status, rec.body.Bytes()
}

type bufWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufWriter) Header() http.Header { return w.header }
func (w *bufWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *bufWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

// allowed asks the access checker (nil: everything is allowed).
func (t *tools) allowed(ctx context.Context, svc, component, verb string) bool {
	if t.access == nil {
		return true
	}
	return t.access.Allowed(ctx, svc, component, verb)
}

// build makes the MCP server with the eight tools, their schemas naming
// the tables the caller in ctx may use.
func (t *tools) build(ctx context.Context) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "portcullis-" + t.name, Title: "Portcullis: " + strings.Join(t.services, ", "), Version: "1"},
		&sdk.ServerOptions{Instructions: instructions(t.services)})
	type verbTables struct{ get, post, patch, del []string }
	per := map[string]*verbTables{}
	var docs []string
	var queryB, createB, updateB, deleteB []branch
	for _, s := range t.services {
		vt := &verbTables{}
		per[s] = vt
		tables := t.tablesOf(ctx, s)
		records := t.recordDocs(ctx, s, tables)
		for _, tb := range tables {
			if g, ok := t.grantFor(ctx, s, tb.name, http.MethodGet); ok {
				vt.get = append(vt.get, tb.name)
				if tb.columns != nil && t.allowed(ctx, s, "_schema/"+tb.name, http.MethodGet) {
					docs = append(docs, describeColumns(s, tb, len(t.services) > 1))
				}
				queryB = append(queryB, branch{s, tb.name, queryBranch(tb, g)})
			}
			rd, documented := records[tb.name]
			if g, ok := t.grantFor(ctx, s, tb.name, http.MethodPost); ok {
				vt.post = append(vt.post, tb.name)
				if documented && !rd.view {
					createB = append(createB, branch{s, tb.name, createBranch(tb, rd, g)})
				}
			}
			if g, ok := t.grantFor(ctx, s, tb.name, http.MethodPatch); ok {
				vt.patch = append(vt.patch, tb.name)
				if documented && !rd.view {
					updateB = append(updateB, branch{s, tb.name, updateBranch(tb, rd, g)})
				}
			}
			if _, ok := t.grantFor(ctx, s, tb.name, http.MethodDelete); ok {
				vt.del = append(vt.del, tb.name)
				if documented && !rd.view {
					deleteB = append(deleteB, branch{s, tb.name, deleteBranch(tb, rd)})
				}
			}
		}
	}
	multi := len(t.services) > 1
	union := func(pick func(*verbTables) []string) []string {
		seen := map[string]bool{}
		var out []string
		for _, s := range t.services {
			for _, n := range pick(per[s]) {
				if !seen[n] {
					seen[n] = true
					out = append(out, n)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	cols := strings.Join(docs, "\n")
	add := func(tool *sdk.Tool) {
		name := tool.Name
		srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return t.call(ctx, name, req.Params.Arguments), nil
		})
	}
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	add(&sdk.Tool{Name: ToolListTables, Title: "List tables",
		Description: "Lists the tables of a database service that you may read, as {\"resource\":[{\"name\":…}]}.",
		InputSchema: t.schema(nil, nil), Annotations: ro})
	add(&sdk.Tool{Name: ToolDescribeTable, Title: "Describe a table",
		Description: "Returns a table's schema (fields with type, required, allow_null, is_primary_key, auto_increment, default; related tables) as the REST call GET /_schema/{table} does.",
		InputSchema: t.schema(map[string]any{"table": tableProp(union(func(v *verbTables) []string { return v.get }), cols)}, []string{"table"}), Annotations: ro})
	add(&sdk.Tool{Name: ToolQueryRecords, Title: "Query records",
		Description: "Reads records of a table (GET /_table/{table}); the answer is {\"resource\":[records]}.\n\n" + filterHelp,
		InputSchema: withBranches(t.schema(map[string]any{
			"table":   tableProp(union(func(v *verbTables) []string { return v.get }), cols),
			"filter":  map[string]any{"type": "string", "description": "A filter expression (see the tool description), e.g. (last_name = 'Smith') and (age > 30)."},
			"fields":  listProp("The fields to return, e.g. [\"id\",\"name\"]; default all you may read."),
			"order":   map[string]any{"type": "string", "description": "Sort order: a field name, optionally followed by ASC or DESC; several separated by commas, e.g. \"name ASC, id DESC\"."},
			"limit":   map[string]any{"type": "integer", "minimum": 1, "description": "The most records to return (the service caps it, 1000 by default)."},
			"offset":  map[string]any{"type": "integer", "minimum": 0, "description": "How many records to skip, for paging."},
			"related": listProp("Related tables to embed, by relation name (for example note_by_contact_id, as describe_table lists them), or [\"*\"] for all."),
			"ids":     idsProp("Return only the records with these primary keys."),
		}, []string{"table"}), queryB, multi), Annotations: ro})
	add(&sdk.Tool{Name: ToolCreateRecords, Title: "Create records",
		Description: "Creates records in a table (POST /_table/{table} with {\"resource\":records}); answers the new records' keys, or the fields named in fields. The batch stops at the first failure.",
		InputSchema: withBranches(t.schema(map[string]any{
			"table":   tableProp(union(func(v *verbTables) []string { return v.post }), cols),
			"records": recordsProp("The records to create, as objects of field values."),
			"fields":  listProp("Fields to return for each created record; default the primary key."),
		}, []string{"table", "records"}), createB, multi), Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}})
	add(&sdk.Tool{Name: ToolUpdateRecords, Title: "Update records",
		Description: "Changes fields of records (PATCH /_table/{table}). Either give records that each carry their primary key and the fields to change, or give ids or a filter and one record holding the field values to set on all matching records.\n\n" + filterHelp,
		InputSchema: withBranches(t.schema(map[string]any{
			"table":   tableProp(union(func(v *verbTables) []string { return v.patch }), cols),
			"records": recordsProp("Records with their primary key and the fields to change; with ids or filter, exactly one record: the values to set."),
			"ids":     idsProp("The primary keys of the records to change."),
			"filter":  map[string]any{"type": "string", "description": "Change the records matching this filter."},
			"fields":  listProp("Fields to return for each changed record; default the primary key."),
		}, []string{"table", "records"}), updateB, multi), Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}})
	add(&sdk.Tool{Name: ToolDeleteRecords, Title: "Delete records",
		Description: "Deletes records (DELETE /_table/{table}) named by ids, by a filter, or by records carrying their primary key; answers the deleted records' keys.\n\n" + filterHelp,
		InputSchema: withBranches(t.schema(map[string]any{
			"table":   tableProp(union(func(v *verbTables) []string { return v.del }), cols),
			"ids":     idsProp("The primary keys of the records to delete."),
			"filter":  map[string]any{"type": "string", "description": "Delete the records matching this filter."},
			"records": recordsProp("Records carrying the primary keys of the records to delete."),
			"fields":  listProp("Fields to return for each deleted record; default the primary key."),
		}, []string{"table"}), deleteB, multi), Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}})
	routine := func(kind string) map[string]any {
		return t.schema(map[string]any{
			"name":   map[string]any{"type": "string", "description": "The " + kind + "'s name."},
			"params": map[string]any{"description": "The parameters: an object of values by name ({\"id\":5}), a list of {\"name\":…,\"value\":…}, or a list of values by position.", "type": []string{"object", "array"}},
		}, []string{"name"})
	}
	add(&sdk.Tool{Name: ToolCallProcedure, Title: "Call a stored procedure",
		Description: "Calls a stored procedure (POST /_proc/{name}); answers its rows as {\"resource\":[…]} and OUT parameters by name. PostgreSQL and MySQL services only.",
		InputSchema: routine("procedure"), Annotations: &sdk.ToolAnnotations{OpenWorldHint: ptr(false)}})
	add(&sdk.Tool{Name: ToolCallFunction, Title: "Call a stored function",
		Description: "Calls a stored function (POST /_func/{name}); answers its value, or its rows as {\"resource\":[…]}. PostgreSQL and MySQL services only.",
		InputSchema: routine("function"), Annotations: &sdk.ToolAnnotations{OpenWorldHint: ptr(false)}})
	return srv
}

func ptr[T any](v T) *T { return &v }

// schema is a tool's input schema: the service argument (required when
// the MCP service exposes more than one) and props.
func (t *tools) schema(props map[string]any, required []string) map[string]any {
	p := map[string]any{}
	for k, v := range props {
		p[k] = v
	}
	svc := map[string]any{"type": "string", "enum": t.services, "description": "The database service to use."}
	if len(t.services) == 1 {
		svc["description"] = "The database service to use; default " + t.services[0] + "."
	} else {
		required = append([]string{"service"}, required...)
	}
	p["service"] = svc
	s := map[string]any{"type": "object", "properties": p, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func tableProp(names []string, cols string) map[string]any {
	p := map[string]any{"type": "string"}
	desc := "The table's name."
	p["enum"] = names
	if len(names) == 0 {
		p["enum"] = []string{}
		desc += " No table is available to you for this tool."
	}
	if cols != "" {
		desc += " Tables and their fields:\n" + cols
	}
	p["description"] = desc
	return p
}

func listProp(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

func idsProp(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": []string{"integer", "string"}}, "description": desc}
}

func recordsProp(desc string) map[string]any {
	return map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "object"}, "description": desc}
}

// describeColumns is one line per table for the table argument's
// description: "contact: id integer (primary key, auto), name string (required)".
func describeColumns(svc string, tb tableInfo, qualify bool) string {
	var parts []string
	for _, c := range tb.columns {
		name, _ := c["name"].(string)
		typ, _ := c["type"].(string)
		var notes []string
		if b, _ := c["is_primary_key"].(bool); b {
			notes = append(notes, "primary key")
		}
		if b, _ := c["auto_increment"].(bool); b {
			notes = append(notes, "auto")
		}
		if b, _ := c["required"].(bool); b {
			notes = append(notes, "required")
		}
		if ref, _ := c["ref_table"].(string); ref != "" {
			notes = append(notes, "references "+ref)
		}
		s := name + " " + typ
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, s)
	}
	label := tb.name
	if qualify {
		label = svc + "." + tb.name
	}
	return "- " + label + ": " + strings.Join(parts, "; ")
}

func instructions(services []string) string {
	return "Tools over the database service(s) " + strings.Join(services, ", ") + " of a Portcullis platform. " +
		"Every call runs with your own role: you see only the tables, fields and rows it allows, " +
		"and a refused call is a tool error carrying the platform's error envelope " +
		"({\"error\":{\"code\":403,\"message\":…}}). Start with list_tables and describe_table."
}

// filterHelp explains the filter language to a model.
const filterHelp = `Filter language (DreamFactory's): comparisons field = value, !=, >, >=, <, <= (also eq, ne, gt, ge, lt, le), ` +
	`field like 'pat%', field in (1,2,3), field not in (…), field between 1 and 5, field is null, field is not null, ` +
	`field contains 'x', field starts with 'x', field ends with 'x'; combine with and, or, not and parentheses. ` +
	`Strings are in single quotes (double a quote to escape it), e.g. (last_name like 'Sm%') and (age >= 21 or vip = true).`

// args are the arguments every tool accepts (each tool uses some).
type args struct {
	Service string          `json:"service"`
	Table   string          `json:"table"`
	Filter  string          `json:"filter"`
	Fields  stringList      `json:"fields"`
	Order   string          `json:"order"`
	Limit   *int64          `json:"limit"`
	Offset  *int64          `json:"offset"`
	Related stringList      `json:"related"`
	IDs     idList          `json:"ids"`
	Records []any           `json:"records"`
	Name    string          `json:"name"`
	Params  json.RawMessage `json:"params"`
}

// stringList accepts ["a","b"] or "a,b".
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = nil
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*l = append(*l, p)
			}
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("must be a list of strings or a comma-separated string")
	}
	*l = list
	return nil
}

// idList accepts [1,"a"], "1,2" or a single number.
type idList []string

func (l *idList) UnmarshalJSON(b []byte) error {
	var raw any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return err
	}
	add := func(v any) error {
		switch x := v.(type) {
		case json.Number:
			*l = append(*l, x.String())
		case string:
			for _, p := range strings.Split(x, ",") {
				if p = strings.TrimSpace(p); p != "" {
					*l = append(*l, p)
				}
			}
		default:
			return errors.New("must hold numbers or strings")
		}
		return nil
	}
	*l = nil
	if list, ok := raw.([]any); ok {
		for _, v := range list {
			if err := add(v); err != nil {
				return err
			}
		}
		return nil
	}
	return add(raw)
}

// toolArgs lists the arguments each tool takes besides service.
var toolArgs = map[string][]string{
	ToolListTables:    {},
	ToolDescribeTable: {"table"},
	ToolQueryRecords:  {"table", "filter", "fields", "order", "limit", "offset", "related", "ids"},
	ToolCreateRecords: {"table", "records", "fields"},
	ToolUpdateRecords: {"table", "records", "ids", "filter", "fields"},
	ToolDeleteRecords: {"table", "ids", "filter", "records", "fields"},
	ToolCallProcedure: {"name", "params"},
	ToolCallFunction:  {"name", "params"},
}

// call runs one tool call and records it in the audit log.
func (t *tools) call(ctx context.Context, tool string, raw json.RawMessage) *sdk.CallToolResult {
	start := t.now()
	var decoded any
	if len(bytes.TrimSpace(raw)) > 0 {
		_ = json.Unmarshal(raw, &decoded)
	}
	ev := Event{Time: start, MCPService: t.name, Tool: tool, Arguments: Redact(decoded)}
	if ev.Arguments == nil {
		ev.Arguments = map[string]any{}
	}
	id := caller.IdentityFrom(ctx)
	ev.setCaller(id)
	status, body, svc, err := t.run(ctx, id, tool, raw)
	ev.Service = svc
	ev.Status = status
	ev.DurationMS = float64(t.now().Sub(start).Microseconds()) / 1000
	if err == nil && status < 300 {
		ev.Records = countRecords(tool, body)
	}
	t.audit.Record(ev)
	if err != nil {
		return errorResult(err)
	}
	text := string(bytes.TrimRight(body, "\r\n"))
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: status >= 400}
}

// errorResult is a tool error carrying the error envelope.
func errorResult(err error) *sdk.CallToolResult {
	e := apierr.As(err)
	if e == nil {
		e = apierr.Internal(err)
	}
	code := e.Code
	if code == 0 {
		code = e.Status
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": e.Message, "context": e.Context, "status_code": e.Status}})
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}, IsError: true}
}

// run validates the arguments, makes the REST call as the caller and
// returns its status and body, or an error of the arguments (with the
// status the REST call would have given, 400).
func (t *tools) run(ctx context.Context, id *caller.Identity, tool string, raw json.RawMessage) (int, []byte, string, error) {
	fail := func(svc string, e *apierr.Error) (int, []byte, string, error) { return e.Status, nil, svc, e }
	var a args
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fail("", apierr.BadRequest("The arguments must be a JSON object."))
		}
		allowed := append([]string{"service"}, toolArgs[tool]...)
		var unknown []string
		for k := range obj {
			if !contains(allowed, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return fail("", apierr.BadRequest("Unknown argument(s) %s for %s; it takes %s.", strings.Join(unknown, ", "), tool, strings.Join(allowed, ", ")))
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return fail("", apierr.BadRequest("Invalid arguments for %s: %v", tool, err))
		}
	}
	svc := a.Service
	switch {
	case svc == "" && len(t.services) == 1:
		svc = t.services[0]
	case svc == "":
		return fail("", apierr.BadRequest("The argument 'service' is required: one of %s.", strings.Join(t.services, ", ")))
	case !contains(t.services, svc):
		return fail(svc, apierr.BadRequest("Service '%s' is not exposed by MCP service '%s'; use one of %s.", svc, t.name, strings.Join(t.services, ", ")))
	}
	if id == nil {
		return fail(svc, apierr.Unauthorized("No caller identity reached the MCP tool."))
	}
	needTable := tool != ToolListTables && tool != ToolCallProcedure && tool != ToolCallFunction
	if needTable && strings.TrimSpace(a.Table) == "" {
		return fail(svc, apierr.BadRequest("The argument 'table' is required."))
	}
	if (tool == ToolCallProcedure || tool == ToolCallFunction) && strings.TrimSpace(a.Name) == "" {
		return fail(svc, apierr.BadRequest("The argument 'name' is required."))
	}
	c := service.InnerCall{Query: url.Values{}}
	table := url.PathEscape(a.Table)
	setList := func(k string, v []string) {
		if len(v) > 0 {
			c.Query.Set(k, strings.Join(v, ","))
		}
	}
	records := func() ([]byte, error) { return json.Marshal(map[string]any{"resource": a.Records}) }
	switch tool {
	case ToolListTables:
		return t.listTables(ctx, id, svc)
	case ToolDescribeTable:
		c.Path = svc + "/_schema/" + table
	case ToolQueryRecords:
		c.Path = svc + "/_table/" + table
		if a.Filter != "" {
			c.Query.Set("filter", a.Filter)
		}
		setList("fields", a.Fields)
		if a.Order != "" {
			c.Query.Set("order", a.Order)
		}
		if a.Limit != nil {
			c.Query.Set("limit", strconv.FormatInt(*a.Limit, 10))
		}
		if a.Offset != nil {
			c.Query.Set("offset", strconv.FormatInt(*a.Offset, 10))
		}
		setList("related", a.Related)
		setList("ids", a.IDs)
	case ToolCreateRecords:
		if len(a.Records) == 0 {
			return fail(svc, apierr.BadRequest("The argument 'records' must hold at least one record."))
		}
		c.Method, c.Path = http.MethodPost, svc+"/_table/"+table
		setList("fields", a.Fields)
		c.Body, _ = records()
	case ToolUpdateRecords:
		if len(a.Records) == 0 {
			return fail(svc, apierr.BadRequest("The argument 'records' must hold at least one record."))
		}
		c.Method, c.Path = http.MethodPatch, svc+"/_table/"+table
		setList("fields", a.Fields)
		if len(a.IDs) > 0 || a.Filter != "" {
			if len(a.Records) != 1 {
				return fail(svc, apierr.BadRequest("With 'ids' or 'filter', 'records' holds exactly one record: the values to set."))
			}
			setList("ids", a.IDs)
			if a.Filter != "" {
				c.Query.Set("filter", a.Filter)
			}
			c.Body, _ = json.Marshal(a.Records[0])
		} else {
			c.Body, _ = records()
		}
	case ToolDeleteRecords:
		if len(a.IDs) == 0 && a.Filter == "" && len(a.Records) == 0 {
			return fail(svc, apierr.BadRequest("Name the records to delete with 'ids', 'filter' or 'records'."))
		}
		c.Method, c.Path = http.MethodDelete, svc+"/_table/"+table
		setList("fields", a.Fields)
		setList("ids", a.IDs)
		if a.Filter != "" {
			c.Query.Set("filter", a.Filter)
		}
		if len(a.Records) > 0 {
			c.Body, _ = records()
		}
	case ToolCallProcedure, ToolCallFunction:
		kind := "_proc/"
		if tool == ToolCallFunction {
			kind = "_func/"
		}
		c.Method, c.Path = http.MethodPost, svc+"/"+kind+url.PathEscape(a.Name)
		body := map[string]any{}
		if len(a.Params) > 0 && string(a.Params) != "null" {
			body["params"] = a.Params
		}
		c.Body, _ = json.Marshal(body)
	}
	rep, err := service.Call(ctx, t.reg.Handler(), id, c)
	if err != nil {
		if errors.Is(err, service.ErrReplyTooLarge) {
			return fail(svc, apierr.BadRequest("The answer is too large for a tool result; narrow it with fields, filter or limit."))
		}
		return fail(svc, apierr.Internal(err))
	}
	return rep.Status, rep.Body, svc, nil
}

// listTables answers GET /_schema as the caller (the names), keeping the
// tables the caller may read records of. A caller refused the schema gets
// the names of the tables it may read all the same.
func (t *tools) listTables(ctx context.Context, id *caller.Identity, svc string) (int, []byte, string, error) {
	rep, err := service.Call(ctx, t.reg.Handler(), id, service.InnerCall{Path: svc + "/_schema"})
	if err != nil {
		return 500, nil, svc, apierr.Internal(err)
	}
	var names []string
	switch rep.Status {
	case http.StatusOK:
		var out struct {
			Resource []struct {
				Name string `json:"name"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(rep.Body, &out); err != nil {
			return 500, nil, svc, apierr.Internal(fmt.Errorf("mcp: list of tables: %w", err))
		}
		for _, r := range out.Resource {
			names = append(names, r.Name)
		}
	case http.StatusForbidden:
		// A role may read tables without reading the schema: list the
		// tables it may read anyway (names only).
		for _, tb := range t.tablesOf(ctx, svc) {
			names = append(names, tb.name)
		}
	default:
		return rep.Status, rep.Body, svc, nil
	}
	type name struct {
		Name string `json:"name"`
	}
	list := []name{}
	for _, n := range names {
		if t.allowed(ctx, svc, "_table/"+n, http.MethodGet) {
			list = append(list, name{n})
		}
	}
	body, _ := json.Marshal(map[string]any{"resource": list})
	return http.StatusOK, body, svc, nil
}

// countRecords is the number of records an answer holds: the length of
// its resource list (or of a bare list), 1 for a single record, the
// tables listed for list_tables, 0 for a schema.
func countRecords(tool string, body []byte) int {
	if tool == ToolDescribeTable {
		return 0
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	if d.Decode(&v) != nil {
		return 0
	}
	if _, err := d.Token(); err != io.EOF {
		return 0
	}
	switch x := v.(type) {
	case []any:
		return len(x)
	case map[string]any:
		if r, ok := x["resource"].([]any); ok {
			return len(r)
		}
		if tool == ToolCallFunction || tool == ToolCallProcedure {
			return 0
		}
		return 1
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
