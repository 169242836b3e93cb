package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Per-table input schemas.
//
// The record arguments of create_records, update_records and
// delete_records, and the fields and order arguments of query_records,
// are described per table with a conditional at the root of the input
// schema: "if" the table argument is the first table "then" its record
// schema applies, "else" one if/then per further table ("allOf" below
// "else"). A conditional rather than a root oneOf/anyOf/allOf, which some
// model APIs refuse in a tool's input schema, and rather than a tool per
// table, which would multiply the tools by the tables. Record schemas come
// from the database service's own OpenAPI document (types, formats,
// nullability, lengths, defaults, read-only columns), reduced to what the
// caller's role may write: columns its grant does not allow are absent,
// read-only columns (auto-increment, computed) are absent from writes,
// required are the NOT NULL columns without a default for a create and
// the primary key for an update.

// docCacheTTL bounds how long the record schemas read from a service's
// document are reused when its schema epoch does not move (changes made
// outside Portcullis are seen after this).
const docCacheTTL = 30 * time.Second

// recordDoc is a table's record schema from its service's document.
type recordDoc struct {
	schema *openapi3.Schema
	view   bool
}

// docEntry is the cached record schemas of one service.
type docEntry struct {
	backend service.Backend
	epoch   string
	expires time.Time
	records map[string]recordDoc // by table name; nil when not documented
}

// recordDocs returns the record schemas of the tables of a database
// service, read from its OpenAPI document (nil when the backend does not
// document itself or the document cannot be built). They are cached per
// backend and schema epoch, for at most docCacheTTL.
func (t *tools) recordDocs(ctx context.Context, name string, tables []tableInfo) map[string]recordDoc {
	snap := t.reg.Snapshot()
	if snap == nil {
		return nil
	}
	svc := snap.Service(name)
	b, ok := t.reg.Backend(name)
	if svc == nil || !ok {
		return nil
	}
	epoch := snap.SchemaEpoch(svc.ID)
	now := t.now()
	t.mu.Lock()
	e, hit := t.docs[name]
	t.mu.Unlock()
	if hit && e.backend == b && e.epoch == epoch && now.Before(e.expires) {
		return e.records
	}
	var records map[string]recordDoc
	if d, ok := b.(service.Documenter); ok {
		if doc, err := d.OpenAPI(ctx); err == nil && doc != nil {
			records = map[string]recordDoc{}
			for _, tb := range tables {
				if rd, ok := tableRecord(doc, tb.name); ok {
					records[tb.name] = rd
				}
			}
		} else if err != nil {
			t.log.Warn("mcp: record schemas left out of the tool schemas", "service", name, "error", err)
		}
	}
	t.mu.Lock()
	t.docs[name] = docEntry{backend: b, epoch: epoch, expires: now.Add(docCacheTTL), records: records}
	t.mu.Unlock()
	return records
}

// tableRecord finds the record schema of table in a database document:
// the items of the resource list its GET /_table/{table} answers.
func tableRecord(doc *openapi3.T, table string) (recordDoc, bool) {
	if doc.Paths == nil {
		return recordDoc{}, false
	}
	pi := doc.Paths.Value("/_table/" + url.PathEscape(table))
	if pi == nil || pi.Get == nil || pi.Get.Responses == nil {
		return recordDoc{}, false
	}
	resp := pi.Get.Responses.Status(http.StatusOK)
	if resp == nil || resp.Value == nil {
		return recordDoc{}, false
	}
	mt := resp.Value.Content.Get("application/json")
	if mt == nil {
		return recordDoc{}, false
	}
	page := deref(doc, mt.Schema)
	if page == nil {
		return recordDoc{}, false
	}
	list := deref(doc, page.Properties["resource"])
	if list == nil {
		return recordDoc{}, false
	}
	rec := deref(doc, list.Items)
	if rec == nil {
		return recordDoc{}, false
	}
	return recordDoc{schema: rec, view: pi.Post == nil}, true
}

// deref resolves a local component reference.
func deref(doc *openapi3.T, r *openapi3.SchemaRef) *openapi3.Schema {
	for i := 0; r != nil && i < 8; i++ {
		if r.Value != nil {
			return r.Value
		}
		name, ok := strings.CutPrefix(r.Ref, "#/components/schemas/")
		if !ok || doc.Components == nil {
			return nil
		}
		r = doc.Components.Schemas[name]
	}
	return nil
}

// jsonSchema converts a column's OpenAPI 3.0 schema to JSON Schema
// (draft 2020-12): nullable becomes a "null" type, formats JSON Schema
// does not define are left out, base64 is contentEncoding.
func jsonSchema(s *openapi3.Schema) map[string]any {
	m := map[string]any{}
	var types []string
	if s.Type != nil {
		types = append(types, s.Type.Slice()...)
	}
	if len(types) > 0 && s.Nullable {
		types = append(types, "null")
	}
	switch len(types) {
	case 0:
	case 1:
		m["type"] = types[0]
	default:
		m["type"] = types
	}
	switch s.Format {
	case "date", "time", "date-time", "uuid":
		m["format"] = s.Format
	case "byte":
		m["contentEncoding"] = "base64"
	}
	if s.MaxLength != nil {
		m["maxLength"] = *s.MaxLength
	}
	if s.Default != nil {
		m["default"] = s.Default
	}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Items != nil && s.Items.Value != nil {
		m["items"] = jsonSchema(s.Items.Value)
	}
	return m
}

// grantFor returns whether the caller may call verb on a table, and the
// grant that applies (nil: every field).
func (t *tools) grantFor(ctx context.Context, svc, table, verb string) (*caller.Grant, bool) {
	if t.access == nil {
		return nil, true
	}
	g, err := t.access.Grant(ctx, svc, "_table/"+table, verb)
	return g, err == nil
}

