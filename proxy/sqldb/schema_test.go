package sqldb_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
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
		checkStep(t, step{name: "drop tables", status: 200, want: `{"resource":[{"name":"review"},{"name":"book"},{"name":"author"}]}`}, 200,
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
