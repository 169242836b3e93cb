package sqldb

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.Documenter = (*Backend)(nil)

// OpenAPI documents the service from its introspected schema: the table
// list, every table's record and by-id paths with a schema per table
// (types, formats, nullability, lengths, required fields, defaults), and
// the _schema, _proc and _func paths. A database that cannot be reached
// fails it with the request's 503.
func (b *Backend) OpenAPI(ctx context.Context) (*openapi3.T, error) {
	db, err := b.pool(ctx)
	if err != nil {
		return nil, err
	}
	s, err := b.loadSchema(ctx, db, anyAge)
	if err != nil {
		return nil, err
	}
	var routines []*dialects.Routine
	if rr, ok := b.routineReader(); ok {
		// A database whose routines cannot be listed (privileges) is still
		// documented, with the generic routine paths only.
		if list, err := b.loadRoutines(ctx, db, rr, routineMaxAge); err == nil {
			routines = list
		} else {
			b.log.Warn("routines left out of the API document", "error", err)
		}
	}
	return documentSchema(b.kind, b.cfg.MaxRecords, s, routines), nil
}

// documentSchema builds the document of a database with schema s and the
// stored routines listed.
func documentSchema(kind dialects.Kind, maxRecords int, s *dialects.Schema, routines []*dialects.Routine) *openapi3.T {
	if maxRecords <= 0 {
		maxRecords = DefaultMaxRecords
	}
	doc := service.NewDocument(fmt.Sprintf("A %s database: its tables' records (_table), its schema (_schema) and its stored procedures (_proc) and functions (_func).", engineName(kind)))
	d := &dbDoc{doc: doc, kind: kind, max: maxRecords, names: map[string]string{}, used: map[string]bool{}}
	d.commonComponents()
	d.root()
	d.tableList()
	for _, t := range s.Tables {
		d.table(t)
	}
	d.schemaPaths()
	d.routinePaths(routines)
	return doc
}

func engineName(k dialects.Kind) string {
	switch k {
	case dialects.Postgres:
		return "PostgreSQL"
	case dialects.MySQL:
		return "MySQL/MariaDB"
	}
	return "SQLite"
}

// dbDoc is a document being built.
type dbDoc struct {
	doc  *openapi3.T
	kind dialects.Kind
	max  int
	// names maps each table to its component name; used holds the names
	// taken.
	names map[string]string
	used  map[string]bool
}

// Component names of the database document.
const (
	compTableList  = "TableList"
	compKeys       = "RecordKeys"
	compTableDef   = "TableSchema"
	compFieldDef   = "FieldSchema"
	compRelDef     = "RelationSchema"
	compTableDefs  = "TableSchemas"
	compFieldDefs  = "FieldSchemas"
	compParamList  = "ProcedureParams"
	compCallResult = "CallResult"
)

// Shared query parameters (components/parameters).
var tableParams = []struct{ name, desc string }{
	{"fields", "Comma-separated fields to return, or * for all (alias select)."},
	{"filter", "Condition on the records in the filter language, e.g. (age > 30) and (name like 'A%') (alias where)."},
	{"limit", "Records per page (alias top); at most the service's max_records."},
	{"offset", "Records to skip (alias skip)."},
	{"order", "Sort order: field [asc|desc], … (aliases sort, order_by)."},
	{"group", "Fields to group by (alias group_by)."},
	{"having", "Condition on the groups."},
	{"related", "Comma-separated relations to include, or * for all; per relation {relation}.fields, {relation}.order and {relation}.limit."},
	{"ids", "Comma-separated record keys; composite keys as quoted comma-separated values ('1,2','1,3')."},
	{"id_field", "Field (or comma-separated fields) to use as the key instead of the primary key."},
	{"id_type", "Type of the id_field values."},
	{"include_count", "Add meta.count, the number of records matching the filter."},
	{"count_only", "Answer only {meta:{count}}."},
	{"continue", "In a batch, go on past a failed record."},
	{"rollback", "In a batch, undo every record when one fails."},
	{"force", "Allow a DELETE without ids, filter or records, deleting every record."},
	{"as_list", "Answer names as a plain list."},
}

var boolParams = map[string]bool{"include_count": true, "count_only": true, "continue": true,
	"rollback": true, "force": true, "as_list": true}

func paramRef(name string) *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Ref: "#/components/parameters/" + name}
}

