package system

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.Documenter = (*Backend)(nil)

// documented is what the document needs of a resource beyond model.
type documented interface {
	model
	// docSchema is the schema of one record as the API shows it; ref
	// names the component of another resource.
	docSchema(ref func(resource string) *openapi3.SchemaRef) *openapi3.Schema
	// upserts reports whether POST /R/{key} creates or updates a record.
	upserts() bool
}

// OpenAPI documents the system resources: every record resource with its
// schema (from the field definitions: types, nullability, read- and
// write-only fields, related records), the informational resources, and
// the administrator's session, password and profile.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) {
	doc := service.NewDocument("The platform's own configuration: services, apps, roles, users, administrators, limits, CORS, lookups, scripts and more. Administrators reach every resource; a role may delegate components of this service to other users.")
	c := doc.Components
	c.Parameters = openapi3.ParametersMap{}
	for _, p := range []struct {
		name, desc string
		schema     *openapi3.Schema
	}{
		{"fields", "Comma-separated fields to return, or *.", openapi3.NewStringSchema()},
		{"filter", "Condition on the records in the filter language, e.g. name like 'a%'.", openapi3.NewStringSchema()},
		{"limit", "Records per page.", openapi3.NewIntegerSchema().WithMin(1)},
		{"offset", "Records to skip.", openapi3.NewIntegerSchema().WithMin(0)},
		{"order", "Sort order: field [asc|desc], …", openapi3.NewStringSchema()},
		{"ids", "Comma-separated keys.", openapi3.NewStringSchema()},
		{"related", "Comma-separated related records to include, or *.", openapi3.NewStringSchema()},
		{"include_count", "Add meta.count.", openapi3.NewBoolSchema()},
		{"count_only", "Answer only {meta:{count}}.", openapi3.NewBoolSchema()},
		{"continue", "In a batch, go on past a failed record.", openapi3.NewBoolSchema()},
		{"rollback", "Write the whole batch in one transaction, undone on failure.", openapi3.NewBoolSchema()},
		{"force", "Allow a DELETE of every record.", openapi3.NewBoolSchema()},
	} {
		c.Parameters[p.name] = service.QueryParam(p.name, p.desc, p.schema)
	}
	pref := func(name string) *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Ref: "#/components/parameters/" + name}
	}
	keys := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(
		openapi3.NewObjectSchema().WithAnyAdditionalProperties()))
	keys.Description = "The key of each record written or deleted ({\"resource\":[{\"id\":5}]}), or records when fields or related ask for them."
	c.Schemas["RecordKeys"] = openapi3.NewSchemaRef("", keys)
	keysRef := service.SchemaRef("RecordKeys")

	names := make([]string, 0, len(b.models))
	for n := range b.models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d, ok := b.models[n].(documented); ok {
			c.Schemas[n] = openapi3.NewSchemaRef("", d.docSchema(service.SchemaRef))
		}
	}

	root := service.NewOperation("getResources", "", "List the system resources", "Answers {\"resource\":[{\"name\":…}]}; as_list=true gives bare names.")
	root.AddParameter(service.QueryParam("as_list", "Answer bare names.", openapi3.NewBoolSchema()).Value)
	service.AddResponse(root, http.StatusOK, "The resources.", service.SchemaRef(service.SchemaResourceList))
	service.AddErrors(root, service.CommonErrors...)
	service.AddOperation(doc, "/", http.MethodGet, root)

	listErrs := service.CommonErrors
	writeErrs := append(append([]int{}, service.CommonErrors...), http.StatusNotFound, http.StatusConflict)
	for _, name := range b.endpoints {
		d, ok := b.models[name].(documented)
		if !ok {
			continue
		}
		rec := service.SchemaRef(name)
		page := openapi3.NewObjectSchema().
			WithProperty("resource", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: rec}).
			WithProperty("meta", openapi3.NewObjectSchema().WithProperty("count", openapi3.NewIntegerSchema()))
		page.Description = "A page of " + name + " records."
		c.Schemas[name+".Records"] = openapi3.NewSchemaRef("", page)
		body := openapi3.NewObjectSchema().WithProperty("resource", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: rec})
		body.Description = "Records, {\"resource\":[…]}; a bare array or object is accepted too."
		c.Schemas[name+".Request"] = openapi3.NewSchemaRef("", body)
		bodyRef := service.SchemaRef(name + ".Request")

		p := "/" + name
		list := service.NewOperation("list_"+name, name, "List "+name+" records", "Records of "+name+", filtered, sorted and paged.")
		list.Parameters = openapi3.Parameters{pref("fields"), pref("filter"), pref("limit"), pref("offset"), pref("order"),
			pref("ids"), pref("related"), pref("include_count"), pref("count_only")}
		service.AddResponse(list, http.StatusOK, "The records.", service.SchemaRef(name+".Records"))
		service.AddErrors(list, listErrs...)
		service.AddOperation(doc, p, http.MethodGet, list)

		create := service.NewOperation("create_"+name, name, "Create "+name+" records",
			"Creates records (related records nested in them too). A batch stops at the first failure unless continue=true; rollback=true writes all or nothing.")
		create.Parameters = openapi3.Parameters{pref("fields"), pref("related"), pref("continue"), pref("rollback")}
		create.RequestBody = service.JSONBody("The records.", true, bodyRef)
		service.AddResponse(create, http.StatusCreated, "Keys of the records created.", keysRef)
		service.AddErrors(create, append(append([]int{}, service.CommonErrors...), http.StatusConflict)...)
		service.AddOperation(doc, p, http.MethodPost, create)

		for _, v := range []struct{ verb, id, sum string }{
			{http.MethodPut, "replace_", "Update " + name + " records (as PATCH)"},
			{http.MethodPatch, "update_", "Update " + name + " records"},
		} {
			op := service.NewOperation(v.id+name, name, v.sum,
				"Merges the fields sent into records found by the key in each record, or by ids or filter with one record in the body.")
			op.Parameters = openapi3.Parameters{pref("ids"), pref("filter"), pref("fields"), pref("related"), pref("continue"), pref("rollback")}
			op.RequestBody = service.JSONBody("The records, or one record for ids or filter.", true, bodyRef)
			service.AddResponse(op, http.StatusOK, "Keys of the records updated.", keysRef)
			service.AddErrors(op, writeErrs...)
			service.AddOperation(doc, p, v.verb, op)
		}
		del := service.NewOperation("delete_"+name, name, "Delete "+name+" records",
			"Deletes the records named by ids, filter or records in the body; every record only with force=true.")
		del.Parameters = openapi3.Parameters{pref("ids"), pref("filter"), pref("force"), pref("fields"), pref("continue"), pref("rollback")}
		service.AddResponse(del, http.StatusOK, "Keys of the records deleted.", keysRef)
		service.AddErrors(del, writeErrs...)
		service.AddOperation(doc, p, http.MethodDelete, del)

		key := d.keyColumn()
		kp := p + "/{" + key + "}"
		var keySchema *openapi3.Schema
		if key == "id" {
			keySchema = openapi3.NewInt64Schema().WithMin(1)
		}
		keyParam := service.PathParam(key, "The record's "+key+".", keySchema)
		get := service.NewOperation("get_"+name, name, "Read one "+name+" record", "The record with this "+key+".")
		get.Parameters = openapi3.Parameters{keyParam, pref("fields"), pref("related")}
		service.AddResponse(get, http.StatusOK, "The record.", rec)
		service.AddErrors(get, append(append([]int{}, service.CommonErrors...), http.StatusNotFound)...)
		service.AddOperation(doc, kp, http.MethodGet, get)
		if d.upserts() {
			up := service.NewOperation("upsert_"+name, name, "Create or replace one "+name+" record", "Creates the record with this "+key+", or updates it when it exists.")
			up.Parameters = openapi3.Parameters{keyParam, pref("fields")}
			up.RequestBody = service.JSONBody("The record.", true, rec)
			service.AddResponse(up, http.StatusOK, "The record.", rec)
			service.AddErrors(up, writeErrs...)
			service.AddOperation(doc, kp, http.MethodPost, up)
		}
		for _, v := range []struct{ verb, id, sum string }{
			{http.MethodPut, "replaceOne_", "Update one " + name + " record (as PATCH)"},
			{http.MethodPatch, "updateOne_", "Update one " + name + " record"},
		} {
			op := service.NewOperation(v.id+name, name, v.sum, "Merges the fields sent into the record.")
			op.Parameters = openapi3.Parameters{keyParam, pref("fields"), pref("related")}
			op.RequestBody = service.JSONBody("The fields to change.", true, rec)
			service.AddResponse(op, http.StatusOK, "The record's key, or the fields asked for.", rec)
			service.AddErrors(op, writeErrs...)
			service.AddOperation(doc, kp, v.verb, op)
		}
		delOne := service.NewOperation("deleteOne_"+name, name, "Delete one "+name+" record", "Deletes the record.")
		delOne.Parameters = openapi3.Parameters{keyParam, pref("fields")}
		service.AddResponse(delOne, http.StatusOK, "The record's key, or the fields asked for.", rec)
		service.AddErrors(delOne, writeErrs...)
		service.AddOperation(doc, kp, http.MethodDelete, delOne)
	}
	b.documentOthers(doc)
	if b.signIn != nil {
		b.signIn.Document(doc)
	}
	return doc, nil
}

