package sqldb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// schemaReq is one request below _schema.
type schemaReq struct {
	b    *Backend
	w    http.ResponseWriter
	r    *http.Request
	db   *bun.DB
	svc  *store.Service
	verb string
	s    *dialects.Schema
	// fields is the fields (select) option: "" answers with names, "*"
	// or a list of keys with objects.
	fields     string
	ids        []string
	idsGiven   bool
	checkExist bool
	body       []byte
	// extras are the kept field extras (fieldExtras), read once.
	extras     map[string]map[string]*store.FieldExtra
	extrasRead bool
}

// serveSchema handles _schema and the paths below it:
//
//	_schema                      GET list, POST create, PUT create or replace, PATCH update, DELETE drop (ids)
//	_schema/{t}                  GET describe, POST create, PUT replace fields, PATCH update fields, DELETE drop
//	_schema/{t}/_field           GET list, POST add, PUT add or alter, PATCH alter, DELETE drop (ids)
//	_schema/{t}/_field/{f}       GET, POST add, PUT/PATCH alter, DELETE drop
//	_schema/{t}/_related         GET list, POST add a belongs_to relation (a foreign key)
//	_schema/{t}/_related/{r}     GET
//	_schema/{t}/{f}              GET (DreamFactory's older path of a field)
func (b *Backend) serveSchema(w http.ResponseWriter, r *http.Request, verb string, rest []string) error {
	ctx := r.Context()
	if len(rest) > 3 || len(rest) == 3 && rest[1] != "_field" && rest[1] != "_related" {
		return apierr.NotFound("Resource '_schema/%s' not found for service '%s'.", strings.Join(rest, "/"), b.name)
	}
	for _, seg := range rest {
		if seg == "" {
			return apierr.NotFound("Resource '_schema/%s' not found for service '%s'.", strings.Join(rest, "/"), b.name)
		}
	}
	db, err := b.pool(ctx)
	if err != nil {
		return err
	}
	q := &schemaReq{b: b, w: w, r: r, db: db, verb: verb}
	if t := service.TargetFrom(ctx); t != nil {
		q.svc = t.Service
	}
	if err := q.readOptions(); err != nil {
		return err
	}
	if verb == http.MethodGet {
		age := anyAge
		if refresh, _ := boolean("refresh", r.URL.Query().Get("refresh")); refresh {
			age = 0
		}
		if q.s, err = b.loadSchema(ctx, db, age); err != nil {
			return err
		}
		return q.get(ctx, rest)
	}
	// Changes are planned on the schema as it is now, not as cached.
	if q.s, err = b.loadSchema(ctx, db, 0); err != nil {
		return err
	}
	switch len(rest) {
	case 0:
		switch verb {
		case http.MethodPost:
			return q.createTables(ctx)
		case http.MethodPut, http.MethodPatch:
			return q.updateTables(ctx, verb == http.MethodPut)
		case http.MethodDelete:
			return q.dropTables(ctx)
		}
	case 1:
		switch verb {
		case http.MethodPost:
			return q.createTable(ctx, rest[0])
		case http.MethodPut, http.MethodPatch:
			return q.updateTable(ctx, rest[0], verb == http.MethodPut)
		case http.MethodDelete:
			return q.dropTable(ctx, rest[0])
		}
	case 2:
		switch {
		case rest[1] == "_field" && verb == http.MethodDelete:
			return q.dropFields(ctx, rest[0], nil)
		case rest[1] == "_field" && (verb == http.MethodPost || verb == http.MethodPut || verb == http.MethodPatch):
			return q.writeFields(ctx, rest[0], "")
		case rest[1] == "_related" && verb == http.MethodPost:
			return q.addRelations(ctx, rest[0])
		}
	case 3:
		switch {
		case rest[1] == "_field" && verb == http.MethodDelete:
			return q.dropFields(ctx, rest[0], []string{rest[2]})
		case rest[1] == "_field" && (verb == http.MethodPost || verb == http.MethodPut || verb == http.MethodPatch):
			return q.writeFields(ctx, rest[0], rest[2])
		}
	}
	switch verb {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		if len(rest) >= 2 && rest[1] == "_related" {
			return apierr.BadRequest("%s requests for resource '_schema/%s' are not currently supported by the '%s' service: relations follow from foreign keys; "+
				"add one with POST _schema/{table}/_related or with a field's ref_table and ref_field.", verb, strings.Join(rest, "/"), b.name)
		}
		return apierr.BadRequest("%s requests for resource '_schema/%s' are not currently supported by the '%s' service.", verb, strings.Join(rest, "/"), b.name)
	}
	return apierr.MethodNotAllowed(verb)
}