func (d *dbDoc) commonComponents() {
	c := d.doc.Components
	c.Parameters = openapi3.ParametersMap{}
	for _, p := range tableParams {
		var sch *openapi3.Schema
		switch {
		case boolParams[p.name]:
			sch = openapi3.NewBoolSchema()
		case p.name == "limit":
			sch = openapi3.NewIntegerSchema().WithMin(1).WithMax(float64(d.max))
		case p.name == "offset":
			sch = openapi3.NewIntegerSchema().WithMin(0)
		default:
			sch = openapi3.NewStringSchema()
		}
		c.Parameters[p.name] = service.QueryParam(p.name, p.desc, sch)
	}

	tl := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(
		openapi3.NewObjectSchema().
			WithProperty("name", openapi3.NewStringSchema()).
			WithProperty("label", openapi3.NewStringSchema()).
			WithProperty("plural", openapi3.NewStringSchema()).
			WithProperty("is_view", openapi3.NewBoolSchema()).
			WithProperty("description", openapi3.NewStringSchema())))
	tl.Description = "The tables and views: names, or objects with fields=*."
	c.Schemas[compTableList] = openapi3.NewSchemaRef("", tl)

	keys := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(
		openapi3.NewObjectSchema().WithAnyAdditionalProperties()))
	keys.Description = "The key of each record written or deleted ({\"resource\":[{\"id\":5}]}), or whole records when fields or related ask for them."
	c.Schemas[compKeys] = openapi3.NewSchemaRef("", keys)

	field := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("label", openapi3.NewStringSchema()).
		WithProperty("description", openapi3.NewStringSchema()).
		WithProperty("type", service.Describe(openapi3.NewStringSchema(), "Simple type: id, string, integer, boolean, decimal, datetime, reference, …")).
		WithProperty("db_type", service.Describe(openapi3.NewStringSchema(), "Native type, e.g. varchar(64).")).
		WithProperty("length", openapi3.NewIntegerSchema()).
		WithProperty("precision", openapi3.NewIntegerSchema()).
		WithProperty("scale", openapi3.NewIntegerSchema()).
		WithProperty("default", &openapi3.Schema{Nullable: true}).
		WithProperty("required", openapi3.NewBoolSchema()).
		WithProperty("allow_null", openapi3.NewBoolSchema()).
		WithProperty("auto_increment", openapi3.NewBoolSchema()).
		WithProperty("is_primary_key", openapi3.NewBoolSchema()).
		WithProperty("is_unique", openapi3.NewBoolSchema()).
		WithProperty("is_index", openapi3.NewBoolSchema()).
		WithProperty("is_foreign_key", openapi3.NewBoolSchema()).
		WithProperty("ref_table", openapi3.NewStringSchema().WithNullable()).
		WithProperty("ref_field", openapi3.NewStringSchema().WithNullable())
	field.Required = []string{"name"}
	field.Description = "A field (column) definition."
	c.Schemas[compFieldDef] = openapi3.NewSchemaRef("", field)

	rel := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("type", openapi3.NewStringSchema().WithEnum("belongs_to", "has_one", "has_many", "many_many")).
		WithProperty("field", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithProperty("ref_table", openapi3.NewStringSchema()).
		WithProperty("ref_field", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithProperty("junction_table", openapi3.NewStringSchema().WithNullable())
	rel.Description = "A relation derived from a foreign key."
	c.Schemas[compRelDef] = openapi3.NewSchemaRef("", rel)

	table := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("label", openapi3.NewStringSchema()).
		WithProperty("plural", openapi3.NewStringSchema()).
		WithProperty("description", openapi3.NewStringSchema()).
		WithProperty("is_view", openapi3.NewBoolSchema()).
		WithProperty("primary_key", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))
	table.Properties["field"] = &openapi3.SchemaRef{Value: openapi3.NewArraySchema()}
	table.Properties["field"].Value.Items = service.SchemaRef(compFieldDef)
	table.Properties["related"] = &openapi3.SchemaRef{Value: openapi3.NewArraySchema()}
	table.Properties["related"].Value.Items = service.SchemaRef(compRelDef)
	table.Required = []string{"name"}
	table.Description = "A table definition: name, fields, keys and relations."
	c.Schemas[compTableDef] = openapi3.NewSchemaRef("", table)

	c.Schemas[compTableDefs] = openapi3.NewSchemaRef("", wrapped(service.SchemaRef(compTableDef), "Table definitions, {\"resource\":[…]}."))
	c.Schemas[compFieldDefs] = openapi3.NewSchemaRef("", wrapped(service.SchemaRef(compFieldDef), "Field definitions, {\"resource\":[…]}."))

	pl := openapi3.NewObjectSchema().
		WithProperty("params", openapi3.NewArraySchema().WithItems(openapi3.NewObjectSchema().
			WithProperty("name", openapi3.NewStringSchema()).
			WithProperty("value", &openapi3.Schema{Nullable: true}))).
		WithProperty("wrapper", service.Describe(openapi3.NewStringSchema(), "Name of the member that wraps the result rows.")).
		WithProperty("returns", service.Describe(openapi3.NewStringSchema(), "Simple type to cast a scalar result to."))
	pl.Description = "Parameters of a call: {\"params\":[{\"name\":…,\"value\":…}]}; a plain object of name: value is accepted too."
	c.Schemas[compParamList] = openapi3.NewSchemaRef("", pl)

	res := &openapi3.Schema{Description: "The routine's result: rows ({\"resource\":[…]} or the wrapper), a scalar value, or an object of OUT and INOUT parameters."}
	c.Schemas[compCallResult] = openapi3.NewSchemaRef("", res)
}

// wrapped is {"resource":[items]}.
func wrapped(items *openapi3.SchemaRef, description string) *openapi3.Schema {
	arr := openapi3.NewArraySchema()
	arr.Items = items
	s := openapi3.NewObjectSchema().WithProperty("resource", arr)
	s.Required = []string{"resource"}
	s.Description = description
	return s
}

func (d *dbDoc) root() {
	op := service.NewOperation("getResources", "", "List the service's resources", "Answers {\"resource\":[{\"name\":\"_table\"}, …]}.")
	service.AddResponse(op, http.StatusOK, "The resources.", service.SchemaRef(service.SchemaResourceList))
	service.AddErrors(op, service.CommonErrors...)
	service.AddOperation(d.doc, "/", http.MethodGet, op)
}

