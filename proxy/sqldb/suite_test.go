package sqldb_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// step is one request of the shared suite. Steps run in order on a fresh
// fixture per engine; each response is checked against the expectations
// and, at the end, compared across engines.
type step struct {
	name   string
	method string
	path   string // below /api/v2/data/, query unescaped: it is encoded by q()
	body   any
	status int
	// ids, when set, are the "id" members expected in resource (or of the
	// single record), in order.
	ids []int
	// want, when set, is the exact JSON expected (compared as structure).
	want string
	// contains are substrings the body must hold.
	contains []string
	// statusOnly compares only the status and error code across engines
	// (the message holds the database's own text).
	statusOnly bool
}

// q encodes the query of a path written readably ("a?filter=x > 1").
func q(p string) string {
	path, query, ok := strings.Cut(p, "?")
	if !ok {
		return p
	}
	vals := url.Values{}
	// Parameters are split at "&" followed by a name and "=", so that a
	// filter may hold "&&".
	var parts []string
	for {
		loc := paramStart.FindStringIndex(query)
		if loc == nil {
			parts = append(parts, query)
			break
		}
		parts = append(parts, query[:loc[0]])
		query = query[loc[0]+1:]
	}
	for _, kv := range parts {
		k, v, _ := strings.Cut(kv, "=")
		vals.Add(k, v)
	}
	return path + "?" + vals.Encode()
}

var paramStart = regexp.MustCompile(`&[a-z_.]+=`)