// readOptions reads the query options and the body.
func (q *schemaReq) readOptions() error {
	v := q.r.URL.Query()
	q.fields = v.Get("fields")
	if q.fields == "" {
		q.fields = v.Get("select")
	}
	q.fields = strings.TrimSpace(q.fields)
	if ids, ok := v["ids"]; ok && len(ids) > 0 {
		q.idsGiven = true
		q.ids = splitNames(ids[len(ids)-1])
	}
	var err error
	if q.checkExist, err = boolean("check_exist", v.Get("check_exist")); err != nil {
		return apierr.BadRequest("%s.", err.Error())
	}
	if q.r.Body != nil && q.r.Body != http.NoBody {
		if q.body, err = io.ReadAll(q.r.Body); err != nil {
			return apierr.As(err)
		}
	}
	return nil
}

func splitNames(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// table finds a table of the request's schema; a table created since the
// cache was read is found by reading it again (at most once per
// schemaRetryAge).
func (q *schemaReq) table(ctx context.Context, name string) (*dialects.Table, error) {
	if t := q.s.Table(name); t != nil {
		return t, nil
	}
	s, err := q.b.loadSchema(ctx, q.db, schemaRetryAge)
	if err != nil {
		return nil, err
	}
	q.s = s
	if t := s.Table(name); t != nil {
		return t, nil
	}
	return nil, apierr.NotFound("Table \"%s\" does not exist in the database.", name)
}

func (q *schemaReq) serviceID() int64 {
	if q.svc == nil {
		return 0
	}
	return q.svc.ID
}

// get answers the GET requests.
func (q *schemaReq) get(ctx context.Context, rest []string) error {
	switch len(rest) {
	case 0:
		if q.idsGiven {
			out := make([]any, 0, len(q.ids))
			for _, name := range q.ids {
				t, err := q.table(ctx, name)
				if err != nil {
					return err
				}
				out = append(out, pick(q.describeTable(ctx, t), q.fields))
			}
			return writeJSON(q.w, map[string]any{"resource": out})
		}
		if q.fields == "" {
			return writeList(q.w, q.s.Names(), q.r)
		}
		out := make([]any, 0, len(q.s.Tables))
		for _, t := range q.s.Tables {
			out = append(out, pick(q.describeTable(ctx, t), q.fields))
		}
		return writeJSON(q.w, map[string]any{"resource": out})
	}
	t, err := q.table(ctx, rest[0])
	if err != nil {
		return err
	}
	switch {
	case len(rest) == 1:
		return writeJSON(q.w, pick(q.describeTable(ctx, t), q.fields))
	case rest[1] == "_field" && len(rest) == 2:
		out := make([]any, 0, len(t.Columns))
		for _, c := range t.Columns {
			if !q.idsGiven || containsFold(q.ids, c.Name) {
				out = append(out, pick(q.describeField(ctx, t.Name, c), q.fields))
			}
		}
		return writeJSON(q.w, map[string]any{"resource": out})
	case rest[1] == "_related" && len(rest) == 2:
		out := make([]any, 0, len(t.Relations))
		for i := range t.Relations {
			if !q.idsGiven || containsFold(q.ids, t.Relations[i].Name) {
				out = append(out, pick(describeRelation(&t.Relations[i], q.serviceID()), q.fields))
			}
		}
		return writeJSON(q.w, map[string]any{"resource": out})
	case rest[1] == "_related":
		rel := t.Relation(rest[2])
		if rel == nil {
			return apierr.NotFound("Relation '%s' not found in table '%s'.", rest[2], t.Name)
		}
		return writeJSON(q.w, pick(describeRelation(rel, q.serviceID()), q.fields))
	}
	name := rest[len(rest)-1] // _field/{f}, or the older {t}/{f}
	c := t.Column(name)
	if c == nil {
		return apierr.NotFound("Field '%s' not found in table '%s'.", name, t.Name)
	}
	return writeJSON(q.w, pick(q.describeField(ctx, t.Name, c), q.fields))
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// tables reads the body of a request on several tables.
func (q *schemaReq) tables() ([]*tableInput, error) {
	if len(bytes.TrimSpace(q.body)) == 0 {
		return nil, apierr.BadRequest("No data in schema create request.")
	}
	list, _, err := resourceList(q.body)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, apierr.BadRequest("No data in schema create request.")
	}
	out := make([]*tableInput, 0, len(list))
	seen := map[string]bool{}
	for i, v := range list {
		in, err := parseTableInput(v, fmt.Sprintf("Table %d", i))
		if err != nil {
			return nil, err
		}
		if key := strings.ToLower(in.name); seen[key] {
			return nil, apierr.BadRequest("Table '%s' is given twice.", in.name)
		} else {
			seen[key] = true
		}
		out = append(out, in)
	}
	return out, nil
}

// createOp plans the creation of a table.
func createOp(in *tableInput) (*schemaOp, error) {
	if len(in.fields) == 0 {
		return nil, apierr.BadRequest("No valid fields exist in the received table schema.")
	}
	spec := dialects.TableSpec{Name: in.name}
	var problems []string
	for _, f := range in.fields {
		fs, p := f.newSpec()
		problems = append(problems, p...)
		spec.Fields = append(spec.Fields, fs)
	}
	if len(problems) > 0 {
		return nil, invalidSchema(in.name, problems)
	}
	return &schemaOp{table: in.name, create: &spec, extras: extrasOf(in.fields)}, nil
}

// alterOp plans the changes of table t from field objects: listed fields
// that exist are altered (keys left out keep their settings; a field
// whose settings do not change is left alone), the others added (or, when
// mustExist, refused with 404); with replace, the fields not listed are
// dropped.
func alterOp(t *dialects.Table, fields []*fieldInput, replace, mustExist bool) (*schemaOp, error) {
	op := &schemaOp{table: t.Name, extras: extrasOf(fields)}
	listed := map[string]bool{}
	var problems []string
	for _, f := range fields {
		key := strings.ToLower(f.name)
		if listed[key] {
			problems = append(problems, fmt.Sprintf("field %q is given twice", f.name))
			continue
		}
		c := t.Column(f.name)
		if c == nil {
			if mustExist {
				return nil, apierr.NotFound("Field '%s' not found in table '%s'.", f.name, t.Name)
			}
			listed[key] = true
			spec, p := f.newSpec()
			problems = append(problems, p...)
			op.alter.Add = append(op.alter.Add, spec)
			continue
		}
		listed[strings.ToLower(c.Name)] = true
		spec, p, lost := f.mergeSpec(c)
		problems = append(problems, p...)
		if len(p) > 0 {
			continue
		}
		if cur, _ := columnSpec(c); sameSpec(cur, spec) {
			continue
		}
		if lost != "" {
			problems = append(problems, fmt.Sprintf("field %q: its default %s cannot be kept by this change; send default (a value or null) with it", c.Name, lost))
			continue
		}
		op.alter.Alter = append(op.alter.Alter, spec)
	}
	if replace {
		for _, c := range t.Columns {
			if !listed[strings.ToLower(c.Name)] {
				op.alter.Drop = append(op.alter.Drop, c.Name)
			}
		}
	}
	if len(problems) > 0 {
		return nil, invalidSchema(t.Name, problems)
	}
	return op, nil
}

func invalidSchema(table string, problems []string) error {
	return apierr.BadRequest("Table '%s': Invalid schema: %s.", table, strings.Join(problems, "; ")).WithContext(map[string]any{"problems": problems})
}

func tableExists(name string) error {
	return apierr.BadRequest("A table with name '%s' already exist in the database.", name)
}

// createTables answers POST _schema.
func (q *schemaReq) createTables(ctx context.Context) error {
	ins, err := q.tables()
	if err != nil {
		return err
	}
	ops := make([]*schemaOp, 0, len(ins))
	for _, in := range ins {
		if t := q.s.Table(in.name); t != nil {
			if !q.checkExist {
				return tableExists(t.Name)
			}
			op, err := alterOp(t, in.fields, false, false)
			if err != nil {
				return err
			}
			ops = append(ops, op)
			continue
		}
		op, err := createOp(in)
		if err != nil {
			return err
		}
		ops = append(ops, op)
	}
	return q.applyAndList(ctx, ops)
}

// updateTables answers PUT and PATCH _schema: existing tables are altered
// (PUT drops the fields not listed), missing ones created by PUT.
func (q *schemaReq) updateTables(ctx context.Context, replace bool) error {
	ins, err := q.tables()
	if err != nil {
		return err
	}
	ops := make([]*schemaOp, 0, len(ins))
	for _, in := range ins {
		t := q.s.Table(in.name)
		var op *schemaOp
		switch {
		case t != nil && replace && !in.hasFields:
			return apierr.BadRequest("Table '%s': a replacement needs its field list.", t.Name)
		case t != nil:
			op, err = alterOp(t, in.fields, replace, false)
		case replace:
			op, err = createOp(in)
		default:
			return apierr.NotFound("Table \"%s\" does not exist in the database.", in.name)
		}
		if err != nil {
			return err
		}
		ops = append(ops, op)
	}
	return q.applyAndList(ctx, ops)
}

// applyAndList makes the changes and lists the tables.
func (q *schemaReq) applyAndList(ctx context.Context, ops []*schemaOp) error {
	if err := q.b.applySchema(ctx, q.db, ops); err != nil {
		return err
	}
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.table
	}
	return q.listTables(ctx, names)
}