// documentOthers adds the resources that are not record tables.
func (b *Backend) documentOthers(doc *openapi3.T) {
	obj := func(desc string) *openapi3.SchemaRef {
		s := openapi3.NewObjectSchema().WithAnyAdditionalProperties()
		s.Description = desc
		return openapi3.NewSchemaRef("", s)
	}
	add := func(path, verb, id, tag, summary, desc string, params openapi3.Parameters, body *openapi3.RequestBodyRef, resp *openapi3.SchemaRef, errs ...int) {
		op := service.NewOperation(id, tag, summary, desc)
		op.Parameters = params
		op.RequestBody = body
		service.AddResponse(op, http.StatusOK, "Success.", resp)
		service.AddErrors(op, append(append([]int{}, service.CommonErrors...), errs...)...)
		service.AddOperation(doc, path, verb, op)
	}
	q := func(name, desc string, s *openapi3.Schema) *openapi3.ParameterRef {
		return service.QueryParam(name, desc, s)
	}
	str, boolean := openapi3.NewStringSchema, openapi3.NewBoolSchema

	info := openapi3.NewObjectSchema().
		WithProperty("name", str()).WithProperty("label", str()).WithProperty("group", str()).
		WithProperty("description", str()).WithProperty("singleton", boolean())
	doc.Components.Schemas["ServiceType"] = openapi3.NewSchemaRef("", info)
	types := openapi3.NewObjectSchema().WithProperty("resource", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: service.SchemaRef("ServiceType")})
	add("/service_type", http.MethodGet, "listServiceTypes", "service_type", "List service types",
		"Every service type this build knows; those it does not implement refuse to be created with 501.",
		openapi3.Parameters{q("fields", "Fields to return.", str()), q("group", "Comma-separated groups.", str())}, nil, openapi3.NewSchemaRef("", types))
	add("/service_type/{name}", http.MethodGet, "getServiceType", "service_type", "Describe a service type", "One service type.",
		openapi3.Parameters{service.PathParam("name", "The type's name, e.g. pgsql.", nil)}, nil, service.SchemaRef("ServiceType"), http.StatusNotFound)
	stype := openapi3.NewObjectSchema().
		WithProperty("name", str()).WithProperty("label", str()).WithProperty("description", str()).
		WithProperty("sandboxed", boolean()).WithProperty("supports_inline_execution", boolean()).
		WithProperty("available", boolean()).WithProperty("aliases", openapi3.NewArraySchema().WithItems(str()))
	doc.Components.Schemas["ScriptType"] = openapi3.NewSchemaRef("", stype)
	stypes := openapi3.NewObjectSchema().WithProperty("resource", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: service.SchemaRef("ScriptType")})
	add("/script_type", http.MethodGet, "listScriptTypes", "script_type", "List script engines",
		"The engines event scripts and scripted services may name (lua, javascript, nodejs, python3, php), each with whether it is available on this machine.",
		openapi3.Parameters{q("fields", "Fields to return.", str())}, nil, openapi3.NewSchemaRef("", stypes))
	add("/script_type/{name}", http.MethodGet, "getScriptType", "script_type", "Describe a script engine", "One engine; an alias (v8js, python) names its engine.",
		openapi3.Parameters{service.PathParam("name", "The engine's name, e.g. javascript.", nil)}, nil, service.SchemaRef("ScriptType"), http.StatusNotFound)
	add("/environment", http.MethodGet, "getEnvironment", "environment", "The platform's environment",
		"Version and sign-in options (anyone may read them), the caller's apps, and for administrators the server.", nil, nil,
		obj("{platform:{version,…}, authentication:{…}, apps:[…], server:{…}}"))
	add("/constant", http.MethodGet, "listConstants", "constant", "Read-only constants", "Every constant group with its values.", nil, nil, obj("Constant groups."))
	add("/constant/{name}", http.MethodGet, "getConstant", "constant", "One constant group", "The values of one group.",
		openapi3.Parameters{service.PathParam("name", "The group's name.", nil)}, nil, obj("The group's values."), http.StatusNotFound)
	add("/event", http.MethodGet, "listEvents", "event", "List API events",
		"Per service, each event path with its event names and parameters, as scripts attach to them.",
		openapi3.Parameters{q("service", "One service only.", str()), q("scriptable", "Add the script suffixes.", boolean()),
			q("as_list", "A flat list of event names.", boolean()), q("services_only", "Only the service names.", boolean())},
		nil, obj("Services → event paths → {type, endpoints, parameter}."))
	add("/cache", http.MethodGet, "listCaches", "cache", "List the services that cache", "The services whose caches can be flushed.", nil, nil,
		openapi3.NewSchemaRef("", wrappedAny()))
	add("/cache", http.MethodDelete, "flushCaches", "cache", "Flush every cache", "Empties every service's cache.", nil, nil, service.SchemaRef(service.SchemaSuccess))
	add("/cache/{service}", http.MethodDelete, "flushCache", "cache", "Flush a service's cache", "Empties one service's cache.",
		openapi3.Parameters{service.PathParam("service", "The service's name.", nil)}, nil, service.SchemaRef(service.SchemaSuccess), http.StatusNotFound)
	add("/package", http.MethodGet, "getPackageManifest", "package", "What an export holds", "The manifest of the configuration an export would hold.", nil, nil, obj("The manifest."))
	add("/package", http.MethodPost, "exportOrImportPackage", "package", "Export or import the configuration",
		"A body holding a package document ({manifest, system}, as JSON or a multipart file) is imported; any other body ({} or {\"secrets\":true}) exports the whole configuration as such a document.",
		nil, &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithDescription("A package to import, or export options.").WithJSONSchemaRef(obj("A package document or export options."))},
		obj("The exported package, or the import's result."), http.StatusConflict)
	limitParam := service.PathParam("id", "The limit's id.", openapi3.NewInt64Schema().WithMin(1))
	add("/limit_cache", http.MethodGet, "listLimitCounters", "limit_cache", "Rate-limit counters",
		"Every limit's counter (each_user limits one per user; user_id= picks one).",
		openapi3.Parameters{q("user_id", "One user's counters.", openapi3.NewInt64Schema())}, nil, openapi3.NewSchemaRef("", wrappedAny()))
	add("/limit_cache", http.MethodDelete, "resetLimitCounters", "limit_cache", "Reset rate-limit counters",
		"Resets the counters of the limits named by ids, or of every limit with force=true.",
		openapi3.Parameters{q("ids", "Comma-separated limit ids.", str()), q("force", "Reset every counter.", boolean())}, nil, openapi3.NewSchemaRef("", wrappedAny()))
	add("/limit_cache/{id}", http.MethodGet, "getLimitCounter", "limit_cache", "One limit's counters", "The counters of one limit.",
		openapi3.Parameters{limitParam}, nil, openapi3.NewSchemaRef("", wrappedAny()), http.StatusNotFound)
	add("/limit_cache/{id}", http.MethodDelete, "resetLimitCounter", "limit_cache", "Reset one limit's counters", "Resets the counters of one limit.",
		openapi3.Parameters{limitParam}, nil, openapi3.NewSchemaRef("", wrappedAny()), http.StatusNotFound)
}