// branch is what one table's conditional applies to a tool's arguments.
type branch struct {
	svc, table string
	then       map[string]any
}

// columnNames are the names of a table's columns the grant lets the
// caller see, as the schema API spells them.
func columnNames(tb tableInfo, g *caller.Grant) []string {
	var out []string
	for _, c := range tb.columns {
		if n, _ := c["name"].(string); n != "" && g.AllowsField(n) {
			out = append(out, n)
		}
	}
	return out
}

// primaryKey is the names of a table's primary key columns.
func primaryKey(tb tableInfo) []string {
	var out []string
	for _, c := range tb.columns {
		if b, _ := c["is_primary_key"].(bool); b {
			if n, _ := c["name"].(string); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// queryBranch describes fields and order for a table the caller may read.
func queryBranch(tb tableInfo, g *caller.Grant) map[string]any {
	cols := columnNames(tb, g)
	if len(cols) == 0 {
		return nil
	}
	return map[string]any{"properties": map[string]any{
		"fields": map[string]any{
			"description": "Fields of " + tb.name + " to return.",
			"items":       map[string]any{"type": "string", "enum": append(cols, "*")},
		},
		"order": map[string]any{
			"description": "Sort by fields of " + tb.name + ": " + strings.Join(cols, ", ") + "; each optionally followed by ASC or DESC.",
		},
	}}
}

// recordProps are the properties a write record may carry: the columns of
// rec that are not read-only and that the grant allows, plus the primary
// key columns in keys (which identify records even when read-only).
func recordProps(rec *openapi3.Schema, g *caller.Grant, keys []string) (map[string]any, []string) {
	props := map[string]any{}
	var names []string
	isKey := func(n string) bool {
		for _, k := range keys {
			if strings.EqualFold(k, n) {
				return true
			}
		}
		return false
	}
	for n, ref := range rec.Properties {
		if ref == nil || ref.Value == nil {
			continue
		}
		key := isKey(n)
		if !key && (ref.Value.ReadOnly || !g.AllowsField(n)) {
			continue
		}
		props[n] = jsonSchema(ref.Value)
		names = append(names, n)
	}
	sort.Strings(names)
	return props, names
}

// recordsBranch is the conditional for the records argument: items of the
// given properties, required names, no other keys.
func recordsBranch(desc string, props map[string]any, required []string) map[string]any {
	item := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		item["required"] = required
	}
	return map[string]any{"properties": map[string]any{"records": map[string]any{"description": desc, "items": item}}}
}

// createBranch is the records schema of create_records for a table: its
// writable columns, the NOT NULL ones without a default required.
func createBranch(tb tableInfo, rd recordDoc, g *caller.Grant) map[string]any {
	props, names := recordProps(rd.schema, g, nil)
	var required []string
	for _, r := range rd.schema.Required {
		if _, ok := props[r]; ok {
			required = append(required, r)
		}
	}
	return recordsBranch(fmt.Sprintf("Records of %s to create; fields: %s.", tb.name, strings.Join(names, ", ")), props, required)
}

// updateBranch is the records schema of update_records for a table: the
// primary key and the writable columns; the key is required unless ids or
// filter name the records.
func updateBranch(tb tableInfo, rd recordDoc, g *caller.Grant) map[string]any {
	pk := lowerAll(primaryKey(tb))
	props, names := recordProps(rd.schema, g, pk)
	b := recordsBranch(fmt.Sprintf("Records of %s: each with its primary key (%s) and the fields to change (%s); with ids or filter, one record of values to set.",
		tb.name, strings.Join(pk, ", "), strings.Join(names, ", ")), props, nil)
	if len(pk) > 0 {
		b["if"] = map[string]any{"not": map[string]any{"anyOf": []any{
			map[string]any{"required": []string{"ids"}}, map[string]any{"required": []string{"filter"}}}}}
		b["then"] = map[string]any{"properties": map[string]any{"records": map[string]any{"items": map[string]any{"required": pk}}}}
	}
	return b
}

// deleteBranch is the records schema of delete_records for a table: its
// primary key.
func deleteBranch(tb tableInfo, rd recordDoc) map[string]any {
	pk := lowerAll(primaryKey(tb))
	if len(pk) == 0 {
		return nil
	}
	props := map[string]any{}
	for _, k := range pk {
		if ref := rd.schema.Properties[k]; ref != nil && ref.Value != nil {
			props[k] = jsonSchema(ref.Value)
		} else {
			props[k] = map[string]any{}
		}
	}
	return recordsBranch("Records of "+tb.name+" carrying the primary key ("+strings.Join(pk, ", ")+") of each record to delete.", props, pk)
}

func lowerAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(s)
	}
	return out
}

// withBranches adds the per-table conditionals to a tool's input schema:
// the first table's at the root (if/then), the others as if/then
// subschemas of an allOf under else, so the nesting stays shallow
// however many tables there are. multi says whether the service argument
// takes part in the condition.
func withBranches(s map[string]any, branches []branch, multi bool) map[string]any {
	var conds []map[string]any
	for _, b := range branches {
		if b.then == nil {
			continue
		}
		props := map[string]any{"table": map[string]any{"const": b.table}}
		required := []string{"table"}
		if multi {
			props["service"] = map[string]any{"const": b.svc}
			required = []string{"service", "table"}
		}
		conds = append(conds, map[string]any{"if": map[string]any{"properties": props, "required": required}, "then": b.then})
	}
	if len(conds) == 0 {
		return s
	}
	s["if"], s["then"] = conds[0]["if"], conds[0]["then"]
	if rest := conds[1:]; len(rest) > 0 {
		all := make([]any, len(rest))
		for i, c := range rest {
			all[i] = c
		}
		s["else"] = map[string]any{"allOf": all}
	}
	return s
}