// listTables answers a change of tables: their names, or their objects
// with fields.
func (q *schemaReq) listTables(ctx context.Context, names []string) error {
	s, err := q.b.loadSchema(ctx, q.db, anyAge)
	if err != nil {
		return err
	}
	out := make([]any, 0, len(names))
	for _, n := range names {
		t := s.Table(n)
		switch {
		case t == nil:
			out = append(out, map[string]any{"name": n})
		case q.fields == "":
			out = append(out, map[string]any{"name": t.Name})
		default:
			out = append(out, pick(q.describeTable(ctx, t), q.fields))
		}
	}
	return writeJSON(q.w, map[string]any{"resource": out})
}

// oneTable answers a change of one table: its name, or its object with
// fields.
func (q *schemaReq) oneTable(ctx context.Context, name string) error {
	s, err := q.b.loadSchema(ctx, q.db, anyAge)
	if err != nil {
		return err
	}
	t := s.Table(name)
	if t == nil || q.fields == "" {
		if t != nil {
			name = t.Name
		}
		return writeJSON(q.w, map[string]any{"name": name})
	}
	return writeJSON(q.w, pick(q.describeTable(ctx, t), q.fields))
}

// tableBody reads the body of a request on one table: a table object
// (bare, or as the one member of resource) whose name, when given, must be
// the path's; or a list of field objects ({"resource":[…]} or […]), taken
// as the table's fields.
func (q *schemaReq) tableBody(name string) (*tableInput, error) {
	if len(bytes.TrimSpace(q.body)) == 0 {
		return nil, apierr.BadRequest("No data in schema update request.")
	}
	list, wrapper, err := resourceList(q.body)
	if err != nil {
		return nil, err
	}
	var table map[string]any
	if b := bytes.TrimSpace(q.body); b[0] == '{' {
		m, _ := list[0].(map[string]any)
		if _, hasField := m["field"]; len(list) == 1 && (wrapper == nil || hasField) {
			table = m
		}
	}
	if table == nil {
		in := &tableInput{name: name, hasFields: true}
		for i, v := range list {
			f, err := parseFieldInput(v, fmt.Sprintf("Field %d", i))
			if err != nil {
				return nil, err
			}
			in.fields = append(in.fields, f)
		}
		return in, nil
	}
	if _, named := table["name"]; !named {
		table["name"] = name
	}
	in, err := parseTableInput(table, "The table object")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(in.name, name) {
		return nil, apierr.BadRequest("The table object names '%s', not '%s'; tables cannot be renamed.", in.name, name)
	}
	in.name = name
	return in, nil
}

