package sqldb_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// getJSON calls GET and decodes the body, failing unless the status is 200.
func (e *env) getJSON(t *testing.T, path string) any {
	t.Helper()
	status, body := e.do(t, "GET", path, nil)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return v
}

// mustDo calls the API and fails the test unless the status is want.
func (e *env) mustDo(t *testing.T, want int, method, path string, body any) string {
	t.Helper()
	status, got := e.do(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, got)
	}
	return got
}

// fieldSummary is the part of a field object the tests compare, in one
// line: name, type, length/precision/scale, default, the flags that are
// true, and the reference.
func fieldSummary(f map[string]any) string {
	s := func(k string) string {
		if f[k] == nil {
			return "-"
		}
		return fmt.Sprint(f[k])
	}
	var flags []string
	for _, k := range []string{"allow_null", "required", "is_primary_key", "auto_increment", "is_unique", "is_index", "is_foreign_key"} {
		if f[k] == true {
			flags = append(flags, strings.TrimPrefix(k, "is_"))
		}
	}
	ref := ""
	if f["is_foreign_key"] == true {
		ref = " ->" + s("ref_table") + "." + s("ref_field") + " " + s("ref_on_delete")
	}
	return fmt.Sprintf("%s %s %s/%s/%s def=%s [%s]%s", s("name"), s("type"), s("length"), s("precision"), s("scale"), s("default"), strings.Join(flags, " "), ref)
}

// tableFields returns the summaries of a table's fields.
func (e *env) tableFields(t *testing.T, table string) []string {
	t.Helper()
	obj := e.getJSON(t, "_schema/"+table).(map[string]any)
	var out []string
	for _, f := range obj["field"].([]any) {
		out = append(out, fieldSummary(f.(map[string]any)))
	}
	return out
}

// obj builds a JSON object from key, value pairs.
func obj(kv ...any) map[string]any { return rec(kv...) }

// list builds a JSON array.
func list(items ...any) []any { return items }

// authorTable and bookTable are created by the lifecycle test; book comes
// first in the request and references author.
func authorTable() map[string]any {
	return obj("name", "author", "label", "Author", "field", list(
		obj("name", "id", "type", "id"),
		obj("name", "name", "type", "string", "length", 64, "allow_null", false, "is_unique", true),
		obj("name", "bio", "type", "text"),
		obj("name", "born", "type", "date"),
		obj("name", "rating", "type", "float"),
		obj("name", "score", "type", "double"),
		obj("name", "price", "type", "decimal", "precision", 10, "scale", 2, "default", 0),
		obj("name", "active", "type", "boolean", "default", true, "allow_null", false),
		obj("name", "big", "type", "bigint"),
		obj("name", "code", "type", "integer", "is_index", true),
		obj("name", "meets", "type", "time"),
		obj("name", "seen", "type", "datetime"),
		obj("name", "stamp", "type", "timestamp"),
		obj("name", "created", "type", "timestamp_on_create"),
		obj("name", "updated", "type", "timestamp_on_update"),
	))
}

func bookTable() map[string]any {
	return obj("name", "book", "field", list(
		obj("name", "id", "type", "id"),
		obj("name", "author_id", "type", "reference", "ref_table", "author", "ref_field", "id", "ref_on_delete", "CASCADE"),
		obj("name", "title", "type", "string", "length", 100, "allow_null", false),
	))
}

// fkIndex is the flag MySQL adds to a foreign key column: InnoDB indexes
// it.
func fkIndex(kind dialects.Kind) string {
	if kind == dialects.MySQL {
		return " index"
	}
	return ""
}