// wrappedAny is {"resource":[objects]}.
func wrappedAny() *openapi3.Schema {
	return openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(
		openapi3.NewObjectSchema().WithAnyAdditionalProperties()))
}

func (t *table[T]) upserts() bool { return t.http.upsertByKey }

// encodedSchemas are the API forms of fields whose codec shows them other
// than as their column.
var encodedSchemas = map[string]func() *openapi3.Schema{
	"method":    verbList,
	"verb_mask": verbList,
	"fields":    stringList,
	"to":        stringList,
	"cc":        stringList,
	"bcc":       stringList,
	"config": func() *openapi3.Schema {
		s := openapi3.NewObjectSchema().WithAnyAdditionalProperties()
		s.Description = "The service type's configuration; a write merges the keys sent."
		return s
	},
	"filters": func() *openapi3.Schema {
		item := openapi3.NewObjectSchema().
			WithProperty("name", openapi3.NewStringSchema()).
			WithProperty("operator", openapi3.NewStringSchema()).
			WithProperty("value", openapi3.NewStringSchema())
		return openapi3.NewArraySchema().WithItems(item)
	},
}

func verbList() *openapi3.Schema {
	s := openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema().WithEnum("GET", "POST", "PUT", "PATCH", "DELETE"))
	s.Description = "Verbs; a comma-separated string or the DreamFactory bit mask is accepted too."
	return s
}