// createTable answers POST _schema/{t}.
func (q *schemaReq) createTable(ctx context.Context, name string) error {
	in, err := q.tableBody(name)
	if err != nil {
		return err
	}
	var op *schemaOp
	if t := q.s.Table(name); t != nil {
		if !q.checkExist {
			return tableExists(t.Name)
		}
		op, err = alterOp(t, in.fields, false, false)
	} else {
		op, err = createOp(in)
	}
	if err != nil {
		return err
	}
	if err := q.b.applySchema(ctx, q.db, []*schemaOp{op}); err != nil {
		return err
	}
	return q.oneTable(ctx, op.table)
}

// updateTable answers PUT (replace the field list) and PATCH (merge)
// _schema/{t}.
func (q *schemaReq) updateTable(ctx context.Context, name string, replace bool) error {
	t, err := q.table(ctx, name)
	if err != nil {
		return err
	}
	in, err := q.tableBody(t.Name)
	if err != nil {
		return err
	}
	if replace && !in.hasFields {
		return apierr.BadRequest("Table '%s': a replacement needs its field list.", t.Name)
	}
	op, err := alterOp(t, in.fields, replace, false)
	if err != nil {
		return err
	}
	if err := q.b.applySchema(ctx, q.db, []*schemaOp{op}); err != nil {
		return err
	}
	return q.oneTable(ctx, t.Name)
}