// TestSchemaLifecycle creates tables of every field type through the API,
// writes records, alters the tables (add, change and drop columns, add
// foreign keys), checks that refused changes leave them as they were, and
// drops them, reading the result back through _schema and _table on every
// engine.
func TestSchemaLifecycle(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		k := cfg.Kind

		// Create: book references author and comes first.
		got := e.mustDo(t, 200, "POST", "_schema", obj("resource", list(bookTable(), authorTable())))
		checkStep(t, step{name: "create", status: 200, want: `{"resource":[{"name":"book"},{"name":"author"}]}`}, 200, got)
		seen := "datetime"
		if k == dialects.Postgres {
			seen = "timestamp" // PostgreSQL has no datetime type
		}
		wantAuthor := []string{
			"id id -/-/- def=- [primary_key auto_increment]",
			"name string 64/-/- def=- [required unique index]",
			"bio text -/-/- def=- [allow_null]",
			"born date -/-/- def=- [allow_null]",
			"rating float -/-/- def=- [allow_null]",
			"score double -/-/- def=- [allow_null]",
			"price decimal 10/10/2 def=0.00 [allow_null]",
			"active boolean -/-/- def=true []",
			"big bigint -/-/- def=- [allow_null]",
			"code integer -/-/- def=- [allow_null index]",
			"meets time -/-/- def=- [allow_null]",
			"seen " + seen + " -/-/- def=- [allow_null]",
			"stamp timestamp -/-/- def=- [allow_null]",
			"created timestamp -/-/- def=CURRENT_TIMESTAMP [allow_null]",
			"updated timestamp -/-/- def=CURRENT_TIMESTAMP [allow_null]",
		}
		if diff := cmp.Diff(wantAuthor, e.tableFields(t, "author")); diff != "" {
			t.Fatalf("author (-want +got):\n%s", diff)
		}
		wantBook := []string{
			"id id -/-/- def=- [primary_key auto_increment]",
			"author_id reference -/-/- def=- [allow_null" + fkIndex(k) + " foreign_key] ->author.id CASCADE",
			"title string 100/-/- def=- [required]",
		}
		if diff := cmp.Diff(wantBook, e.tableFields(t, "book")); diff != "" {
			t.Fatalf("book (-want +got):\n%s", diff)
		}
		author := e.getJSON(t, "_schema/author").(map[string]any)
		if author["label"] != "Author" || author["is_view"] != false || fmt.Sprint(author["primary_key"]) != "[id]" {
			t.Errorf("author table object: %v", author)
		}
		checkStep(t, step{name: "related", status: 200, contains: []string{`"name":"book_by_author_id"`, `"type":"has_many"`}},
			200, e.mustDo(t, 200, "GET", "_schema/author/_related", nil))

		// Records through the table API.
		e.mustDo(t, 200, "POST", "_table/author", res(rec("name", "Ann", "bio", "poet", "price", "12.5", "code", 7, "rating", 4.5, "born", "1970-05-06"),
			rec("name", "Bob", "code", 8)))
		e.mustDo(t, 200, "POST", "_table/book", res(rec("author_id", 1, "title", "Odes"), rec("author_id", 2, "title", "Notes")))
		checkStep(t, step{name: "related records", status: 200,
			contains: []string{`"title":"Odes","author_by_author_id":{"id":1,"name":"Ann"`, `"price":12.50`, `"active":true`}},
			200, e.mustDo(t, 200, "GET", "_table/book?related=author_by_author_id&order=id", nil))

		// Alter: add a column, change two (integer to bigint, text to a
		// string), keeping the rows.
		e.mustDo(t, 200, "PATCH", "_schema/author", obj("field", list(
			obj("name", "nickname", "type", "string", "length", 32),
			obj("name", "code", "type", "bigint"),
			obj("name", "bio", "type", "string", "length", 200),
		)))
		fields := e.tableFields(t, "author")
		for _, want := range []string{"code bigint -/-/- def=- [allow_null index]", "bio string 200/-/- def=- [allow_null]", "nickname string 32/-/- def=- [allow_null]"} {
			if !containsString(fields, want) {
				t.Errorf("after alter, fields lack %q: %v", want, fields)
			}
		}
		checkStep(t, step{name: "rows kept", status: 200, want: `{"id":1,"name":"Ann","bio":"poet","code":7,"nickname":null}`},
			200, e.mustDo(t, 200, "GET", "_table/author/1?fields=id,name,bio,code,nickname", nil))

		// Drop a column.
		checkStep(t, step{name: "drop field", status: 200, want: `{"success":true}`}, 200, e.mustDo(t, 200, "DELETE", "_schema/author/_field/rating", nil))
		if got := e.mustDo(t, 200, "GET", "_table/author/1", nil); strings.Contains(got, "rating") || !strings.Contains(got, `"name":"Ann"`) {
			t.Errorf("after dropping rating: %s", got)
		}

		// PUT replaces the field list: pages is added, then dropped.
		e.mustDo(t, 200, "PUT", "_schema/book", obj("field", list(obj("name", "id"), obj("name", "author_id"), obj("name", "title"),
			obj("name", "pages", "type", "integer", "default", 0, "allow_null", false))))
		checkStep(t, step{name: "pages added", status: 200, want: `{"id":1,"title":"Odes","pages":0}`}, 200,
			e.mustDo(t, 200, "GET", "_table/book/1?fields=id,title,pages", nil))
		e.mustDo(t, 200, "PUT", "_schema/book", obj("field", list(obj("name", "id"), obj("name", "author_id"), obj("name", "title"))))
		if diff := cmp.Diff(wantBook, e.tableFields(t, "book")); diff != "" {
			t.Errorf("book after PUT (-want +got):\n%s", diff)
		}
		checkStep(t, step{name: "book rows kept", status: 200, want: `{"id":1,"author_id":1,"title":"Odes"}`}, 200,
			e.mustDo(t, 200, "GET", "_table/book/1", nil))

		// Foreign keys: on an existing column by altering it, and as a
		// belongs_to relation.
		e.mustDo(t, 200, "POST", "_schema/review", obj("field", list(obj("name", "id", "type", "id"),
			obj("name", "book_id", "type", "integer"), obj("name", "reviewer_id", "type", "integer"), obj("name", "stars", "type", "integer"))))
		e.mustDo(t, 200, "POST", "_table/review", res(rec("book_id", 1, "reviewer_id", 2, "stars", 5)))
		e.mustDo(t, 200, "PATCH", "_schema/review/_field/book_id", obj("ref_table", "book", "ref_field", "id"))
		checkStep(t, step{name: "add relation", status: 200, want: `{"resource":[{"name":"author_by_reviewer_id"}]}`}, 200,
			e.mustDo(t, 200, "POST", "_schema/review/_related", obj("resource", list(obj("type", "belongs_to", "field", "reviewer_id", "ref_table", "author", "ref_field", "id", "ref_on_delete", "set null")))))
		fields = e.tableFields(t, "review")
		for _, want := range []string{"book_id reference -/-/- def=- [allow_null" + fkIndex(k) + " foreign_key] ->book.id NO ACTION",
			"reviewer_id reference -/-/- def=- [allow_null" + fkIndex(k) + " foreign_key] ->author.id SET NULL"} {
			if !containsString(fields, want) {
				t.Errorf("review lacks %q: %v", want, fields)
			}
		}
		e.mustDo(t, 409, "POST", "_table/review", res(rec("book_id", 99, "stars", 1)))
		checkStep(t, step{name: "related through new key", status: 200, contains: []string{`"book_by_book_id":{"id":1`}}, 200,
			e.mustDo(t, 200, "GET", "_table/review?related=book_by_book_id", nil))
		checkStep(t, step{name: "relation described", status: 200, contains: []string{`"name":"author_by_reviewer_id"`, `"ref_on_delete":"SET NULL"`}}, 200,
			e.mustDo(t, 200, "GET", "_schema/review/_related/author_by_reviewer_id", nil))

		// Changes the database refuses leave the table as it was.
		before := e.mustDo(t, 200, "GET", "_schema/author", nil)
		rows := e.mustDo(t, 200, "GET", "_table/author", nil)
		refused := []struct {
			name   string
			method string
			path   string
			body   any
			status int
		}{
			{"values that do not convert", "PATCH", "_schema/author", obj("field", list(obj("name", "extra", "type", "string"), obj("name", "name", "type", "integer"))), 400},
			{"NULLs in a column made NOT NULL", "PATCH", "_schema/author/_field/born", obj("allow_null", false, "default", nil), 400},
			{"a unique key over duplicates", "PUT", "_schema/author/_field", list(obj("name", "active", "is_unique", true), obj("name", "extra2", "type", "integer")), 409},
			{"an unknown type", "PATCH", "_schema/author", obj("field", list(obj("name", "extra", "type", "string"), obj("name", "odd", "type", "nope"))), 400},
			{"a foreign key to a missing table", "POST", "_schema/author/_field", list(obj("name", "extra", "type", "string"), obj("name", "ref", "type", "reference", "ref_table", "nosuch", "ref_field", "id")), 400},
			{"a NOT NULL column without default on rows", "POST", "_schema/author/_field", list(obj("name", "extra", "type", "string"), obj("name", "must", "type", "integer", "allow_null", false)), 400},
			{"dropping a referenced column", "DELETE", "_schema/author/_field?ids=nickname,id", nil, 409},
			{"dropping a referenced table", "DELETE", "_schema/author", nil, 409},
		}
		for _, c := range refused {
			status, body := e.do(t, c.method, c.path, c.body)
			if status != c.status {
				t.Errorf("%s: status %d, want %d: %s", c.name, status, c.status, body)
			}
			if after := e.mustDo(t, 200, "GET", "_schema/author", nil); after != before {
				t.Errorf("%s changed the table:\n%s\n%s", c.name, before, after)
			}
		}
		if after := e.mustDo(t, 200, "GET", "_table/author", nil); after != rows {
			t.Errorf("refused changes changed the rows:\n%s\n%s", rows, after)
		}
		// A request creating two tables, the second invalid, creates none.
		e.mustDo(t, 400, "POST", "_schema", list(obj("name", "good", "field", list(obj("name", "id", "type", "id"))),
			obj("name", "bad", "field", list(obj("name", "x", "type", "nope")))))
		e.mustDo(t, 404, "GET", "_schema/good", nil)
		e.mustDo(t, 400, "POST", "_schema", list(obj("name", "good", "field", list(obj("name", "id", "type", "id"))),
			obj("name", "bad", "field", list(obj("name", "x", "type", "reference", "ref_table", "good", "ref_field", "nosuch")))))
		e.mustDo(t, 404, "GET", "_schema/good", nil)

		// Drop: several tables at once, referencing ones first.
		checkStep(t, step{name: "drop tables", status: 200, want: `{"resource":[{"name":"author"},{"name":"book"},{"name":"review"}]}`}, 200,
			e.mustDo(t, 200, "DELETE", "_schema?ids=author,book,review", nil))
		for _, p := range []string{"_schema/author", "_schema/book", "_table/review"} {
			e.mustDo(t, 404, "GET", p, nil)
		}
		checkStep(t, step{name: "tables left", status: 200, want: `{"resource":["customer","nokey","order_tag","orders","tag"]}`}, 200,
			e.mustDo(t, 200, "GET", "_schema?as_list=true", nil))
	})
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSchemaRead reads tables, fields and relations of the fixture.
func TestSchemaRead(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for _, s := range []step{
			{name: "list", method: "GET", path: "_schema", status: 200,
				want: `{"resource":[{"name":"customer"},{"name":"nokey"},{"name":"order_tag"},{"name":"orders"},{"name":"tag"}]}`},
			{name: "list fields", method: "GET", path: "_schema?fields=name,label", status: 200,
				want: `{"resource":[{"name":"customer","label":"Customer"},{"name":"nokey","label":"Nokey"},{"name":"order_tag","label":"Order Tag"},{"name":"orders","label":"Orders"},{"name":"tag","label":"Tag"}]}`},
			{name: "list ids", method: "GET", path: "_schema?ids=tag,order_tag&fields=name,primary_key", status: 200,
				want: `{"resource":[{"name":"tag","primary_key":["id"]},{"name":"order_tag","primary_key":["order_id","tag_id"]}]}`},
			{name: "list all", method: "GET", path: "_schema?fields=*", status: 200, contains: []string{`"name":"nokey"`, `"primary_key":[]`, `"field":[{"alias":null,"name":"a"`}},
			{name: "table", method: "GET", path: "_schema/customer", status: 200, contains: []string{
				`{"alias":null,"name":"customer","label":"Customer","description":null,"native":[],"plural":"Customer","is_view":false,"primary_key":["id"],"name_field":null,"field":[`,
				`{"alias":null,"name":"id","label":"Id","description":null,"native":[],"type":"id",`,
				`"name":"email","label":"Email","description":null,"native":[],"type":"string"`,
				`"length":128,"precision":null,"scale":null,"default":null,"required":false,"allow_null":true,"fixed_length":false,"supports_multibyte":false,"auto_increment":false,"is_primary_key":false,"is_unique":true`,
				`"name":"balance"`, `"precision":10,"scale":2`,
				`"name":"active"`, `"default":true,"required":false,"allow_null":false`,
				`"picklist":null,"validation":null,"db_function":null,"is_virtual":false,"is_aggregate":false}`,
				`"related":[{"alias":null,"name":"orders_by_customer_id","label":"Orders By Customer Id","description":null,"native":[],"type":"has_many","field":"id","is_virtual":false,"ref_service_id":`,
				`"constraints":{`}},
			{name: "table fields", method: "GET", path: "_schema/customer?fields=name,primary_key,is_view", status: 200, want: `{"name":"customer","primary_key":["id"],"is_view":false}`},
			{name: "table any case", method: "GET", path: "_schema/CUSTOMER?fields=name", status: 200, want: `{"name":"customer"}`},
			{name: "field list", method: "GET", path: "_schema/nokey/_field?fields=name,type,length,required", status: 200,
				want: `{"resource":[{"name":"a","type":"integer","length":null,"required":false},{"name":"b","type":"string","length":10,"required":false}]}`},
			{name: "field", method: "GET", path: "_schema/orders/_field/customer_id?fields=name,type,is_foreign_key,ref_table,ref_field", status: 200,
				want: `{"name":"customer_id","type":"reference","is_foreign_key":true,"ref_table":"customer","ref_field":"id"}`},
			{name: "field older path", method: "GET", path: "_schema/orders/total?fields=name,type,default,precision,scale", status: 200,
				want: `{"name":"total","type":"decimal","default":0.00,"precision":10,"scale":2}`},
			{name: "relations", method: "GET", path: "_schema/tag/_related?fields=name,type,field,ref_table,ref_field,junction_table,junction_field,junction_ref_field", status: 200,
				want: `{"resource":[{"name":"order_tag_by_tag_id","type":"has_many","field":"id","ref_table":"order_tag","ref_field":"tag_id","junction_table":null,"junction_field":null,"junction_ref_field":null},` +
					`{"name":"orders_by_order_tag","type":"many_many","field":"id","ref_table":"orders","ref_field":"id","junction_table":"order_tag","junction_field":"tag_id","junction_ref_field":"order_id"}]}`},
			{name: "relation", method: "GET", path: "_schema/orders/_related/customer_by_customer_id?fields=name,type,field,ref_table,ref_field", status: 200,
				want: `{"name":"customer_by_customer_id","type":"belongs_to","field":"customer_id","ref_table":"customer","ref_field":"id"}`},
			{name: "refresh", method: "GET", path: "_schema/tag?refresh=true&fields=name", status: 200, want: `{"name":"tag"}`},
			{name: "unknown table", method: "GET", path: "_schema/nosuch", status: 404, contains: []string{`Table \"nosuch\" does not exist in the database.`}},
			{name: "unknown field", method: "GET", path: "_schema/tag/_field/nosuch", status: 404, contains: []string{"Field 'nosuch' not found in table 'tag'."}},
			{name: "unknown relation", method: "GET", path: "_schema/tag/_related/nosuch", status: 404, contains: []string{"Relation 'nosuch' not found in table 'tag'."}},
			{name: "too deep", method: "GET", path: "_schema/tag/_field/label/x", status: 404},
			{name: "unknown below a table", method: "GET", path: "_schema/tag/x/y", status: 404},
		} {
			status, body := e.do(t, s.method, q(s.path), nil)
			checkStep(t, s, status, body)
		}
	})
}

