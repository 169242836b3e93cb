package sqldb_test

import (
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// FuzzSchemaField adds arbitrary field objects to a SQLite table: every
// answer is 200, 400, 404 or 409 (never a server error), and the table's
// rows survive whatever is added and taken away again.
func FuzzSchemaField(f *testing.F) {
	for _, s := range [][4]string{
		{"color", "string", "64", "red"},
		{`a"b`, "integer", "", "1"},
		{"x", "decimal", "70", "1e5"},
		{"y", "reference", "", ""},
		{"z", "timestamp", "", "now()"},
		{"w", "boolean", "", "maybe"},
		{"`; DROP TABLE customer; --", "text", "", "'); DROP TABLE tag; --"},
		{"id", "id", "", ""},
		{"n", "string", "-1", ""},
		{"j", "json", "", "{not json"},
		{"t", "time", "", "25:00:00"},
		{"", "integer", "", ""},
		{"label", "integer", "", ""},
		{"p", "pk", "", ""},
		{"q", "db_type", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	d := newDirect(f, dbtest.Fresh(f, dialects.SQLite))
	f.Fuzz(func(t *testing.T, name, typ, length, def string) {
		field := map[string]any{"name": name, "type": typ, "default": def}
		if typ == "db_type" {
			field = map[string]any{"name": name, "db_type": def}
		}
		if length != "" {
			field["length"] = length
		}
		status, body := d.call(t, nil, "POST", "_schema/tag/_field", []any{field})
		switch status {
		case 200, 400, 404, 409:
		default:
			t.Fatalf("status %d for %v: %s", status, field, body)
		}
		if status == 200 {
			status, body = d.call(t, nil, "PUT", "_schema/tag", map[string]any{"field": []any{map[string]any{"name": "id"}, map[string]any{"name": "label"}}})
			if status != 200 {
				t.Fatalf("restore after %v: %d %s", field, status, body)
			}
		}
		status, body = d.call(t, nil, "GET", "_table/tag", nil)
		if status != 200 || !strings.Contains(body, `{"id":1,"label":"red"},{"id":2,"label":"green"},{"id":3,"label":"blue"}`) {
			t.Fatalf("tag after %v: %d %s", field, status, body)
		}
	})
}