// dropTable answers DELETE _schema/{t}.
func (q *schemaReq) dropTable(ctx context.Context, name string) error {
	t, err := q.table(ctx, name)
	if err != nil {
		return err
	}
	if err := q.b.applySchema(ctx, q.db, []*schemaOp{{table: t.Name, drop: true}}); err != nil {
		return err
	}
	return writeJSON(q.w, map[string]any{"success": true})
}

// names reads the names a delete names: ids, or the body's list of names
// or objects with a name.
func (q *schemaReq) names(what string) ([]string, error) {
	if q.idsGiven {
		return q.ids, nil
	}
	if len(bytes.TrimSpace(q.body)) == 0 {
		return nil, apierr.BadRequest("No %s named for delete request: give ids or a list of names.", what)
	}
	list, _, err := resourceList(q.body)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, v := range list {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			if n, ok := v["name"].(string); ok && n != "" {
				out = append(out, n)
				continue
			}
			return nil, apierr.BadRequest("Entry %d has no name.", i)
		default:
			return nil, apierr.BadRequest("Entry %d is neither a name nor an object with a name.", i)
		}
	}
	if len(out) == 0 {
		return nil, apierr.BadRequest("No %s named for delete request: give ids or a list of names.", what)
	}
	return out, nil
}

// dropTables answers DELETE _schema (ids or a body of names): all or none.
func (q *schemaReq) dropTables(ctx context.Context) error {
	names, err := q.names("tables")
	if err != nil {
		return err
	}
	var tables []*dialects.Table
	in := map[*dialects.Table]bool{}
	for _, n := range names {
		t, err := q.table(ctx, n)
		if err != nil {
			return err
		}
		if !in[t] {
			in[t] = true
			tables = append(tables, t)
		}
	}
	// A table may go only with every table that references it.
	for _, t := range tables {
		for _, other := range q.s.Tables {
			if in[other] {
				continue
			}
			for _, fk := range other.ForeignKeys {
				if q.s.Table(fk.RefTable) == t {
					return apierr.Conflict("Table '%s' is referenced by foreign key '%s' of table '%s'.", t.Name, fk.Name, other.Name)
				}
			}
		}
	}
	out := make([]map[string]string, len(tables))
	for i, t := range tables {
		out[i] = map[string]string{"name": t.Name}
	}
	ordered := orderDrops(q.s, tables)
	ops := make([]*schemaOp, len(ordered))
	for i, t := range ordered {
		ops[i] = &schemaOp{table: t.Name, drop: true}
	}
	if err := q.b.applySchema(ctx, q.db, ops); err != nil {
		return err
	}
	return writeJSON(q.w, map[string]any{"resource": out})
}

