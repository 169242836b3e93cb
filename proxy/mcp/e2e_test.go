package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/mcp"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// headerTransport adds the platform credentials to every request.
type headerTransport struct {
	key, session string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.key != "" {
		r.Header.Set("X-Platform-API-Key", h.key)
	}
	if h.session != "" {
		r.Header.Set("X-Platform-Session-Token", h.session)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP client session on endpoint with the credentials of c.
func connect(t *testing.T, endpoint string, c *proxytest.Client) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: headerTransport{key: c.APIKey, session: c.Session}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and returns its text and whether it is a tool error.
func call(t *testing.T, s *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", tool, len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", tool, res.Content[0])
	}
	return text.Text, res.IsError
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

// envelopeCode returns the code of an error envelope.
func envelopeCode(t *testing.T, s string) int {
	t.Helper()
	e, _ := decode(t, s)["error"].(map[string]any)
	code, _ := e["code"].(float64)
	if e == nil || code == 0 {
		t.Fatalf("not an error envelope: %s", s)
	}
	return int(code)
}

func must(t *testing.T, c *proxytest.Client, want int, method, path string, body any) *proxytest.Response {
	t.Helper()
	r := c.Do(t, method, path, body)
	if r.Status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

func create(t *testing.T, c *proxytest.Client, resource string, rec map[string]any) map[string]any {
	t.Helper()
	r := must(t, c, http.StatusCreated, "POST", "/api/v2/system/"+resource+"?fields=*", map[string]any{"resource": []any{rec}})
	var out struct {
		Resource []map[string]any `json:"resource"`
	}
	r.JSON(t, &out)
	return out.Resource[0]
}

func idOf(m map[string]any) int64 { f, _ := m["id"].(float64); return int64(f) }

// dataConfig creates the tables of the data service on a fresh database of
// kind and returns the service's config.
func dataConfig(t *testing.T, kind dialects.Kind) map[string]any {
	t.Helper()
	cfg := dbtest.Fresh(t, kind)
	db := dbtest.Open(t, cfg)
	autoinc := map[dialects.Kind]string{
		dialects.SQLite:   "INTEGER PRIMARY KEY AUTOINCREMENT",
		dialects.Postgres: "SERIAL PRIMARY KEY",
		dialects.MySQL:    "INT AUTO_INCREMENT PRIMARY KEY",
	}[kind]
	for _, s := range []string{
		`CREATE TABLE contact (id ` + autoinc + `, name VARCHAR(64) NOT NULL, email VARCHAR(128), secret VARCHAR(64))`,
		`CREATE TABLE note (id ` + autoinc + `, body VARCHAR(200))`,
		`INSERT INTO contact (name, email, secret) VALUES ('Ann', 'ann@example.com', 's1'), ('Bob', 'bob@example.com', 's2'), ('Amy', 'amy@example.com', 's3')`,
		`INSERT INTO note (body) VALUES ('hello')`,
	} {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if kind == dialects.SQLite {
		return map[string]any{"database": cfg.Database}
	}
	return map[string]any{"dsn": cfg.URL()}
}

// followAudit follows the audit stream as c and sends each line's event.
func followAudit(t *testing.T, in *proxytest.Instance, c *proxytest.Client) <-chan mcp.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.URL+proxy.AuditStreamPath, nil)
	req.Header.Set("X-Platform-API-Key", c.APIKey)
	req.Header.Set("X-Platform-Session-Token", c.Session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("audit stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan mcp.Event, 100)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var e mcp.Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				ch <- e
			}
		}
	}()
	// Wait until the stream is registered, so no event is missed.
	for i := 0; in.Proxy.Audit().Followers() == 0; i++ {
		if i > 500 {
			t.Fatal("audit follower never registered")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return ch
}

func nextEvent(t *testing.T, ch <-chan mcp.Event) mcp.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no audit event")
	}
	return mcp.Event{}
}

// schemaCase is a tool's arguments and whether its input schema accepts
// them.
type schemaCase struct {
	tool, args string
	valid      bool
}