func (d *dbDoc) tableList() {
	op := service.NewOperation("getTables", "_table", "List the tables",
		"The tables and views the records API serves. fields=* (or a list of name, label, plural, is_view, description) answers objects instead of names.")
	op.Parameters = openapi3.Parameters{paramRef("fields"), paramRef("as_list")}
	service.AddResponse(op, http.StatusOK, "The tables.", service.SchemaRef(compTableList))
	service.AddErrors(op, append(service.CommonErrors, http.StatusServiceUnavailable)...)
	service.AddOperation(d.doc, "/_table", http.MethodGet, op)
}

// componentName is a valid, unique component name for table t: characters
// outside [A-Za-z0-9_-] become "_" (so "." can join suffixes), and a name
// already taken gets a number.
var invalidComp = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func (d *dbDoc) componentName(t string) string {
	if n, ok := d.names[t]; ok {
		return n
	}
	base := invalidComp.ReplaceAllString(t, "_")
	if base == "" {
		base = "table"
	}
	n := base
	for i := 2; d.used[n] || isReservedComponent(n); i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	d.used[n] = true
	d.names[t] = n
	return n
}

func isReservedComponent(n string) bool {
	switch n {
	case compTableList, compKeys, compTableDef, compFieldDef, compRelDef, compTableDefs, compFieldDefs, compParamList, compCallResult:
		return true
	}
	return service.SharedComponent(n)
}

// opID is an operation id part for table t: its component name.
func (d *dbDoc) opID(verb, t, suffix string) string {
	return verb + "_" + d.componentName(t) + suffix
}