// writeFields answers POST (add), PUT (add or alter) and PATCH (alter) on
// _schema/{t}/_field, or on _schema/{t}/_field/{f} when one is named.
func (q *schemaReq) writeFields(ctx context.Context, table, one string) error {
	t, err := q.table(ctx, table)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(q.body)) == 0 {
		return apierr.BadRequest("No data in schema update request.")
	}
	list, _, err := resourceList(q.body)
	if err != nil {
		return err
	}
	var fields []*fieldInput
	if one != "" {
		if len(list) != 1 {
			return apierr.BadRequest("The request body must be one field object.")
		}
		m, ok := list[0].(map[string]any)
		if !ok {
			return apierr.BadRequest("The request body must be a field object.")
		}
		if n, named := m["name"].(string); named && !strings.EqualFold(n, one) {
			return apierr.BadRequest("The field object names '%s', not '%s'; fields cannot be renamed.", n, one)
		}
		m["name"] = one
		list = []any{m}
	}
	if len(list) == 0 {
		return apierr.BadRequest("No data in schema update request.")
	}
	for i, v := range list {
		f, err := parseFieldInput(v, fmt.Sprintf("Field %d", i))
		if err != nil {
			return err
		}
		fields = append(fields, f)
	}
	var op *schemaOp
	switch q.verb {
	case http.MethodPost:
		for _, f := range fields {
			if c := t.Column(f.name); c != nil {
				return apierr.BadRequest("Field '%s' already exists in table '%s'.", c.Name, t.Name)
			}
		}
		op, err = alterOp(t, fields, false, false)
	case http.MethodPut:
		op, err = alterOp(t, fields, false, one != "")
	default:
		op, err = alterOp(t, fields, false, true)
	}
	if err != nil {
		return err
	}
	if err := q.b.applySchema(ctx, q.db, []*schemaOp{op}); err != nil {
		return err
	}
	s, err := q.b.loadSchema(ctx, q.db, anyAge)
	if err != nil {
		return err
	}
	nt := s.Table(t.Name)
	result := func(f *fieldInput) any {
		var c *dialects.Column
		if nt != nil {
			c = nt.Column(f.name)
		}
		switch {
		case c == nil:
			return map[string]any{"name": f.name}
		case q.fields == "":
			return map[string]any{"name": c.Name}
		}
		return pick(q.describeField(ctx, t.Name, c), q.fields)
	}
	if one != "" {
		return writeJSON(q.w, result(fields[0]))
	}
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = result(f)
	}
	return writeJSON(q.w, map[string]any{"resource": out})
}