// TestSchemaRoundTrip sends every table object read with GET back with
// PATCH and PUT: nothing changes.
func TestSchemaRoundTrip(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for _, table := range []string{"customer", "nokey", "order_tag", "orders", "tag"} {
			before := e.mustDo(t, 200, "GET", "_schema/"+table, nil)
			var o any
			if err := json.Unmarshal([]byte(before), &o); err != nil {
				t.Fatal(err)
			}
			for _, method := range []string{"PATCH", "PUT"} {
				checkStep(t, step{name: method + " " + table, status: 200, want: `{"name":"` + table + `"}`}, 200, e.mustDo(t, 200, method, "_schema/"+table, o))
				if after := e.mustDo(t, 200, "GET", "_schema/"+table, nil); after != before {
					t.Errorf("%s %s changed it:\n%s\n%s", method, table, before, after)
				}
			}
		}
		e.mustDo(t, 200, "PUT", "_schema", e.getJSON(t, "_schema?fields=*"))
		e.mustDo(t, 200, "GET", "_table/order_tag?ids='1,2'", nil)
	})
}

// TestSchemaFields adds, alters and drops single fields, and checks the
// requests the schema API refuses.
func TestSchemaFields(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		steps := []step{
			{name: "add", method: "POST", path: "_schema/tag/_field", body: list(obj("name", "color", "type", "string", "length", 16, "default", "red")),
				status: 200, want: `{"resource":[{"name":"color"}]}`},
			{name: "default filled", method: "GET", path: "_table/tag/1", status: 200, want: `{"id":1,"label":"red","color":"red"}`},
			{name: "add twice", method: "POST", path: "_schema/tag/_field", body: list(obj("name", "Color", "type", "string")),
				status: 400, contains: []string{"Field 'color' already exists in table 'tag'."}},
			{name: "add or alter", method: "PUT", path: "_schema/tag/_field?fields=name,type,length", body: obj("resource", list(obj("name", "color", "length", 20), obj("name", "weight", "type", "integer"))),
				status: 200, want: `{"resource":[{"name":"color","type":"string","length":20},{"name":"weight","type":"integer","length":null}]}`},
			{name: "alter missing", method: "PATCH", path: "_schema/tag/_field", body: list(obj("name", "nosuch", "type", "integer")),
				status: 404, contains: []string{"Field 'nosuch' not found in table 'tag'."}},
			{name: "remove default", method: "PATCH", path: "_schema/tag/_field/color", body: obj("default", nil), status: 200, want: `{"name":"color"}`},
			{name: "default removed", method: "GET", path: "_schema/tag/_field/color?fields=default,length", status: 200, want: `{"default":null,"length":20}`},
			{name: "alter one", method: "PUT", path: "_schema/tag/_field/weight?fields=name,type", body: obj("type", "bigint"), status: 200, want: `{"name":"weight","type":"bigint"}`},
			{name: "rename refused", method: "PATCH", path: "_schema/tag/_field/weight", body: obj("name", "mass"), status: 400, contains: []string{"fields cannot be renamed"}},
			{name: "create one", method: "POST", path: "_schema/tag/_field/size", body: obj("db_type", "varchar(40)"), status: 200, want: `{"name":"size"}`},
			{name: "simple type from db_type", method: "GET", path: "_schema/tag/size?fields=type,length", status: 200, want: `{"type":"string","length":40}`},
			{name: "drop several", method: "DELETE", path: "_schema/tag/_field?ids=weight,SIZE", status: 200, want: `{"resource":[{"name":"weight"},{"name":"size"}]}`},
			{name: "drop one", method: "DELETE", path: "_schema/tag/_field/color", status: 200, want: `{"success":true}`},
			{name: "tag as it was", method: "GET", path: "_table/tag/1", status: 200, want: `{"id":1,"label":"red"}`},
			{name: "drop unknown", method: "DELETE", path: "_schema/tag/_field/nosuch", status: 404},
			{name: "drop without names", method: "DELETE", path: "_schema/tag/_field", status: 400, contains: []string{"No fields named"}},

			{name: "create without body", method: "POST", path: "_schema", status: 400, contains: []string{"No data in schema create request."}},
			{name: "create without fields", method: "POST", path: "_schema", body: list(obj("name", "empty")), status: 400,
				contains: []string{"No valid fields exist in the received table schema."}},
			{name: "create without type", method: "POST", path: "_schema", body: list(obj("name", "t1", "field", list(obj("name", "a")))), status: 400,
				contains: []string{`field \"a\": type is required`}},
			{name: "create existing", method: "POST", path: "_schema", body: list(obj("name", "Customer", "field", list(obj("name", "id", "type", "id")))), status: 400,
				contains: []string{"A table with name 'customer' already exist in the database."}},
			{name: "create existing by path", method: "POST", path: "_schema/tag", body: obj("field", list(obj("name", "id", "type", "id"))), status: 400,
				contains: []string{"A table with name 'tag' already exist in the database."}},
			{name: "check_exist merges", method: "POST", path: "_schema?check_exist=true", body: list(obj("name", "tag", "field", list(obj("name", "note", "type", "text")))), status: 200,
				want: `{"resource":[{"name":"tag"}]}`},
			{name: "merged", method: "GET", path: "_table/tag/1", status: 200, want: `{"id":1,"label":"red","note":null}`},
			{name: "create by path", method: "POST", path: "_schema/kv?fields=name,primary_key", body: obj("field", list(obj("name", "k", "type", "string", "length", 20, "is_primary_key", true), obj("name", "v", "type", "json"))),
				status: 200, want: `{"name":"kv","primary_key":["k"]}`},
			{name: "json field", method: "POST", path: "_table/kv", body: res(rec("k", "a", "v", obj("x", 1))), status: 200, want: `{"resource":[{"k":"a"}]}`},
			{name: "json read", method: "GET", path: "_table/kv/a", status: 200, want: `{"k":"a","v":{"x":1}}`},
			{name: "rename table refused", method: "PUT", path: "_schema/kv", body: obj("name", "other", "field", list(obj("name", "k"))), status: 400, contains: []string{"tables cannot be renamed"}},
			{name: "replace without fields", method: "PUT", path: "_schema/kv", body: obj("label", "KV"), status: 400, contains: []string{"needs its field list"}},
			{name: "update unknown table", method: "PATCH", path: "_schema/nosuch", body: obj("field", list(obj("name", "a", "type", "integer"))), status: 404},
			{name: "patch creates nothing", method: "PATCH", path: "_schema", body: list(obj("name", "nosuch", "field", list(obj("name", "a", "type", "integer")))), status: 404},
			{name: "put creates", method: "PUT", path: "_schema", body: list(obj("name", "made", "field", list(obj("name", "id", "type", "id")))), status: 200,
				want: `{"resource":[{"name":"made"}]}`},
			{name: "invalid names", method: "POST", path: "_schema", body: list(obj("name", "a.b", "field", list(obj("name", "x", "type", "integer")))), status: 400,
				contains: []string{"contains '.', '/' or"}},
			{name: "virtual relation refused", method: "POST", path: "_schema/tag/_related", body: list(obj("name", "v", "is_virtual", true)), status: 400, contains: []string{"virtual relations"}},
			{name: "has_many refused", method: "POST", path: "_schema/tag/_related", body: list(obj("type", "has_many", "field", "id", "ref_table", "orders", "ref_field", "id")), status: 400,
				contains: []string{"only belongs_to"}},
			{name: "relation update refused", method: "PATCH", path: "_schema/tag/_related", body: list(obj("name", "x")), status: 400, contains: []string{"relations follow from foreign keys"}},
			{name: "drop tables without names", method: "DELETE", path: "_schema", status: 400},
			{name: "drop tables by body", method: "DELETE", path: "_schema", body: list("made", obj("name", "kv")), status: 200, want: `{"resource":[{"name":"made"},{"name":"kv"}]}`},
		}
		for _, s := range steps {
			status, body := e.do(t, s.method, q(s.path), s.body)
			checkStep(t, s, status, body)
		}
	})
}