// checkRecordSchemas lists the tools of s, checks that every input schema
// is valid JSON Schema (2020-12, checked against the meta-schema), free
// of a root oneOf/anyOf/allOf (which model APIs refuse), and accepts or
// refuses each case's arguments.
func checkRecordSchemas(t *testing.T, s *sdk.ClientSession, cases []schemaCase) {
	t.Helper()
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range res.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			if _, ok := doc.(map[string]any)[k]; ok {
				t.Errorf("%s: %s at the root of the input schema", tool.Name, k)
			}
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource(tool.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(tool.Name + ".json")
		if err != nil {
			t.Fatalf("%s: input schema is not valid JSON Schema: %v\n%s", tool.Name, err, raw)
		}
		schemas[tool.Name] = sch
	}
	for _, c := range cases {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c.args))
		if err != nil {
			t.Fatal(err)
		}
		err = schemas[c.tool].Validate(v)
		if (err == nil) != c.valid {
			t.Errorf("%s %s: schema accepts = %v, want %v (%v)", c.tool, c.args, err == nil, c.valid, err)
		}
	}
}

// TestServicesForm drives an mcp service exposing a database service with
// the SDK's client, as an administrator and as a restricted role, on every
// available engine.
func TestServicesForm(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		admin := in.Admin(t)
		data := idOf(create(t, admin, "service", map[string]any{"name": "data", "label": "Data", "type": string(sys.Kind), "config": dataConfig(t, sys.Kind)}))
		ai := idOf(create(t, admin, "service", map[string]any{"name": "ai", "label": "AI", "type": "mcp", "config": map[string]any{"services": []string{"data"}}}))
		const api = policy.RequestorAPI
		role := idOf(create(t, admin, "role", map[string]any{"name": "limited", "is_active": true,
			"role_service_access_by_role_id": []any{
				map[string]any{"service_id": ai, "component": "*", "verb_mask": policy.VerbAll, "requestor_mask": api},
				map[string]any{"service_id": ai, "component": "", "verb_mask": policy.VerbAll, "requestor_mask": api},
				map[string]any{"service_id": data, "component": "_table/contact", "verb_mask": policy.VerbGet, "requestor_mask": api,
					"filters": []any{map[string]any{"name": "name", "operator": "STARTS WITH", "value": "A"}}, "filter_op": "AND",
					"fields": []string{"id", "name"}},
				map[string]any{"service_id": data, "component": "_schema/contact", "verb_mask": policy.VerbGet, "requestor_mask": api},
			}}))
		app := create(t, admin, "app", map[string]any{"name": "bot", "is_active": true, "role_id": role})
		limited := &proxytest.Client{Inst: in, APIKey: app["api_key"].(string)}
		endpoint := in.URL + "/api/v2/ai"

		audit := followAudit(t, in, admin)
		as := connect(t, endpoint, admin)
		ls := connect(t, endpoint, limited)

		t.Run("tools listed with schemas from the tables", func(t *testing.T) {
			res, err := as.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var query *sdk.Tool
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Name == mcp.ToolQueryRecords {
					query = tool
				}
			}
			sort.Strings(names)
			want := []string{"call_function", "call_procedure", "create_records", "delete_records", "describe_table", "list_tables", "query_records", "update_records"}
			if strings.Join(names, ",") != strings.Join(want, ",") {
				t.Fatalf("tools %v", names)
			}
			schema, _ := json.Marshal(query.InputSchema)
			for _, s := range []string{`"enum":["contact","note"]`, "secret", "starts with"} {
				if !strings.Contains(string(schema)+query.Description, s) {
					t.Errorf("query_records schema lacks %s: %s", s, schema)
				}
			}
			lres, err := ls.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range lres.Tools {
				if tool.Name == mcp.ToolQueryRecords {
					schema, _ := json.Marshal(tool.InputSchema)
					if !strings.Contains(string(schema), `"enum":["contact"]`) {
						t.Errorf("the restricted role's query_records schema: %s", schema)
					}
				}
			}
		})

		t.Run("administrator", func(t *testing.T) {
			text, isErr := call(t, as, mcp.ToolListTables, nil)
			if isErr || text != `{"resource":[{"name":"contact"},{"name":"note"}]}` {
				t.Fatalf("list_tables = %v %s", isErr, text)
			}
			e := nextEvent(t, audit)
			if e.Tool != mcp.ToolListTables || e.MCPService != "ai" || e.Service != "data" || e.Status != 200 || e.Records != 2 ||
				e.App != "admin" || e.User == nil || *e.User != proxytest.AdminEmail {
				t.Errorf("audit event %+v", e)
			}
			text, isErr = call(t, as, mcp.ToolQueryRecords, map[string]any{"table": "contact", "fields": []string{"name", "secret"}, "order": "name DESC", "limit": 2})
			if isErr || text != `{"resource":[{"name":"Bob","secret":"s2"},{"name":"Ann","secret":"s1"}],"meta":{"next":2}}` {
				t.Fatalf("query_records = %v %s", isErr, text)
			}
			if e := nextEvent(t, audit); e.Records != 2 || e.Tool != mcp.ToolQueryRecords {
				t.Errorf("audit event %+v", e)
			}
			text, isErr = call(t, as, mcp.ToolCreateRecords, map[string]any{"table": "note", "records": []any{map[string]any{"body": "x"}, map[string]any{"body": "y"}}, "fields": "body"})
			if isErr || text != `{"resource":[{"body":"x"},{"body":"y"}]}` {
				t.Fatalf("create_records = %v %s", isErr, text)
			}
			if e := nextEvent(t, audit); e.Records != 2 || e.Status != 200 {
				t.Errorf("audit event %+v", e)
			}
			text, isErr = call(t, as, mcp.ToolUpdateRecords, map[string]any{"table": "note", "filter": "body = 'x'", "records": []any{map[string]any{"body": "z"}}, "fields": []string{"body"}})
			if isErr || text != `{"resource":[{"body":"z"}]}` {
				t.Fatalf("update_records = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			text, isErr = call(t, as, mcp.ToolDeleteRecords, map[string]any{"table": "note", "filter": "body in ('y','z')"})
			if isErr || len(decode(t, text)["resource"].([]any)) != 2 {
				t.Fatalf("delete_records = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			text, isErr = call(t, as, mcp.ToolDescribeTable, map[string]any{"table": "contact"})
			if isErr || decode(t, text)["name"] != "contact" {
				t.Fatalf("describe_table = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			// Secrets never reach the audit log.
			text, isErr = call(t, as, mcp.ToolQueryRecords, map[string]any{"table": "contact", "filter": "secret = 's1'", "fields": "name"})
			if isErr || text != `{"resource":[{"name":"Ann"}]}` {
				t.Fatalf("query by secret = %v %s", isErr, text)
			}
			e = nextEvent(t, audit)
			if args, _ := json.Marshal(e.Arguments); strings.Contains(string(args), "s1") {
				t.Errorf("secret in the audit log: %s", args)
			}
		})

		t.Run("restricted role", func(t *testing.T) {
			text, isErr := call(t, ls, mcp.ToolListTables, nil)
			if isErr || text != `{"resource":[{"name":"contact"}]}` {
				t.Fatalf("list_tables = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			// Fields and rows of the role only.
			text, isErr = call(t, ls, mcp.ToolQueryRecords, map[string]any{"table": "contact", "order": "name"})
			if isErr || text != `{"resource":[{"id":3,"name":"Amy"},{"id":1,"name":"Ann"}]}` {
				t.Fatalf("query_records = %v %s", isErr, text)
			}
			e := nextEvent(t, audit)
			if e.App != "bot" || e.User != nil || e.Records != 2 {
				t.Errorf("audit event %+v", e)
			}
			for _, c := range []struct {
				tool string
				args map[string]any
				code int
			}{
				{mcp.ToolQueryRecords, map[string]any{"table": "note"}, 403},
				{mcp.ToolCreateRecords, map[string]any{"table": "contact", "records": []any{map[string]any{"name": "Eve"}}}, 403},
				{mcp.ToolDeleteRecords, map[string]any{"table": "contact", "ids": []int{1}}, 403},
				{mcp.ToolDescribeTable, map[string]any{"table": "note"}, 403},
				{mcp.ToolQueryRecords, map[string]any{"table": "contact", "bogus": 1}, 400},
				{mcp.ToolQueryRecords, map[string]any{"service": "other", "table": "contact"}, 400},
				{mcp.ToolQueryRecords, map[string]any{"table": "contact", "filter": "name = "}, 400},
			} {
				text, isErr := call(t, ls, c.tool, c.args)
				if !isErr || envelopeCode(t, text) != c.code {
					t.Errorf("%s %v = %v %s, want a %d tool error", c.tool, c.args, isErr, text, c.code)
				}
				if e := nextEvent(t, audit); e.Status != c.code || e.Records != 0 {
					t.Errorf("audit event %+v, want status %d", e, c.code)
				}
			}
		})

		t.Run("a role without the schema still lists what it may read", func(t *testing.T) {
			role := idOf(create(t, admin, "role", map[string]any{"name": "tables only", "is_active": true,
				"role_service_access_by_role_id": []any{
					map[string]any{"service_id": ai, "component": "", "verb_mask": policy.VerbAll, "requestor_mask": api},
					map[string]any{"service_id": data, "component": "_table/note", "verb_mask": policy.VerbGet, "requestor_mask": api},
				}}))
			app := create(t, admin, "app", map[string]any{"name": "notes", "is_active": true, "role_id": role})
			s := connect(t, endpoint, &proxytest.Client{Inst: in, APIKey: app["api_key"].(string)})
			text, isErr := call(t, s, mcp.ToolListTables, nil)
			if isErr || text != `{"resource":[{"name":"note"}]}` {
				t.Fatalf("list_tables = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			text, isErr = call(t, s, mcp.ToolDescribeTable, map[string]any{"table": "note"})
			if !isErr || envelopeCode(t, text) != 403 {
				t.Fatalf("describe_table = %v %s, want a 403 tool error", isErr, text)
			}
			nextEvent(t, audit)
		})

		t.Run("record schemas per table and role", func(t *testing.T) {
			checkRecordSchemas(t, as, []schemaCase{
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"name":"Eve","email":null,"secret":"x"}]}`, true},
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"email":"eve@example.com"}]}`, false}, // name is NOT NULL without a default
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"id":9,"name":"Eve"}]}`, false},       // id is auto-increment
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"name":5}]}`, false},
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"name":null}]}`, false},
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"name":"Eve","bogus":1}]}`, false},
				{mcp.ToolCreateRecords, `{"table":"note","records":[{"body":"x"},{}]}`, true},
				{mcp.ToolCreateRecords, `{"table":"note","records":[{"name":"x"}]}`, false}, // contact's field, not note's
				{mcp.ToolCreateRecords, `{"table":"other","records":[{}]}`, false},
				{mcp.ToolUpdateRecords, `{"table":"contact","records":[{"id":1,"name":"Ann"}]}`, true},
				{mcp.ToolUpdateRecords, `{"table":"contact","records":[{"name":"Ann"}]}`, false}, // no key
				{mcp.ToolUpdateRecords, `{"table":"contact","ids":[1],"records":[{"name":"Ann"}]}`, true},
				{mcp.ToolUpdateRecords, `{"table":"contact","filter":"id = 1","records":[{"email":null}]}`, true},
				{mcp.ToolDeleteRecords, `{"table":"note","records":[{"id":1}]}`, true},
				{mcp.ToolDeleteRecords, `{"table":"note","records":[{"body":"x"}]}`, false},
				{mcp.ToolDeleteRecords, `{"table":"note","ids":[1]}`, true},
				{mcp.ToolQueryRecords, `{"table":"contact","fields":["name","secret"]}`, true},
				{mcp.ToolQueryRecords, `{"table":"contact","fields":["nope"]}`, false},
			})
			// A role that may write some fields of contact only.
			role := idOf(create(t, admin, "role", map[string]any{"name": "writer", "is_active": true,
				"role_service_access_by_role_id": []any{
					map[string]any{"service_id": ai, "component": "", "verb_mask": policy.VerbAll, "requestor_mask": api},
					map[string]any{"service_id": data, "component": "_table/contact", "verb_mask": policy.VerbGet | policy.VerbPost | policy.VerbPatch,
						"requestor_mask": api, "fields": []string{"id", "name", "email"}},
				}}))
			app := create(t, admin, "app", map[string]any{"name": "writer", "is_active": true, "role_id": role})
			ws := connect(t, endpoint, &proxytest.Client{Inst: in, APIKey: app["api_key"].(string)})
			checkRecordSchemas(t, ws, []schemaCase{
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"name":"Eve","email":"eve@example.com"}]}`, true},
				{mcp.ToolCreateRecords, `{"table":"contact","records":[{"name":"Eve","secret":"x"}]}`, false}, // dropped by the role
				{mcp.ToolCreateRecords, `{"table":"note","records":[{"body":"x"}]}`, false},
				{mcp.ToolUpdateRecords, `{"table":"contact","records":[{"id":1,"email":"ann@example.org"}]}`, true},
				{mcp.ToolUpdateRecords, `{"table":"contact","records":[{"id":1,"secret":"x"}]}`, false},
				{mcp.ToolQueryRecords, `{"table":"contact","fields":["email"]}`, true},
				{mcp.ToolQueryRecords, `{"table":"contact","fields":["secret"]}`, false},
				{mcp.ToolDeleteRecords, `{"table":"contact","ids":[1]}`, false},
			})
			// What the schema allows, the REST call does; what it leaves out, the REST call refuses.
			text, isErr := call(t, ws, mcp.ToolCreateRecords, map[string]any{"table": "contact", "records": []any{map[string]any{"name": "Eve", "email": "eve@example.com"}}, "fields": "name"})
			if isErr || text != `{"resource":[{"name":"Eve"}]}` {
				t.Fatalf("create_records = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			text, isErr = call(t, ws, mcp.ToolCreateRecords, map[string]any{"table": "contact", "records": []any{map[string]any{"name": "Eve", "secret": "x"}}})
			if !isErr || envelopeCode(t, text) != 403 {
				t.Fatalf("create_records with a field the role may not write = %v %s", isErr, text)
			}
			nextEvent(t, audit)
			text, isErr = call(t, as, mcp.ToolDeleteRecords, map[string]any{"table": "contact", "filter": "name = 'Eve'"})
			if isErr {
				t.Fatalf("delete_records = %s", text)
			}
			nextEvent(t, audit)
		})

		t.Run("OpenAPI documents the service", func(t *testing.T) {
			var doc struct {
				Paths map[string]map[string]any `json:"paths"`
			}
			must(t, admin, http.StatusOK, "GET", "/api/v2/api_docs/ai", nil).JSON(t, &doc)
			if doc.Paths["/"]["post"] == nil {
				t.Fatalf("paths = %v", doc.Paths)
			}
		})

		t.Run("limits count tool calls", func(t *testing.T) {
			must(t, admin, 201, "POST", "/api/v2/system/limit", map[string]any{"resource": []any{map[string]any{
				"name": "data thrice", "type": "instance.service", "service_id": data, "rate": 3, "period": "minute", "is_active": true}}})
			if err := in.Proxy.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
			var codes []int
			for range 4 {
				text, isErr := call(t, ls, mcp.ToolQueryRecords, map[string]any{"table": "contact", "limit": 1})
				code := 200
				if isErr {
					code = envelopeCode(t, text)
				}
				codes = append(codes, code)
				nextEvent(t, audit)
			}
			if fmt.Sprint(codes) != "[200 200 200 429]" {
				t.Errorf("tool calls answered %v", codes)
			}
		})

		t.Run("audit stream replay and access", func(t *testing.T) {
			since := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339))
			create(t, admin, "user", map[string]any{"name": "Ann", "email": "ann@example.com", "password": "ann-password-1", "is_active": true})
			ann := &proxytest.Client{Inst: in, APIKey: limited.APIKey}
			r := must(t, ann, 200, "POST", "/api/v2/user/session", map[string]string{"email": "ann@example.com", "password": "ann-password-1"})
			ann.Session, _ = r.Map(t)["session_token"].(string)
			for _, c := range []struct {
				name   string
				client *proxytest.Client
				status int
			}{
				{"no credentials", &proxytest.Client{Inst: in}, 401},
				{"API key alone", limited, 401},
				{"admin key alone", in.API(), 401},
				{"signed-in user who is not an administrator", ann, 403},
				{"bad since", admin, 400},
			} {
				path := proxy.AuditStreamPath
				if c.status == 400 {
					path += "?since=yesterday"
				}
				if r := c.client.Do(t, "GET", path, nil); r.Status != c.status {
					t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.URL+proxy.AuditStreamPath+"?since="+since, nil)
			req.Header.Set("X-Platform-API-Key", admin.APIKey)
			req.Header.Set("X-Platform-Session-Token", admin.Session)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			if !sc.Scan() {
				t.Fatal("no replay")
			}
			var e mcp.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Tool != mcp.ToolListTables {
				t.Errorf("first replayed event %s", sc.Bytes())
			}
		})
	})
}