func stringList() *openapi3.Schema {
	s := openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())
	s.Description = "A list; a comma-separated string is accepted too."
	return s
}

// computedSchemas are the types of computed fields.
var computedSchemas = map[string]func() *openapi3.Schema{
	"launch_url": openapi3.NewStringSchema,
	"confirmed":  openapi3.NewBoolSchema,
}

func (t *table[T]) docSchema(ref func(string) *openapi3.SchemaRef) *openapi3.Schema {
	typ := reflect.TypeFor[T]()
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{}
	s.Description = fmt.Sprintf("A record of %s.", t.name)
	for _, f := range t.fields {
		var fs *openapi3.Schema
		switch {
		case f.compute != nil:
			if mk, ok := computedSchemas[f.name]; ok {
				fs = mk()
			} else {
				fs = &openapi3.Schema{}
			}
		case f.encode != nil:
			if mk, ok := encodedSchemas[f.name]; ok {
				fs = mk()
			} else {
				fs = &openapi3.Schema{Description: "Any JSON value."}
			}
		default:
			fs = kindSchema(f.kind)
			if f.index != nil {
				if ft := typ.FieldByIndex(f.index).Type; ft.Kind() == reflect.Pointer {
					fs.Nullable = true
				}
			}
		}
		switch f.access {
		case readOnly:
			fs.ReadOnly = true
		case writeOnly:
			fs.WriteOnly = true
		case createOnly:
			fs.Description = join(fs.Description, "Set on create only.")
		}
		if f.name == t.key && f.access == readOnly {
			fs.Description = join(fs.Description, "The record's key, assigned by the platform.")
		}
		s.Properties[f.name] = openapi3.NewSchemaRef("", fs)
	}
	for _, r := range t.relations {
		target := r.target().resourceName()
		var rs *openapi3.Schema
		if r.many {
			rs = openapi3.NewArraySchema()
			rs.Items = ref(target)
		} else {
			rs = &openapi3.Schema{AllOf: openapi3.SchemaRefs{ref(target)}, Nullable: true}
		}
		rs.Description = "Related " + target + " records, present with related=" + r.name + "."
		if r.writable {
			rs.Description += " Written with the record: entries with an id are updated, without one created, with a null parent key deleted."
		} else {
			rs.ReadOnly = true
		}
		s.Properties[r.name] = openapi3.NewSchemaRef("", rs)
	}
	return s
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// kindSchema is the schema of a column of filter kind k.
func kindSchema(k filter.Kind) *openapi3.Schema {
	switch k {
	case filter.KindString:
		return openapi3.NewStringSchema()
	case filter.KindInteger:
		return openapi3.NewInt64Schema()
	case filter.KindFloat:
		return openapi3.NewFloat64Schema()
	case filter.KindBoolean:
		return openapi3.NewBoolSchema()
	case filter.KindTime:
		s := openapi3.NewStringSchema().WithFormat("date-time")
		s.Description = "2006-01-02 15:04:05 in UTC."
		return s
	}
	return &openapi3.Schema{}
}