// table adds the paths and schemas of one table or view.
func (d *dbDoc) table(t *dialects.Table) {
	comp := d.componentName(t.Name)
	rec := d.recordSchema(t)
	d.doc.Components.Schemas[comp] = openapi3.NewSchemaRef("", rec)
	recRef := service.SchemaRef(comp)

	list := openapi3.NewArraySchema()
	list.Items = recRef
	meta := openapi3.NewObjectSchema().
		WithProperty("count", service.Describe(openapi3.NewIntegerSchema(), "Records matching the filter (include_count=true).")).
		WithProperty("next", service.Describe(openapi3.NewIntegerSchema(), "Offset of the next page, when more records remain."))
	page := openapi3.NewObjectSchema().WithProperty("resource", list).WithProperty("meta", meta)
	page.Description = fmt.Sprintf("A page of %s records.", t.Name)
	d.doc.Components.Schemas[comp+".Records"] = openapi3.NewSchemaRef("", page)
	pageRef := service.SchemaRef(comp + ".Records")

	body := wrapped(recRef, fmt.Sprintf("Records of %s: {\"resource\":[…]}; a bare array or a single object is accepted too.", t.Name))
	d.doc.Components.Schemas[comp+".Request"] = openapi3.NewSchemaRef("", body)
	bodyRef := service.SchemaRef(comp + ".Request")

	path := "/_table/" + url.PathEscape(t.Name)
	kind := "table"
	if t.IsView {
		kind = "view"
	}
	desc := t.Comment
	if desc != "" {
		desc += "\n\n"
	}

	get := service.NewOperation(d.opID("get", t.Name, "Records"), t.Name, "Read records of "+t.Name,
		desc+fmt.Sprintf("Records of the %s %s, %d per page at most, in key order unless order says otherwise. Filter with filter or ids; related adds related records.", kind, t.Name, d.max))
	get.Parameters = openapi3.Parameters{paramRef("fields"), paramRef("filter"), paramRef("limit"), paramRef("offset"),
		paramRef("order"), paramRef("group"), paramRef("having"), paramRef("related"), paramRef("ids"),
		paramRef("id_field"), paramRef("id_type"), paramRef("include_count"), paramRef("count_only")}
	service.AddResponse(get, http.StatusOK, "The records.", pageRef)
	service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	service.AddOperation(d.doc, path, http.MethodGet, get)

	if !t.IsView {
		writeParams := openapi3.Parameters{paramRef("fields"), paramRef("related"), paramRef("continue"), paramRef("rollback")}
		post := service.NewOperation(d.opID("create", t.Name, "Records"), t.Name, "Create records in "+t.Name,
			"Creates one or more records. A batch stops at the first failure unless continue=true; rollback=true undoes all on failure. Answers the new records' keys, or the fields asked for.")
		post.Parameters = writeParams
		post.RequestBody = service.JSONBody("The records to create.", true, bodyRef)
		service.AddResponse(post, http.StatusOK, "Keys of the records created.", service.SchemaRef(compKeys))
		service.AddResponse(post, http.StatusCreated, "Keys of the records created.", service.SchemaRef(compKeys))
		service.AddErrors(post, append(service.CommonErrors, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
		service.AddOperation(d.doc, path, http.MethodPost, post)

		byParams := append(openapi3.Parameters{paramRef("ids"), paramRef("filter")}, writeParams...)
		for _, v := range []struct{ verb, id, sum, desc string }{
			{http.MethodPut, "replace", "Replace records of " + t.Name, "Replaces whole records, found by the key in each record or by ids or filter with one record in the body; fields left out get their defaults."},
			{http.MethodPatch, "update", "Update records of " + t.Name, "Changes the fields sent of records found by the key in each record or by ids or filter with one record in the body."},
		} {
			op := service.NewOperation(d.opID(v.id, t.Name, "Records"), t.Name, v.sum, v.desc)
			op.Parameters = byParams
			op.RequestBody = service.JSONBody("The records, or one record for ids or filter.", true, bodyRef)
			service.AddResponse(op, http.StatusOK, "Keys of the records written.", service.SchemaRef(compKeys))
			service.AddErrors(op, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
			service.AddOperation(d.doc, path, v.verb, op)
		}

		del := service.NewOperation(d.opID("delete", t.Name, "Records"), t.Name, "Delete records of "+t.Name,
			"Deletes the records named by ids, filter or the records in the body; all records only with force=true. Answers their keys.")
		del.Parameters = append(openapi3.Parameters{paramRef("ids"), paramRef("filter"), paramRef("force")}, writeParams...)
		del.RequestBody = service.JSONBody("Records whose keys to delete (optional).", false, bodyRef)
		service.AddResponse(del, http.StatusOK, "Keys of the records deleted.", service.SchemaRef(compKeys))
		service.AddErrors(del, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
		service.AddOperation(d.doc, path, http.MethodDelete, del)
	}

	if len(t.PrimaryKey) == 0 {
		return
	}
	idPath := path + "/{id}"
	idDesc := "The record's key"
	if len(t.PrimaryKey) > 1 {
		idDesc += ": the values of " + strings.Join(t.PrimaryKey, ", ") + " in that order, separated by commas"
	} else {
		idDesc += " (" + t.PrimaryKey[0] + ")"
	}
	idParam := service.PathParam("id", idDesc+".", nil)
	getOne := service.NewOperation(d.opID("get", t.Name, "ByID"), t.Name, "Read one record of "+t.Name, "The record with this key, unwrapped.")
	getOne.Parameters = openapi3.Parameters{idParam, paramRef("fields"), paramRef("related"), paramRef("id_field"), paramRef("id_type")}
	service.AddResponse(getOne, http.StatusOK, "The record.", recRef)
	service.AddErrors(getOne, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	service.AddOperation(d.doc, idPath, http.MethodGet, getOne)
	if t.IsView {
		return
	}
	for _, v := range []struct{ verb, id, sum, desc string }{
		{http.MethodPut, "replace", "Replace one record of " + t.Name, "Replaces the whole record; fields left out get their defaults. Answers the record."},
		{http.MethodPatch, "update", "Update one record of " + t.Name, "Changes the fields sent. Answers the record."},
	} {
		op := service.NewOperation(d.opID(v.id, t.Name, "ByID"), t.Name, v.sum, v.desc)
		op.Parameters = openapi3.Parameters{idParam, paramRef("fields"), paramRef("related")}
		op.RequestBody = service.JSONBody("The record's fields.", true, recRef)
		service.AddResponse(op, http.StatusOK, "The record as written.", recRef)
		service.AddErrors(op, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable)...)
		service.AddOperation(d.doc, idPath, v.verb, op)
	}
	delOne := service.NewOperation(d.opID("delete", t.Name, "ByID"), t.Name, "Delete one record of "+t.Name, "Deletes the record and answers it as it was.")
	delOne.Parameters = openapi3.Parameters{idParam, paramRef("fields"), paramRef("related")}
	service.AddResponse(delOne, http.StatusOK, "The record as it was.", recRef)
	service.AddErrors(delOne, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable)...)
	service.AddOperation(d.doc, idPath, http.MethodDelete, delOne)
}

// recordSchema is the schema of a record of t.
func (d *dbDoc) recordSchema(t *dialects.Table) *openapi3.Schema {
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{}
	s.Description = fmt.Sprintf("A record of %s. Field names are lowercase in responses.", t.Name)
	if t.Comment != "" {
		s.Description = t.Comment + "\n\n" + s.Description
	}
	var required []string
	for _, c := range t.Columns {
		s.Properties[strings.ToLower(c.Name)] = openapi3.NewSchemaRef("", d.columnSchema(c))
		if c.Required() && !t.IsView {
			required = append(required, strings.ToLower(c.Name))
		}
	}
	for _, r := range t.Relations {
		name := strings.ToLower(r.Name)
		if _, taken := s.Properties[name]; taken {
			continue
		}
		item := openapi3.NewObjectSchema().WithAnyAdditionalProperties()
		item.Description = "A record of " + r.RefTable + "."
		var rs *openapi3.Schema
		switch r.Type {
		case dialects.BelongsTo, dialects.HasOne:
			rs = item
			rs.Nullable = true
		default:
			rs = openapi3.NewArraySchema().WithItems(item)
		}
		rs.ReadOnly = true
		rs.Description = fmt.Sprintf("Related records of %s (%s), present with related=%s.", r.RefTable, r.Type, name)
		s.Properties[name] = openapi3.NewSchemaRef("", rs)
	}
	s.Required = required
	return s
}

// columnSchema is the schema of one column's values, in the forms the
// table API reads and writes them (dialects/rowjson).
func (d *dbDoc) columnSchema(c *dialects.Column) *openapi3.Schema {
	var s *openapi3.Schema
	var notes []string
	switch t := c.Type; {
	case t == dialects.TypeBoolean:
		s = openapi3.NewBoolSchema()
	case t.IsInteger():
		s = openapi3.NewIntegerSchema()
		switch t {
		case dialects.TypeTinyInt, dialects.TypeSmallInt, dialects.TypeMediumInt:
			s.Format = "int32"
		case dialects.TypeInteger:
			if d.kind == dialects.SQLite {
				s.Format = "int64"
			} else {
				s.Format = "int32"
			}
		default:
			s.Format = "int64"
		}
	case t == dialects.TypeFloat:
		s = openapi3.NewFloat64Schema()
		s.Format = "float"
	case t == dialects.TypeDouble:
		s = openapi3.NewFloat64Schema()
		s.Format = "double"
	case t == dialects.TypeDecimal || t == dialects.TypeMoney:
		s = openapi3.NewFloat64Schema()
		if c.Precision > 0 {
			notes = append(notes, fmt.Sprintf("Exact decimal with %d digits, %d after the point.", c.Precision, c.Scale))
		}
	case t == dialects.TypeDate:
		s = openapi3.NewStringSchema().WithFormat("date")
		notes = append(notes, "As 2006-01-02.")
	case t == dialects.TypeTime || t == dialects.TypeTimeTZ:
		s = openapi3.NewStringSchema().WithFormat("time")
		notes = append(notes, "As 15:04:05 (fractions only when present).")
	case t.IsTemporal():
		s = openapi3.NewStringSchema().WithFormat("date-time")
		notes = append(notes, "Read as 2006-01-02 15:04:05 in UTC (fractions only when present); RFC 3339 with a zone is accepted and converted to UTC.")
	case t == dialects.TypeUUID:
		s = openapi3.NewStringSchema().WithFormat("uuid")
	case t == dialects.TypeBinary:
		s = openapi3.NewStringSchema().WithFormat("byte")
		notes = append(notes, "Base64.")
		if c.Length > 0 {
			notes = append(notes, fmt.Sprintf("At most %d bytes.", c.Length))
		}
	case t == dialects.TypeJSON || t == dialects.TypeJSONB:
		s = &openapi3.Schema{}
		notes = append(notes, "Any JSON value.")
	case t == dialects.TypeArray:
		s = openapi3.NewArraySchema().WithItems(&openapi3.Schema{})
	default:
		s = openapi3.NewStringSchema()
		if c.Length > 0 {
			s = s.WithMaxLength(int64(c.Length))
		}
	}
	s.Nullable = c.AllowNull
	s.ReadOnly = c.AutoIncrement || c.Generated
	if c.Default != nil {
		if c.DefaultIsExpr {
			notes = append(notes, "Default: "+*c.Default+".")
		} else if v, ok := docDefault(c.Type, *c.Default); ok {
			s.Default = v
		}
	}
	switch {
	case c.IsPrimaryKey && c.AutoIncrement:
		notes = append(notes, "Primary key, assigned by the database.")
	case c.IsPrimaryKey:
		notes = append(notes, "Primary key.")
	}
	if c.IsForeignKey && c.RefTable != "" {
		notes = append(notes, fmt.Sprintf("References %s.%s.", c.RefTable, c.RefField))
	}
	if c.IsUnique && !c.IsPrimaryKey {
		notes = append(notes, "Unique.")
	}
	if c.Generated {
		notes = append(notes, "Computed by the database.")
	}
	desc := c.Comment
	if len(notes) > 0 {
		if desc != "" {
			desc += " "
		}
		desc += strings.Join(notes, " ")
	}
	s.Description = desc
	if c.DBType != "" {
		s.Extensions = map[string]any{"x-db-type": c.DBType}
	}
	return s
}

// docDefault converts a literal default to the JSON value of its type;
// ok is false when it does not convert (the default is then not shown).
func docDefault(t dialects.FieldType, v string) (any, bool) {
	switch {
	case t == dialects.TypeBoolean:
		switch strings.ToLower(v) {
		case "true", "1":
			return true, true
		case "false", "0":
			return false, true
		}
		return nil, false
	case t.IsInteger():
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	case t.IsNumeric():
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	case t == dialects.TypeJSON || t == dialects.TypeJSONB || t == dialects.TypeArray || t == dialects.TypeBinary:
		return nil, false
	}
	return v, true
}

// schemaPaths documents _schema.
func (d *dbDoc) schemaPaths() {
	tableParam := service.PathParam("table_name", "The table's name.", nil)
	fieldParam := service.PathParam("field_name", "The field's name.", nil)
	relParam := service.PathParam("relation_name", "The relation's name.", nil)
	refreshParam := service.QueryParam("refresh", "Read the schema from the database again instead of the cache.", openapi3.NewBoolSchema())
	all := append([]int{}, service.CommonErrors...)
	withNotFound := append(append([]int{}, all...), http.StatusNotFound, http.StatusServiceUnavailable)
	all = append(all, http.StatusServiceUnavailable)

	add := func(path, verb, id, summary, desc string, params openapi3.Parameters, body *openapi3.RequestBodyRef, resp *openapi3.SchemaRef, errs []int) {
		op := service.NewOperation(id, "_schema", summary, desc)
		op.Parameters = params
		op.RequestBody = body
		service.AddResponse(op, http.StatusOK, "Success.", resp)
		service.AddErrors(op, errs...)
		service.AddOperation(d.doc, path, verb, op)
	}
	tables := service.SchemaRef(compTableDefs)
	table := service.SchemaRef(compTableDef)
	fields := service.SchemaRef(compFieldDefs)
	field := service.SchemaRef(compFieldDef)

	names := service.SchemaRef(service.SchemaResourceList)
	namesOr := "Answers the names ({\"resource\":[{\"name\":…}]}); fields=* answers the definitions as they now are."
	add("/_schema", http.MethodGet, "getSchema", "List the tables' schemas",
		"The tables and views: names by default, definitions with fields=* (or a list of keys) or ids=table,…", openapi3.Parameters{paramRef("fields"), paramRef("ids"), refreshParam, paramRef("as_list")},
		nil, service.SchemaRef(compTableList), all)
	add("/_schema", http.MethodPost, "createTables", "Create tables",
		"Creates tables from definitions {\"resource\":[{name, label, field:[{name, type, length?, …}]}]}; check_exist=true alters a table that exists instead of refusing it. "+namesOr,
		openapi3.Parameters{paramRef("fields"), service.QueryParam("check_exist", "Alter tables that exist instead of refusing them.", openapi3.NewBoolSchema())},
		service.JSONBody("The table definitions.", true, tables), names, append(all, http.StatusConflict))
	add("/_schema", http.MethodPut, "replaceTables", "Create or replace tables",
		"Creates the tables that do not exist and gives those that do the fields listed (fields not listed are dropped). "+namesOr, openapi3.Parameters{paramRef("fields")},
		service.JSONBody("The table definitions.", true, tables), names, append(all, http.StatusConflict))
	add("/_schema", http.MethodPatch, "updateTables", "Update tables",
		"Adds and changes the fields listed of existing tables. "+namesOr, openapi3.Parameters{paramRef("fields")},
		service.JSONBody("The table definitions.", true, tables), names, append(withNotFound, http.StatusConflict))
	add("/_schema", http.MethodDelete, "dropTables", "Drop tables",
		"Drops the tables named by ids or by the body, all or none. Answers their names.", openapi3.Parameters{paramRef("ids")},
		service.JSONBody("The tables to drop ({\"resource\":[{\"name\":…}]}), when ids is not given.", false, names), names, append(withNotFound, http.StatusConflict))

	tp := "/_schema/{table_name}"
	add(tp, http.MethodGet, "describeTable", "Describe a table",
		"The table's definition: name, label, plural, is_view, primary key, fields, relations and constraints.", openapi3.Parameters{tableParam, refreshParam}, nil, table, withNotFound)
	add(tp, http.MethodPost, "createTable", "Create a table",
		"Creates the table from its definition.", openapi3.Parameters{tableParam},
		service.JSONBody("The table definition.", true, table), table, append(all, http.StatusConflict))
	add(tp, http.MethodPut, "replaceTable", "Replace a table's fields",
		"Alters the table to the definition sent.", openapi3.Parameters{tableParam},
		service.JSONBody("The table definition.", true, table), table, append(withNotFound, http.StatusConflict))
	add(tp, http.MethodPatch, "updateTable", "Update a table",
		"Adds and alters the fields sent.", openapi3.Parameters{tableParam},
		service.JSONBody("The table definition.", true, table), table, append(withNotFound, http.StatusConflict))
	add(tp, http.MethodDelete, "dropTable", "Drop a table",
		"Drops the table; refused while another table's foreign key references it.", openapi3.Parameters{tableParam},
		nil, service.SchemaRef(service.SchemaSuccess), append(withNotFound, http.StatusConflict))

	fp := tp + "/_field"
	add(fp, http.MethodGet, "describeFields", "Describe a table's fields", "The table's field definitions.",
		openapi3.Parameters{tableParam, refreshParam}, nil, fields, withNotFound)
	add(fp, http.MethodPost, "createFields", "Add fields", "Adds fields to the table.",
		openapi3.Parameters{tableParam}, service.JSONBody("The field definitions.", true, fields), fields, append(withNotFound, http.StatusConflict))
	add(fp, http.MethodPut, "replaceFields", "Add or alter fields", "Adds the fields that do not exist and alters those that do.",
		openapi3.Parameters{tableParam}, service.JSONBody("The field definitions.", true, fields), fields, append(withNotFound, http.StatusConflict))
	add(fp, http.MethodPatch, "updateFields", "Alter fields", "Alters existing fields.",
		openapi3.Parameters{tableParam}, service.JSONBody("The field definitions.", true, fields), fields, append(withNotFound, http.StatusConflict))
	add(fp, http.MethodDelete, "dropFields", "Drop fields", "Drops the fields named by ids.",
		openapi3.Parameters{tableParam, paramRef("ids")}, nil, fields, append(withNotFound, http.StatusConflict))

	ffp := fp + "/{field_name}"
	add(ffp, http.MethodGet, "describeField", "Describe a field", "The field's definition.",
		openapi3.Parameters{tableParam, fieldParam, refreshParam}, nil, field, withNotFound)
	add(ffp, http.MethodPost, "createField", "Add a field", "Adds the field to the table (409 when it exists).",
		openapi3.Parameters{tableParam, fieldParam}, service.JSONBody("The field definition.", true, field), field, append(withNotFound, http.StatusConflict))
	add(ffp, http.MethodPut, "replaceField", "Alter a field", "Gives the field the definition sent.",
		openapi3.Parameters{tableParam, fieldParam}, service.JSONBody("The field definition.", true, field), field, append(withNotFound, http.StatusConflict))
	add(ffp, http.MethodPatch, "updateField", "Alter a field", "Changes the properties sent.",
		openapi3.Parameters{tableParam, fieldParam}, service.JSONBody("The field definition.", true, field), field, append(withNotFound, http.StatusConflict))
	add(ffp, http.MethodDelete, "dropField", "Drop a field", "Drops the field with its indexes and constraints.",
		openapi3.Parameters{tableParam, fieldParam}, nil, service.SchemaRef(service.SchemaSuccess), append(withNotFound, http.StatusConflict))

	rels := openapi3.NewSchemaRef("", wrapped(service.SchemaRef(compRelDef), "Relations, {\"resource\":[…]}."))
	add(tp+"/_related", http.MethodGet, "describeRelations", "Describe a table's relations",
		"The relations derived from the foreign keys of and to the table.", openapi3.Parameters{tableParam, refreshParam}, nil, rels, withNotFound)
	belongs := openapi3.NewObjectSchema().
		WithProperty("field", openapi3.NewStringSchema()).
		WithProperty("ref_table", openapi3.NewStringSchema()).
		WithProperty("ref_field", openapi3.NewStringSchema()).
		WithProperty("ref_on_delete", openapi3.NewStringSchema().WithEnum("NO ACTION", "RESTRICT", "CASCADE", "SET NULL", "SET DEFAULT")).
		WithProperty("ref_on_update", openapi3.NewStringSchema().WithEnum("NO ACTION", "RESTRICT", "CASCADE", "SET NULL", "SET DEFAULT"))
	belongs.Required = []string{"field", "ref_table"}
	add(tp+"/_related", http.MethodPost, "createRelations", "Add belongs_to relations",
		"Each belongs_to relation {field, ref_table, ref_field, ref_on_delete, ref_on_update} becomes a foreign key of the table.",
		openapi3.Parameters{tableParam}, service.JSONBody("The relations.", true, openapi3.NewSchemaRef("", wrapped(openapi3.NewSchemaRef("", belongs), "Relations to add."))),
		rels, append(withNotFound, http.StatusConflict))
	add(tp+"/_related/{relation_name}", http.MethodGet, "describeRelation", "Describe a relation", "One relation of the table.",
		openapi3.Parameters{tableParam, relParam, refreshParam}, nil, service.SchemaRef(compRelDef), withNotFound)
}

// routinePaths documents _proc and _func: the list, a path per routine
// (its parameters and result) and the generic call path for routines
// created later.
func (d *dbDoc) routinePaths(routines []*dialects.Routine) {
	if d.kind == dialects.SQLite {
		return // SQLite has no stored routines (the API answers 501).
	}
	byName := map[dialects.RoutineType]map[string][]*dialects.Routine{dialects.Procedure: {}, dialects.Function: {}}
	var order []*dialects.Routine
	for _, r := range routines {
		m := byName[r.Type]
		if m == nil {
			continue
		}
		if _, seen := m[r.Name]; !seen {
			order = append(order, r)
		}
		m[r.Name] = append(m[r.Name], r)
	}
	for _, r := range []struct {
		typ                  dialects.RoutineType
		res, param, noun, id string
	}{
		{dialects.Procedure, "_proc", "procedure_name", "procedure", "Procedure"},
		{dialects.Function, "_func", "function_name", "function", "Function"},
	} {
		list := service.NewOperation("list"+r.id+"s", r.res, "List the stored "+r.noun+"s",
			"Names by default; fields=* (or ids=a,b) describes each "+r.noun+": parameters (name, position, param_type IN/OUT/INOUT, type, db_type, …) and return type.")
		list.Parameters = openapi3.Parameters{paramRef("fields"), paramRef("ids"), paramRef("as_list")}
		service.AddResponse(list, http.StatusOK, "The "+r.noun+"s.", service.SchemaRef(service.SchemaResourceList))
		service.AddErrors(list, append(service.CommonErrors, http.StatusServiceUnavailable)...)
		service.AddOperation(d.doc, "/"+r.res, http.MethodGet, list)

		for _, rt := range order {
			if rt.Type == r.typ {
				d.routine(r.res, r.noun, byName[r.typ][rt.Name])
			}
		}

		p := "/" + r.res + "/{" + r.param + "}"
		nameParam := service.PathParam(r.param, "The "+r.noun+"'s name.", nil)
		get := service.NewOperation("call"+r.id+"Get", r.res, "Call a "+r.noun+" with query parameters",
			"Calls the "+r.noun+" with its IN parameters given as query parameters by name.")
		get.Parameters = openapi3.Parameters{nameParam,
			service.QueryParam("wrapper", "Name of the member that wraps the result rows.", openapi3.NewStringSchema()),
			service.QueryParam("returns", "Simple type to cast a scalar result to.", openapi3.NewStringSchema())}
		service.AddResponse(get, http.StatusOK, "The result.", service.SchemaRef(compCallResult))
		service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
		service.AddOperation(d.doc, p, http.MethodGet, get)

		post := service.NewOperation("call"+r.id, r.res, "Call a "+r.noun,
			"Calls the "+r.noun+" with the parameters in the body: {\"params\":[{\"name\":…,\"value\":…}]}, an object of name: value, or a list of values by position; the query string fills the rest.")
		post.Parameters = openapi3.Parameters{nameParam}
		post.RequestBody = service.JSONBody("The parameters.", false, service.SchemaRef(compParamList))
		service.AddResponse(post, http.StatusOK, "The result.", service.SchemaRef(compCallResult))
		service.AddErrors(post, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
		service.AddOperation(d.doc, p, http.MethodPost, post)
	}
}

// routine documents the path of one routine name: GET with its input
// parameters in the query string and POST with them in the body; the
// overloads of a name (PostgreSQL) share the path, and the parameters of
// all of them are listed.
func (d *dbDoc) routine(res, noun string, overloads []*dialects.Routine) {
	rt := overloads[0]
	name := rt.Name
	base := invalidComp.ReplaceAllString(name, "_")
	id := res[1:] + "_" + base
	for i := 2; d.used["op:"+id]; i++ {
		id = res[1:] + "_" + base + "_" + strconv.Itoa(i)
	}
	d.used["op:"+id] = true

	var sigs []string
	var inputs []dialects.Param
	seen := map[string]int{}   // lowercased name → index in inputs
	mixed := map[string]bool{} // names whose type differs between overloads
	body := openapi3.NewObjectSchema()
	body.Properties = openapi3.Schemas{}
	for _, o := range overloads {
		var parts []string
		for _, p := range o.Params {
			parts = append(parts, strings.TrimSpace(string(p.Mode)+" "+p.Name+" "+p.DBType))
			if !p.IsInput() || p.Name == "" {
				continue
			}
			key := strings.ToLower(p.Name)
			if i, ok := seen[key]; ok {
				if inputs[i].DBType != p.DBType {
					mixed[key] = true
				}
				continue
			}
			seen[key] = len(inputs)
			inputs = append(inputs, p)
		}
		sigs = append(sigs, name+"("+strings.Join(parts, ", ")+")")
	}
	desc := rt.Comment
	if desc != "" {
		desc += "\n\n"
	}
	desc += "Signature: " + strings.Join(sigs, "; ") + "."
	if len(overloads) > 1 {
		desc += " The overload is chosen by the parameters given."
	}

	p := "/" + res + "/" + url.PathEscape(name)
	get := service.NewOperation("call_"+id+"_get", res, "Call "+noun+" "+name+" with query parameters", desc)
	for _, in := range inputs {
		ps := d.columnSchema(&dialects.Column{Name: in.Name, Type: in.Type, DBType: in.DBType, Length: in.Length,
			Precision: in.Precision, Scale: in.Scale, AllowNull: true})
		pd := fmt.Sprintf("%s parameter %s (%s).", in.Mode, in.Name, in.DBType)
		if mixed[strings.ToLower(in.Name)] {
			ps = &openapi3.Schema{Description: "Its type depends on the overload."}
			pd = fmt.Sprintf("%s parameter %s; its type depends on the overload.", in.Mode, in.Name)
		}
		if in.HasDefault {
			pd += " May be left out."
		}
		get.AddParameter(service.QueryParam(in.Name, pd, ps).Value)
		body.Properties[strings.ToLower(in.Name)] = openapi3.NewSchemaRef("", ps)
	}
	result := d.routineResult(overloads)
	service.AddResponse(get, http.StatusOK, "The result.", result)
	service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	service.AddOperation(d.doc, p, http.MethodGet, get)

	post := service.NewOperation("call_"+id, res, "Call "+noun+" "+name, desc+
		" The body is {\"params\":[{\"name\":…,\"value\":…}]}, or an object of the parameters by name as below, or a list of values by position.")
	body.Description = "The parameters by name."
	post.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithDescription("The parameters.").
		WithJSONSchema(&openapi3.Schema{AnyOf: openapi3.SchemaRefs{service.SchemaRef(compParamList), openapi3.NewSchemaRef("", body)}})}
	service.AddResponse(post, http.StatusOK, "The result.", result)
	service.AddErrors(post, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	service.AddOperation(d.doc, p, http.MethodPost, post)
}

// routineResult is the schema of what a call of the routine answers, when
// all overloads agree on it; else the generic result.
func (d *dbDoc) routineResult(overloads []*dialects.Routine) *openapi3.SchemaRef {
	if len(overloads) != 1 {
		return service.SchemaRef(compCallResult)
	}
	rt := overloads[0]
	rows := openapi3.NewObjectSchema().WithProperty("resource",
		openapi3.NewArraySchema().WithItems(openapi3.NewObjectSchema().WithAnyAdditionalProperties()))
	switch {
	case rt.Type == dialects.Function && rt.ReturnsSet:
		rows.Description = "The rows the function returns (renamed by wrapper)."
		return openapi3.NewSchemaRef("", rows)
	case rt.Type == dialects.Function && rt.ReturnType != "" && !rt.ReturnsVoid:
		s := d.columnSchema(&dialects.Column{Type: rt.ReturnType, DBType: rt.ReturnDBType, AllowNull: true})
		s.Description = join(s.Description, "The function's value ("+rt.ReturnDBType+"), bare.")
		return openapi3.NewSchemaRef("", s)
	case rt.HasOutput():
		for _, p := range rt.Params {
			if p.IsOutput() && p.Name != "" {
				rows.Properties[strings.ToLower(p.Name)] = openapi3.NewSchemaRef("",
					d.columnSchema(&dialects.Column{Name: p.Name, Type: p.Type, DBType: p.DBType, AllowNull: true}))
			}
		}
		rows.Description = "The OUT and INOUT parameters' values, with any rows under resource."
		return openapi3.NewSchemaRef("", rows)
	}
	return service.SchemaRef(compCallResult)
}

// join appends b to a with a space.
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}