// TestSchemaSecondInstance changes a table through one instance and reads
// it through another on the same system database, which sees the change
// within a second (its reload interval is the default).
func TestSchemaSecondInstance(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		b, err := proxy.New(t.Context(), proxy.Config{DataDir: t.TempDir(), Store: e.in.Store, Logger: proxytest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(b)
		defer func() {
			hs.Close()
			b.Close()
		}()
		other := &env{kind: e.kind, db: e.db, in: &proxytest.Instance{Server: hs, Proxy: b, Store: e.in.Store, AdminKey: e.in.AdminKey}}
		other.c = &proxytest.Client{Inst: other.in, APIKey: e.c.APIKey, Session: e.c.Session}

		// The second instance reads (and caches) the table first.
		if got := other.mustDo(t, 200, "GET", "_schema/tag?fields=field", nil); strings.Contains(got, "weight") {
			t.Fatalf("weight before it was added: %s", got)
		}
		other.mustDo(t, 200, "GET", "_table/tag/1", nil)

		sees := func(path, text string, want bool) {
			t.Helper()
			start := time.Now()
			for {
				_, got := other.do(t, "GET", path, nil)
				if strings.Contains(got, text) == want {
					break
				}
				if time.Since(start) > 5*time.Second {
					t.Fatalf("the second instance did not see the change: %s", got)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("the second instance saw the change after %v", took)
			}
		}
		e.mustDo(t, 200, "POST", "_schema/tag/_field", list(obj("name", "weight", "type", "integer", "default", 3)))
		sees("_schema/tag", `"name":"weight"`, true)
		checkStep(t, step{name: "new field in records", status: 200, want: `{"id":1,"label":"red","weight":3}`}, 200, other.mustDo(t, 200, "GET", "_table/tag/1", nil))

		e.mustDo(t, 200, "POST", "_schema", list(obj("name", "fresh", "field", list(obj("name", "id", "type", "id")))))
		sees("_schema", `"fresh"`, true)
		e.mustDo(t, 200, "DELETE", "_schema/tag/_field/weight", nil)
		sees("_table/tag/1", `"weight"`, false)
	})
}

// TestSchemaSeveralTables changes several tables in one request. On
// PostgreSQL and SQLite a failure leaves every table as it was. MySQL
// commits DDL statement by statement: tables it created are dropped again,
// but an existing table changed before the failing one keeps its change,
// and the error says so.
func TestSchemaSeveralTables(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		status, body := e.do(t, "PATCH", "_schema", list(
			obj("name", "tag", "field", list(obj("name", "note", "type", "text"))),
			obj("name", "customer", "field", list(obj("name", "name", "type", "integer"))),
		))
		if status != 400 {
			t.Fatalf("PATCH two tables: %d %s", status, body)
		}
		tag := e.mustDo(t, 200, "GET", "_table/tag/1", nil)
		if cfg.Kind == dialects.MySQL {
			checkStep(t, step{name: "partial", status: 400, contains: []string{"the changes of 'tag' were made before this failure and are kept", `"context":{"changed":["tag"]}`}}, status, body)
			checkStep(t, step{name: "tag changed", status: 200, want: `{"id":1,"label":"red","note":null}`}, 200, tag)
		} else {
			checkStep(t, step{name: "tag unchanged", status: 200, want: `{"id":1,"label":"red"}`}, 200, tag)
		}
		checkStep(t, step{name: "customer unchanged", status: 200, contains: []string{`"name":"Alice"`}}, 200, e.mustDo(t, 200, "GET", "_table/customer/1", nil))

		// A second new table the database refuses (MySQL: a row too large).
		wide := list(obj("name", "id", "type", "id"))
		for i := 0; i < 5; i++ {
			wide = append(wide, obj("name", fmt.Sprintf("s%d", i), "type", "string", "length", 16000))
		}
		status, body = e.do(t, "POST", "_schema", list(obj("name", "first", "field", list(obj("name", "id", "type", "id"))), obj("name", "wide", "field", wide)))
		if cfg.Kind == dialects.MySQL {
			checkStep(t, step{name: "wide refused", status: 400, contains: []string{"Table 'wide'", "The database refused the schema change"}}, status, body)
			e.mustDo(t, 404, "GET", "_schema/first", nil)
		} else {
			checkStep(t, step{name: "wide created", status: 200, want: `{"resource":[{"name":"first"},{"name":"wide"}]}`}, status, body)
		}
	})
}