func rec(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func res(recs ...map[string]any) map[string]any {
	l := make([]any, len(recs))
	for i, r := range recs {
		l[i] = r
	}
	return map[string]any{"resource": l}
}

func readSteps() []step {
	c := "_table/customer"
	f := func(name, filter string, ids ...int) step {
		if ids == nil {
			ids = []int{}
		}
		return step{name: "filter " + name, method: "GET", path: c + "?filter=" + filter, status: 200, ids: ids}
	}
	return []step{
		{name: "list tables", method: "GET", path: "_table", status: 200,
			want: `{"resource":[{"name":"customer"},{"name":"nokey"},{"name":"order_tag"},{"name":"orders"},{"name":"tag"}]}`},
		{name: "list tables as_list", method: "GET", path: "_table?as_list=true", status: 200,
			want: `{"resource":["customer","nokey","order_tag","orders","tag"]}`},
		{name: "list tables fields=*", method: "GET", path: "_table?fields=*", status: 200, contains: []string{`"label":"Order Tag"`, `"is_view":false`}},
		{name: "all records", method: "GET", path: c, status: 200, ids: []int{1, 2, 3, 4},
			contains: []string{`"balance":120.50`, `"active":true`, `"active":false`, `"born":"1994-03-01"`, `"created":"2024-01-15 10:30:00"`, `"rating":4.5`, `"notes":null`}},
		{name: "by id", method: "GET", path: c + "/2", status: 200,
			want: `{"id":2,"name":"Bob","email":"bob@example.com","age":25,"active":false,"balance":0.00,"rating":3.25,"born":"1999-12-31","created":"2024-02-01 08:00:00","notes":null}`},
		{name: "by id with fields", method: "GET", path: c + "/3?fields=name,age", status: 200, want: `{"name":"Carol","age":null}`},
		{name: "missing id", method: "GET", path: c + "/99", status: 404, contains: []string{"Record with identifier '99' not found."}},
		{name: "non-numeric id", method: "GET", path: c + "/abc", status: 404},
		{name: "unknown table", method: "GET", path: "_table/nosuch", status: 404, contains: []string{`Table \"nosuch\" does not exist`}},
		{name: "too deep", method: "GET", path: c + "/1/x", status: 404},
		{name: "unknown resource", method: "GET", path: "_nosuch", status: 404},
		{name: "table names ignore case", method: "GET", path: "_table/CUSTOMER/1?fields=id", status: 200, want: `{"id":1}`},

		f("=", "age = 30", 1),
		f("!=", "age != 30", 2, 4),
		f("<>", "age <> 30", 2, 4),
		f(">", "age > 25", 1, 4),
		f(">=", "age >= 25", 1, 2, 4),
		f("<", "age < 30", 2),
		f("<=", "age <= 30", 1, 2),
		f("no spaces", "age>25", 1, 4),
		f("eq", "age eq 30", 1),
		f("ne", "age ne 30", 2, 4),
		f("gt", "age gt 25", 1, 4),
		f("gte", "age gte 25", 1, 2, 4),
		f("lt", "age lt 30", 2),
		f("lte", "age lte 30", 1, 2),
		f("like", "name like 'A%'", 1),
		f("like underscore", "name like '_ob'", 2),
		f("not like", "name not like 'A%'", 2, 3, 4),
		f("like escaped percent", `notes like '100\% %'`, 4),
		f("in", "name in ('Alice', 'Bob')", 1, 2),
		f("in numbers", "age in (25, 41)", 2, 4),
		f("in with null", "age in (30, null)", 1, 3),
		f("not in", "name not in ('Alice')", 2, 3, 4),
		f("not in with null", "age not in (30, null)", 2, 4),
		f("is null", "age is null", 3),
		f("is not null", "age is not null", 1, 2, 4),
		f("= null", "email = null", 4),
		f("!= null", "email != null", 1, 2, 3),
		f("between", "age between 25 and 30", 1, 2),
		f("not between", "age not between 25 and 30", 4),
		f("contains", "name contains 'aro'", 3),
		f("contains percent", "notes contains '%'", 4),
		f("starts with", "name starts with 'Da'", 4),
		f("ends with", "name ends with 'ce'", 1),
		f("and", "(age > 20) and (active = true)", 1, 4),
		f("and unparenthesised", "age > 20 and active = true", 1, 4),
		f("or", "age > 35 or name = 'Bob'", 2, 4),
		f("not", "not (age > 26)", 2),
		f("xor", "age > 26 xor name = 'Alice'", 4),
		f("nor", "age > 40 nor name = 'Bob'", 1),
		f("&& and ||", "(age > 40 || name = 'Bob') && active = false", 2),
		f("nested", "(name = 'Alice' or (age < 30 and active = false)) and email is not null", 1, 2),
		f("boolean true", "active = true", 1, 3, 4),
		f("boolean false", "active = false", 2),
		f("boolean 1", "active = 1", 1, 3, 4),
		f("decimal", "balance > 50.5", 1, 3),
		f("decimal equality", "balance = 99.99", 3),
		f("double", "rating >= 4.5", 1, 4),
		f("date", "born < '1990-01-01'", 4),
		f("bare date", "born = 1994-03-01", 1),
		f("datetime", "created > '2024-01-01 00:00:00'", 1, 2),
		f("quoted quote", `notes = 'it''s "quoted"'`, 3),
		f("backslash quote", `notes = 'it\'s "quoted"'`, 3),
		f("double-quoted value", `name = "Alice"`, 1),
		f("bare string", `name = Alice`, 1),
		f("case-insensitive keywords", "AGE > 25 AND Name LIKE 'A%'", 1),
		f("related belongs-to", "orders_by_customer_id.total > 20", 1),
		f("related has-many none", "not (orders_by_customer_id.total > 0)", 3, 4),
		{name: "filter related on child", method: "GET", path: "_table/orders?filter=customer_by_customer_id.name = 'Bob'", status: 200, ids: []int{3}},
		{name: "filter many-to-many", method: "GET", path: "_table/orders?filter=tag_by_order_tag.label = 'green'", status: 200, ids: []int{1, 2}},
		{name: "where alias", method: "GET", path: c + "?where=age = 25", status: 200, ids: []int{2}},

		{name: "fields", method: "GET", path: c + "?fields=id,name&filter=id < 3", status: 200,
			want: `{"resource":[{"id":1,"name":"Alice"},{"id":2,"name":"Bob"}]}`},
		{name: "select alias", method: "GET", path: c + "?select=name&limit=1", status: 200, want: `{"resource":[{"name":"Alice"}],"meta":{"next":1}}`},
		{name: "fields as", method: "GET", path: c + "?fields=name as who&ids=4", status: 200, want: `{"resource":[{"who":"Dave"}]}`},
		{name: "fields as keeps the type", method: "GET", path: c + "?fields=active as on&ids=2", status: 200, want: `{"resource":[{"on":false}]}`},
		{name: "fields case-insensitive", method: "GET", path: c + "?fields=NAME&ids=1", status: 200, want: `{"resource":[{"name":"Alice"}]}`},
		{name: "order desc", method: "GET", path: c + "?order=age desc&fields=id", status: 200, ids: []int{4, 1, 2, 3}},
		{name: "order nulls first", method: "GET", path: c + "?order=age asc nulls first&fields=id", status: 200, ids: []int{3, 2, 1, 4}},
		{name: "sort alias", method: "GET", path: c + "?sort=name desc&fields=id", status: 200, ids: []int{4, 3, 2, 1}},
		{name: "order_by two", method: "GET", path: c + "?order_by=active desc, id desc&fields=id", status: 200, ids: []int{4, 3, 1, 2}},
		{name: "limit offset", method: "GET", path: c + "?limit=2&offset=1&fields=id", status: 200,
			want: `{"resource":[{"id":2},{"id":3}],"meta":{"next":3}}`},
		{name: "top skip", method: "GET", path: c + "?top=1&skip=3&fields=id", status: 200, want: `{"resource":[{"id":4}]}`},
		{name: "limit 0 is the maximum", method: "GET", path: c + "?limit=0&fields=id", status: 200, ids: []int{1, 2, 3, 4}},
		{name: "include_count", method: "GET", path: c + "?include_count=true&limit=1&fields=id", status: 200,
			want: `{"resource":[{"id":1}],"meta":{"count":4,"next":1}}`},
		{name: "include_count filtered", method: "GET", path: c + "?include_count=1&filter=age > 26&fields=id", status: 200,
			want: `{"resource":[{"id":1},{"id":4}],"meta":{"count":2}}`},
		{name: "count_only", method: "GET", path: c + "?count_only=true", status: 200, want: `{"meta":{"count":4}}`},
		{name: "count_only filtered", method: "GET", path: c + "?count_only=true&filter=active = true", status: 200, want: `{"meta":{"count":3}}`},
		{name: "group", method: "GET", path: c + "?fields=active,count(*) as n&group=active&order=active", status: 200,
			want: `{"resource":[{"active":false,"n":1},{"active":true,"n":3}]}`},
		{name: "group having", method: "GET", path: c + "?fields=active,count(*) as n&group_by=active&having=count(*) > 1", status: 200,
			want: `{"resource":[{"active":true,"n":3}]}`},
		{name: "group count_only", method: "GET", path: c + "?group=active&count_only=true", status: 200, want: `{"meta":{"count":2}}`},
		{name: "aggregates", method: "GET", path: "_table/orders?fields=count(*) as n,min(customer_id) as lo,max(customer_id) as hi", status: 200,
			want: `{"resource":[{"n":4,"lo":1,"hi":2}]}`},
		{name: "group sum", method: "GET", path: "_table/orders?fields=customer_id,count(id) as n&group=customer_id&filter=customer_id is not null&order=customer_id", status: 200,
			want: `{"resource":[{"customer_id":1,"n":2},{"customer_id":2,"n":1}]}`},
		{name: "ids", method: "GET", path: c + "?ids=3,1&fields=id", status: 200, want: `{"resource":[{"id":3},{"id":1}]}`},
		{name: "ids one", method: "GET", path: c + "?ids=2&fields=name", status: 200, want: `{"resource":[{"name":"Bob"}]}`},
		{name: "ids missing", method: "GET", path: c + "?ids=1,99", status: 400,
			contains: []string{`"code":1000`, `"index":1`, "Record with identifier '99' not found."}},
		{name: "ids missing continue", method: "GET", path: c + "?ids=99,1&fields=id&continue=true", status: 400,
			contains: []string{`"code":1000`, `"index":0`, `{"id":1}`}},
		{name: "records in body of GET", method: "GET", path: c + "?fields=id,name", body: res(rec("id", 2), rec("ID", 1)), status: 200,
			want: `{"resource":[{"id":2,"name":"Bob"},{"id":1,"name":"Alice"}]}`},
		{name: "options in body", method: "GET", path: c, body: map[string]any{"resource": []any{}, "filter": "age > 40", "fields": []any{"id", "name"}}, status: 200,
			want: `{"resource":[{"id":4,"name":"Dave"}]}`},
		{name: "query wins over body", method: "GET", path: c + "?filter=age = 25", body: map[string]any{"resource": []any{}, "filter": "age > 40"}, status: 200, ids: []int{2}},
		{name: "id_field by id", method: "GET", path: "_table/nokey/2?id_field=a", status: 200, want: `{"a":2,"b":"two"}`},
		{name: "id_field ids", method: "GET", path: "_table/nokey?id_field=b&ids=two,one", status: 200, want: `{"resource":[{"a":2,"b":"two"},{"a":1,"b":"one"}]}`},
		{name: "no key without id_field", method: "GET", path: "_table/nokey/1", status: 400, contains: []string{"id_field"}},
		{name: "unknown id_field", method: "GET", path: "_table/nokey/1?id_field=zz", status: 400},
		{name: "table without key lists", method: "GET", path: "_table/nokey", status: 200, want: `{"resource":[{"a":1,"b":"one"},{"a":2,"b":"two"}]}`},
		{name: "composite key", method: "GET", path: "_table/order_tag/1,2", status: 200, want: `{"order_id":1,"tag_id":2}`},
		{name: "composite ids", method: "GET", path: "_table/order_tag?ids='2,2','1,1'", status: 200,
			want: `{"resource":[{"order_id":2,"tag_id":2},{"order_id":1,"tag_id":1}]}`},
		{name: "composite missing", method: "GET", path: "_table/order_tag/3,1", status: 404},

		{name: "related belongs-to", method: "GET", path: "_table/orders/4?related=customer_by_customer_id", status: 200,
			want: `{"id":4,"customer_id":null,"total":1.00,"placed":null,"customer_by_customer_id":null}`},
		{name: "related all", method: "GET", path: "_table/orders?related=*&fields=id&ids=1", status: 200,
			want: `{"resource":[{"id":1,"customer_by_customer_id":{"id":1,"name":"Alice","email":"alice@example.com","age":30,"active":true,"balance":120.50,"rating":4.5,"born":"1994-03-01","created":"2024-01-15 10:30:00","notes":"likes tea"},"order_tag_by_order_id":[{"order_id":1,"tag_id":1},{"order_id":1,"tag_id":2}],"tag_by_order_tag":[{"id":1,"label":"red"},{"id":2,"label":"green"}]}]}`},
		{name: "related has-many with options", method: "GET",
			path: c + "?related=orders_by_customer_id&fields=id&orders_by_customer_id.fields=total&orders_by_customer_id.order=total desc&orders_by_customer_id.limit=1&filter=id < 4", status: 200,
			want: `{"resource":[{"id":1,"orders_by_customer_id":[{"total":25.50}]},{"id":2,"orders_by_customer_id":[{"total":7.25}]},{"id":3,"orders_by_customer_id":[]}]}`},
		{name: "related with _fields spelling", method: "GET", path: "_table/tag?related=orders_by_order_tag&orders_by_order_tag_fields=id&fields=label", status: 200,
			want: `{"resource":[{"label":"red","orders_by_order_tag":[{"id":1}]},{"label":"green","orders_by_order_tag":[{"id":1},{"id":2}]},{"label":"blue","orders_by_order_tag":[{"id":3}]}]}`},
		{name: "unknown relation", method: "GET", path: c + "?related=nosuch", status: 400},

		{name: "bad filter", method: "GET", path: c + "?filter=age >", status: 400, contains: []string{"position"}},
		{name: "unknown field in filter", method: "GET", path: c + "?filter=nosuch = 1", status: 400, contains: []string{"nosuch"}},
		{name: "wrong value kind", method: "GET", path: c + "?filter=age = 'abc'", status: 400},
		{name: "unknown field in fields", method: "GET", path: c + "?fields=nosuch", status: 400},
		{name: "unknown field in order", method: "GET", path: c + "?order=nosuch", status: 400},
		{name: "bad limit", method: "GET", path: c + "?limit=abc", status: 400},
		{name: "negative offset", method: "GET", path: c + "?offset=-1", status: 400},
		{name: "bad boolean", method: "GET", path: c + "?include_count=maybe", status: 400},
		{name: "having without group", method: "GET", path: c + "?having=count(*) > 1", status: 400},
		{name: "POST by id", method: "POST", path: c + "/1", body: rec("name", "x"), status: 400},
		{name: "PUT on _table", method: "PUT", path: "_table", status: 400},
	}
}

func writeSteps() []step {
	c := "_table/customer"
	return []step{
		{name: "create one", method: "POST", path: c, body: res(rec("name", "Eve", "age", 22, "email", "eve@example.com")), status: 200,
			want: `{"resource":[{"id":5}]}`},
		{name: "create bare array with fields", method: "POST", path: c + "?fields=*",
			body:   []any{rec("name", "Frank", "active", false, "balance", "10.1", "born", "2000-01-02", "created", "2024-05-06T07:08:09Z", "rating", 2)},
			status: 200,
			want:   `{"resource":[{"id":6,"name":"Frank","email":null,"age":null,"active":false,"balance":10.10,"rating":2,"born":"2000-01-02","created":"2024-05-06 07:08:09","notes":null}]}`},
		{name: "create two with body options", method: "POST", path: c,
			body:   map[string]any{"resource": []any{rec("name", "Gina", "NOTES", "upper-case key"), rec("name", "Hal", "unknown", 1)}, "fields": "id,name,notes"},
			status: 200, want: `{"resource":[{"id":7,"name":"Gina","notes":"upper-case key"},{"id":8,"name":"Hal","notes":null}]}`},
		{name: "create related", method: "GET", path: c + "/7?related=orders_by_customer_id&fields=id", status: 200, want: `{"id":7,"orders_by_customer_id":[]}`},
		{name: "create empty body", method: "POST", path: c, status: 400, contains: []string{"No record(s) detected"}},
		{name: "create bare object", method: "POST", path: c, body: rec("name", "x"), status: 400, contains: []string{"resource"}},
		{name: "create no known field", method: "POST", path: c, body: res(rec("zzz", 1)), status: 400, contains: []string{"Required field 'name'"}},
		{name: "create null to not-null", method: "POST", path: c, body: res(rec("name", nil)), status: 400, contains: []string{"Field 'name' can not be NULL."}},
		{name: "create bad integer", method: "POST", path: c, body: res(rec("name", "x", "age", "old")), status: 400, contains: []string{"age"}},
		{name: "create bad date", method: "POST", path: c, body: res(rec("name", "x", "born", "yesterday")), status: 400, contains: []string{"born"}},
		{name: "create bad json", method: "POST", path: c, body: `{"resource":[{"name":}]}`, status: 400, contains: []string{"JSON"}},

		{name: "patch by id", method: "PATCH", path: c + "/1", body: rec("age", 31, "notes", "tea & cake"), status: 200,
			want: `{"id":1,"name":"Alice","email":"alice@example.com","age":31,"active":true,"balance":120.50,"rating":4.5,"born":"1994-03-01","created":"2024-01-15 10:30:00","notes":"tea \u0026 cake"}`},
		{name: "patch by id same values", method: "PATCH", path: c + "/1?fields=age", body: rec("age", 31), status: 200, want: `{"age":31}`},
		{name: "patch by id missing", method: "PATCH", path: c + "/99", body: rec("age", 1), status: 404},
		{name: "patch null to not-null", method: "PATCH", path: c + "/1", body: rec("name", nil), status: 400, contains: []string{"Field 'name' can not be NULL."}},
		{name: "patch no body", method: "PATCH", path: c + "/1", status: 400},
		{name: "put by id replaces", method: "PUT", path: c + "/2", body: rec("name", "Robert", "age", 26), status: 200,
			want: `{"id":2,"name":"Robert","email":null,"age":26,"active":true,"balance":null,"rating":null,"born":null,"created":null,"notes":null}`},
		{name: "put without required", method: "PUT", path: c + "/2", body: rec("age", 27), status: 400, contains: []string{"Required field 'name'"}},
		{name: "patch records", method: "PATCH", path: c, body: res(rec("id", 3, "notes", "n3"), rec("id", 4, "notes", "n4")), status: 200,
			want: `{"resource":[{"id":3},{"id":4}]}`},
		{name: "patch records with fields", method: "PATCH", path: c + "?fields=id,notes", body: []any{rec("id", 3, "age", 50)}, status: 200,
			want: `{"resource":[{"id":3,"notes":"n3"}]}`},
		{name: "patch records without key", method: "PATCH", path: c, body: res(rec("notes", "x")), status: 400, contains: []string{"Required id field(s) not found in record 0: id."}},
		{name: "patch by ids", method: "PATCH", path: c + "?ids=3,4&fields=id,active", body: rec("active", false), status: 200,
			want: `{"resource":[{"id":3,"active":false},{"id":4,"active":false}]}`},
		{name: "patch by filter", method: "PATCH", path: c + "?filter=age > 40", body: res(rec("notes", "old")), status: 200,
			want: `{"resource":[{"id":3},{"id":4}]}`},
		{name: "patch by filter matching nothing", method: "PATCH", path: c + "?filter=age > 400", body: rec("notes", "x"), status: 200, want: `{"resource":[]}`},
		{name: "put records", method: "PUT", path: c + "?fields=*", body: res(rec("id", 4, "name", "David", "active", true)), status: 200,
			want: `{"resource":[{"id":4,"name":"David","email":null,"age":null,"active":true,"balance":null,"rating":null,"born":null,"created":null,"notes":null}]}`},
		{name: "state after updates", method: "GET", path: c + "?fields=id,name,age,active,notes", status: 200,
			want: `{"resource":[{"id":1,"name":"Alice","age":31,"active":true,"notes":"tea \u0026 cake"},{"id":2,"name":"Robert","age":26,"active":true,"notes":null},{"id":3,"name":"Carol","age":50,"active":false,"notes":"old"},{"id":4,"name":"David","age":null,"active":true,"notes":null},{"id":5,"name":"Eve","age":22,"active":true,"notes":null},{"id":6,"name":"Frank","age":null,"active":false,"notes":null},{"id":7,"name":"Gina","age":null,"active":true,"notes":"upper-case key"},{"id":8,"name":"Hal","age":null,"active":true,"notes":null}]}`},

		{name: "delete by id", method: "DELETE", path: c + "/8", status: 200,
			want: `{"id":8,"name":"Hal","email":null,"age":null,"active":true,"balance":null,"rating":null,"born":null,"created":null,"notes":null}`},
		{name: "delete by id missing", method: "DELETE", path: c + "/8", status: 404},
		{name: "delete by ids", method: "DELETE", path: c + "?ids=6,7", status: 200, want: `{"resource":[{"id":6},{"id":7}]}`},
		{name: "delete by filter with fields", method: "DELETE", path: c + "?filter=name = 'Eve'&fields=name", status: 200, want: `{"resource":[{"name":"Eve"}]}`},
		{name: "delete records", method: "DELETE", path: "_table/order_tag", body: res(rec("order_id", 3, "tag_id", 3)), status: 200,
			want: `{"resource":[{"order_id":3,"tag_id":3}]}`},
		{name: "delete composite by id", method: "DELETE", path: "_table/order_tag/2,2", status: 200, want: `{"order_id":2,"tag_id":2}`},
		{name: "delete nothing given", method: "DELETE", path: c, status: 400, contains: []string{"No filter or records given for delete request."}},
		{name: "id_field patch", method: "PATCH", path: "_table/nokey/1?id_field=a", body: rec("b", "uno"), status: 200, want: `{"a":1,"b":"uno"}`},
		{name: "id_field delete", method: "DELETE", path: "_table/nokey?id_field=b&ids=uno", status: 200, want: `{"resource":[{"b":"uno"}]}`},
		{name: "force delete", method: "DELETE", path: "_table/nokey?force=true", status: 200, want: `{"success":true}`},
		{name: "force deleted all", method: "GET", path: "_table/nokey", status: 200, want: `{"resource":[]}`},

		// Batches on tag (explicit keys, so that engines stay in step).
		{name: "batch stops at first failure", method: "POST", path: "_table/tag", body: res(rec("id", 10, "label", "a"), rec("id", 1, "label", "dup"), rec("id", 11, "label", "b")),
			status: 400, statusOnly: true, contains: []string{`"code":1000`, `"index":1`, "could be created", `{"id":10}`}},
		{name: "batch kept earlier record", method: "GET", path: "_table/tag?ids=10,11&continue=true&fields=id", status: 400, contains: []string{`{"id":10}`, `"index":1`}},
		{name: "batch continue", method: "POST", path: "_table/tag?continue=true", body: res(rec("id", 12, "label", "a"), rec("id", 1, "label", "dup"), rec("id", 13, "label", "b")),
			status: 400, statusOnly: true, contains: []string{`"index":1`, `{"id":12}`, `{"id":13}`}},
		{name: "batch continue wrote both", method: "GET", path: "_table/tag?ids=12,13&fields=id", status: 200, want: `{"resource":[{"id":12},{"id":13}]}`},
		{name: "batch rollback", method: "POST", path: "_table/tag?rollback=true", body: res(rec("id", 14, "label", "a"), rec("id", 15, "label", "b"), rec("id", 2, "label", "dup")),
			status: 400, statusOnly: true, contains: []string{"All changes rolled back.", `"index":2`}},
		{name: "batch rollback left nothing", method: "GET", path: "_table/tag?filter=id >= 14&fields=id", status: 200, want: `{"resource":[]}`},
		{name: "rollback and continue", method: "POST", path: "_table/tag?rollback=true&continue=true", body: res(rec("id", 16, "label", "a")), status: 400,
			contains: []string{"Rollback and continue operations can not be requested at the same time."}},
		{name: "batch rollback success", method: "POST", path: "_table/tag?rollback=true", body: res(rec("id", 16, "label", "a"), rec("id", 17, "label", "b")), status: 200,
			want: `{"resource":[{"id":16},{"id":17}]}`},
		{name: "batch update rollback", method: "PATCH", path: "_table/tag?rollback=1", body: res(rec("id", 16, "label", "changed"), rec("id", 99, "label", "x")),
			status: 400, contains: []string{"All changes rolled back.", "Record with identifier '99' not found."}},
		{name: "batch update rolled back", method: "GET", path: "_table/tag/16", status: 200, want: `{"id":16,"label":"a"}`},
		{name: "batch delete default", method: "DELETE", path: "_table/tag?ids=16,99,17", status: 400, contains: []string{`"index":1`, `{"id":16}`}},
		{name: "batch delete kept first", method: "GET", path: "_table/tag?filter=id >= 16&fields=id", status: 200, want: `{"resource":[{"id":17}]}`},
		{name: "unique violation is 409", method: "POST", path: c, body: res(rec("name", "Dup", "email", "alice@example.com")), status: 409, statusOnly: true},
		{name: "foreign key violation is 409", method: "POST", path: "_table/orders", body: res(rec("id", 50, "customer_id", 999, "total", 1)), status: 409, statusOnly: true},
		{name: "delete referenced is 409", method: "DELETE", path: c + "/1", status: 409, statusOnly: true},
		{name: "primary key violation is 409", method: "POST", path: "_table/tag", body: res(rec("id", 1, "label", "again")), status: 409, statusOnly: true},
		{name: "final state", method: "GET", path: "_table/tag", status: 200,
			want: `{"resource":[{"id":1,"label":"red"},{"id":2,"label":"green"},{"id":3,"label":"blue"},{"id":10,"label":"a"},{"id":12,"label":"a"},{"id":13,"label":"b"},{"id":17,"label":"b"}]}`},
	}
}

// canonical re-encodes a JSON body with sorted keys and numbers as written.
func canonical(b string) string {
	dec := json.NewDecoder(strings.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "INVALID JSON: " + b
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// errorCode returns status and envelope code of an error body.
func errorCode(status int, body string) string {
	var env struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &env)
	return fmt.Sprintf("%d/%d", status, env.Error.Code)
}

func checkStep(t *testing.T, s step, status int, body string) {
	t.Helper()
	if status != s.status {
		t.Errorf("%s: status %d, want %d: %s", s.name, status, s.status, body)
		return
	}
	if s.want != "" {
		if got, want := canonical(body), canonical(s.want); got != want {
			t.Errorf("%s: body mismatch (-want +got):\n%s", s.name, cmp.Diff(want, got))
		}
	}
	for _, c := range s.contains {
		if !strings.Contains(body, c) {
			t.Errorf("%s: body lacks %q: %s", s.name, c, body)
		}
	}
	if s.ids != nil {
		var v struct {
			Resource []map[string]any `json:"resource"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("%s: %v: %s", s.name, err, body)
			return
		}
		got := []int{}
		for _, r := range v.Resource {
			id, _ := r["id"].(float64)
			got = append(got, int(id))
		}
		if !cmp.Equal(got, s.ids) {
			t.Errorf("%s: ids %v, want %v", s.name, got, s.ids)
		}
	}
}

// TestSuite runs every endpoint, parameter and filter operator on every
// engine and requires identical JSON from all of them.
func TestSuite(t *testing.T) {
	steps := append(readSteps(), writeSteps()...)
	results := map[string]map[dialects.Kind]string{}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for _, s := range steps {
			var body any = s.body
			if str, ok := s.body.(string); ok {
				body = []byte(str)
			}
			status, got := e.do(t, s.method, q(s.path), body)
			checkStep(t, s, status, got)
			key := s.name
			if results[key] == nil {
				results[key] = map[dialects.Kind]string{}
			}
			if s.statusOnly {
				results[key][cfg.Kind] = errorCode(status, got)
			} else {
				results[key][cfg.Kind] = fmt.Sprintf("%d %s", status, canonical(got))
			}
		}
	})
	for _, s := range steps {
		byKind := results[s.name]
		base, ok := byKind[dialects.SQLite]
		if !ok {
			continue
		}
		for _, k := range []dialects.Kind{dialects.Postgres, dialects.MySQL} {
			if got, ok := byKind[k]; ok && got != base {
				t.Errorf("%s: %s differs from sqlite (-sqlite +%s):\n%s", s.name, k, k, cmp.Diff(base, got))
			}
		}
	}
}