// dropFields answers DELETE on _schema/{t}/_field (ids or a body of
// names) and _schema/{t}/_field/{f}.
func (q *schemaReq) dropFields(ctx context.Context, table string, names []string) error {
	t, err := q.table(ctx, table)
	if err != nil {
		return err
	}
	single := names != nil
	if !single {
		if names, err = q.names("fields"); err != nil {
			return err
		}
	}
	op := &schemaOp{table: t.Name}
	var out []map[string]string
	for _, n := range names {
		c := t.Column(n)
		if c == nil {
			return apierr.NotFound("Field '%s' not found in table '%s'.", n, t.Name)
		}
		if !containsFold(op.alter.Drop, c.Name) {
			op.alter.Drop = append(op.alter.Drop, c.Name)
			out = append(out, map[string]string{"name": c.Name})
		}
	}
	if err := q.b.applySchema(ctx, q.db, []*schemaOp{op}); err != nil {
		return err
	}
	if single {
		return writeJSON(q.w, map[string]any{"success": true})
	}
	return writeJSON(q.w, map[string]any{"resource": out})
}

// refFields is a relation's ref_field, or its synonym ref_fields.
func refFields(str func(string) string) string {
	if v := str("ref_field"); v != "" {
		return v
	}
	return str("ref_fields")
}

// addRelations answers POST _schema/{t}/_related: each belongs_to
// relation becomes a foreign key of t ({type, field, ref_table,
// ref_field, ref_on_delete, ref_on_update}; several fields separated by
// commas). The other relation types follow from the keys of other tables;
// virtual relations are not supported.
func (q *schemaReq) addRelations(ctx context.Context, table string) error {
	t, err := q.table(ctx, table)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(q.body)) == 0 {
		return apierr.BadRequest("No data in relation create request.")
	}
	list, _, err := resourceList(q.body)
	if err != nil {
		return err
	}
	op := &schemaOp{table: t.Name}
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			return apierr.BadRequest("Relation %d is not an object.", i)
		}
		str := func(k string) string { s, _ := m[k].(string); return strings.TrimSpace(s) }
		if virtual, _ := boolean("is_virtual", m["is_virtual"]); virtual {
			return apierr.BadRequest("Relation %d: virtual relations are not supported; relations follow from foreign keys.", i)
		}
		if typ := str("type"); typ != "" && !strings.EqualFold(typ, string(dialects.BelongsTo)) {
			return apierr.BadRequest("Relation %d: only belongs_to relations can be created here (as a foreign key of '%s'); a %s relation follows from a foreign key of the other table.", i, t.Name, typ)
		}
		fk := dialects.ForeignKey{
			Columns: splitNames(str("field")), RefTable: str("ref_table"), RefColumns: splitNames(refFields(str)),
			OnDelete: str("ref_on_delete"), OnUpdate: str("ref_on_update"),
		}
		if len(fk.Columns) == 0 || fk.RefTable == "" || len(fk.RefColumns) == 0 {
			return apierr.BadRequest("Relation %d needs field, ref_table and ref_field.", i)
		}
		op.fks = append(op.fks, fk)
	}
	if len(op.fks) == 0 {
		return apierr.BadRequest("No data in relation create request.")
	}
	if err := q.b.applySchema(ctx, q.db, []*schemaOp{op}); err != nil {
		return err
	}
	s, err := q.b.loadSchema(ctx, q.db, anyAge)
	if err != nil {
		return err
	}
	nt := s.Table(t.Name)
	out := make([]any, 0, len(op.fks))
	for _, fk := range op.fks {
		name := fk.RefTable + "_by_" + strings.Join(fk.Columns, "_")
		var rel *dialects.Relation
		if nt != nil {
			rel = nt.Relation(name)
		}
		switch {
		case rel == nil:
			out = append(out, map[string]any{"name": name})
		case q.fields == "":
			out = append(out, map[string]any{"name": rel.Name})
		default:
			out = append(out, pick(describeRelation(rel, q.serviceID()), q.fields))
		}
	}
	return writeJSON(q.w, map[string]any{"resource": out})
}