// TestSchemaDreamFactoryFieldKeys checks the field keys DreamFactory's
// clients send: ref_fields as a synonym of ref_field, size as the length,
// and label, validation and picklist kept and returned.
func TestSchemaDreamFactoryFieldKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		const keys = "?fields=name,label,type,length,validation,picklist,is_foreign_key,ref_table,ref_field"
		steps := []step{
			{name: "create with size, ref_fields and extras", method: "POST", path: "_schema", body: list(obj("name", "shelf", "field", list(
				obj("name", "id", "type", "id"),
				obj("name", "code", "type", "string", "size", 12, "label", "Shelf code", "validation", obj("not_empty", obj("on_fail", "Code required"))),
				obj("name", "colour", "type", "string", "picklist", list("red", "blue")),
				obj("name", "tag_id", "type", "reference", "ref_table", "tag", "ref_fields", "id")))),
				status: 200, want: `{"resource":[{"name":"shelf"}]}`},
			{name: "size is the length, extras returned", method: "GET", path: "_schema/shelf/_field/code" + keys, status: 200,
				want: `{"name":"code","label":"Shelf code","type":"string","length":12,"validation":{"not_empty":{"on_fail":"Code required"}},"picklist":null,"is_foreign_key":false,"ref_table":null,"ref_field":null}`},
			{name: "picklist returned", method: "GET", path: "_schema/shelf/_field/colour?fields=picklist,label", status: 200,
				want: `{"label":"Colour","picklist":["red","blue"]}`},
			{name: "ref_fields made the foreign key", method: "GET", path: "_schema/shelf/_field/tag_id?fields=is_foreign_key,ref_table,ref_field", status: 200,
				want: `{"is_foreign_key":true,"ref_table":"tag","ref_field":"id"}`},
			{name: "extras in the table object", method: "GET", path: "_schema/shelf", status: 200,
				contains: []string{`"label":"Shelf code"`, `"validation":{"not_empty":{"on_fail":"Code required"}}`}},
			{name: "a label alone changes only the label", method: "PATCH", path: "_schema/shelf/_field/code", body: obj("label", "Code"), status: 200, want: `{"name":"code"}`},
			{name: "validation kept", method: "GET", path: "_schema/shelf/_field/code?fields=label,length,validation", status: 200,
				want: `{"label":"Code","length":12,"validation":{"not_empty":{"on_fail":"Code required"}}}`},
			{name: "size on alter", method: "PATCH", path: "_schema/shelf/_field/code", body: obj("size", 30, "validation", nil), status: 200, want: `{"name":"code"}`},
			{name: "null cleared the validation", method: "GET", path: "_schema/shelf/_field/code?fields=label,length,validation", status: 200,
				want: `{"label":"Code","length":30,"validation":null}`},
			{name: "added field with ref_fields", method: "POST", path: "_schema/shelf/_field", body: list(obj("name", "other_tag", "type", "integer", "ref_table", "tag", "ref_fields", "id", "label", "Other")),
				status: 200, want: `{"resource":[{"name":"other_tag"}]}`},
			{name: "added field's key and label", method: "GET", path: "_schema/shelf/_field/other_tag?fields=label,is_foreign_key,ref_table", status: 200,
				want: `{"label":"Other","is_foreign_key":true,"ref_table":"tag"}`},
			{name: "plain column", method: "POST", path: "_schema/shelf/_field", body: list(obj("name", "tag2", "type", "integer")), status: 200},
			{name: "relation by ref_fields", method: "POST", path: "_schema/shelf/_related", body: list(obj("type", "belongs_to", "field", "tag2", "ref_table", "tag", "ref_fields", "id")),
				status: 200},
			{name: "relation made", method: "GET", path: "_schema/shelf/_field/tag2?fields=is_foreign_key,ref_table,ref_field", status: 200,
				want: `{"is_foreign_key":true,"ref_table":"tag","ref_field":"id"}`},
			{name: "dropped field forgets its extras", method: "DELETE", path: "_schema/shelf/_field/code", status: 200, want: `{"success":true}`},
			{name: "re-added field starts fresh", method: "POST", path: "_schema/shelf/_field", body: list(obj("name", "code", "type", "string")), status: 200},
			{name: "no old label", method: "GET", path: "_schema/shelf/_field/code?fields=label,validation", status: 200, want: `{"label":"Code","validation":null}`},
			{name: "drop table", method: "DELETE", path: "_schema/shelf", status: 200, want: `{"success":true}`},
			{name: "re-created table starts fresh", method: "POST", path: "_schema", body: list(obj("name", "shelf", "field", list(obj("name", "id", "type", "id"), obj("name", "colour", "type", "string")))), status: 200},
			{name: "no old picklist", method: "GET", path: "_schema/shelf/_field/colour?fields=picklist", status: 200, want: `{"picklist":null}`},
		}
		for _, s := range steps {
			status, body := e.do(t, s.method, q(s.path), s.body)
			checkStep(t, s, status, body)
		}
	})
}
