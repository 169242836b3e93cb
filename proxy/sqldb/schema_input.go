package sqldb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Reading the table and field objects of schema requests. Field keys are
// DreamFactory's (7.3 of the reference): name, type, length (or size),
// precision, scale, default, allow_null, is_unique, is_index,
// is_primary_key, auto_increment, ref_table, ref_field (or ref_fields),
// ref_on_delete, ref_on_update. db_type is read only to derive a simple
// type when type is missing; the native type always comes from the
// dialect's fixed table. label, validation and picklist are kept in the
// system store and returned with the field (extras.go); the other keys
// DreamFactory keeps in its own tables (description, alias, …) are
// accepted and ignored, so that an object read with GET can be sent back.

// tableInput is a table object of a request.
type tableInput struct {
	name      string
	fields    []*fieldInput
	hasFields bool
}

// fieldInput is a field object of a request: its keys as sent, lowercased.
type fieldInput struct {
	name string
	keys map[string]any
}

// parseTableInput reads a table object.
func parseTableInput(v any, where string) (*tableInput, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.BadRequest("%s must be a table object.", where)
	}
	in := &tableInput{}
	for k, val := range m {
		switch strings.ToLower(k) {
		case "name":
			s, ok := val.(string)
			if !ok {
				return nil, apierr.BadRequest("%s: name must be a string.", where)
			}
			in.name = strings.TrimSpace(s)
		case "field":
			list, ok := val.([]any)
			if !ok && val != nil {
				return nil, apierr.BadRequest("%s: field must be an array of field objects.", where)
			}
			in.hasFields = val != nil
			for i, f := range list {
				fi, err := parseFieldInput(f, fmt.Sprintf("%s: field %d", where, i))
				if err != nil {
					return nil, err
				}
				in.fields = append(in.fields, fi)
			}
		}
	}
	if in.name == "" {
		return nil, apierr.BadRequest("%s has no name.", where)
	}
	return in, nil
}

// parseFieldInput reads a field object.
func parseFieldInput(v any, where string) (*fieldInput, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.BadRequest("%s must be a field object.", where)
	}
	f := &fieldInput{keys: make(map[string]any, len(m))}
	for k, val := range m {
		f.keys[strings.ToLower(k)] = val
	}
	name, ok := f.keys["name"].(string)
	if !ok || strings.TrimSpace(name) == "" {
		return nil, apierr.BadRequest("%s has no name.", where)
	}
	f.name = name
	return f, nil
}

// fieldReader reads the keys of one field, collecting problems.
type fieldReader struct {
	f        *fieldInput
	problems []string
}

func (r *fieldReader) addf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf("field %q: ", r.f.name)+fmt.Sprintf(format, args...))
}

// given reports whether key was sent with a value other than null.
func (r *fieldReader) given(key string) bool {
	v, ok := r.f.keys[key]
	return ok && v != nil
}

func (r *fieldReader) str(key string, dst *string) {
	v, ok := r.f.keys[key]
	if !ok || v == nil {
		return
	}
	s, ok := v.(string)
	if !ok {
		r.addf("%s must be a string", key)
		return
	}
	*dst = strings.TrimSpace(s)
}

func (r *fieldReader) integer(key string, dst *int) {
	v, ok := r.f.keys[key]
	if !ok || v == nil {
		return
	}
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = strings.TrimSpace(v)
	default:
		r.addf("%s must be an integer", key)
		return
	}
	if s == "" {
		return
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<30 {
		r.addf("%s must be a non-negative integer", key)
		return
	}
	*dst = n
}

func (r *fieldReader) boolean(key string, dst *bool) {
	v, ok := r.f.keys[key]
	if !ok || v == nil {
		return
	}
	b, err := boolean(key, v)
	if err != nil {
		r.addf("%s must be true or false", key)
		return
	}
	*dst = b
}

// readDefault reads default: null removes it; strings, numbers and
// booleans are its text.
func (r *fieldReader) readDefault(dst **string) {
	v, ok := r.f.keys["default"]
	if !ok {
		return
	}
	switch v := v.(type) {
	case nil:
		*dst = nil
	case string:
		*dst = &v
	case json.Number:
		s := v.String()
		*dst = &s
	case bool:
		s := strconv.FormatBool(v)
		*dst = &s
	default:
		r.addf("default must be a string, a number, a boolean or null")
	}
}

// common applies the keys every field object may have.
func (r *fieldReader) common(spec *dialects.FieldSpec) {
	if r.given("length") {
		r.integer("length", &spec.Length)
	} else {
		r.integer("size", &spec.Length) // DreamFactory reads size as the length
	}
	r.integer("precision", &spec.Precision)
	r.integer("scale", &spec.Scale)
	r.readDefault(&spec.Default)
	r.boolean("allow_null", &spec.AllowNull)
	r.boolean("is_unique", &spec.IsUnique)
	r.boolean("is_index", &spec.IsIndex)
	r.boolean("is_primary_key", &spec.IsPrimaryKey)
	r.boolean("auto_increment", &spec.AutoIncrement)
	r.str("ref_on_delete", &spec.RefOnDelete)
	r.str("ref_on_update", &spec.RefOnUpdate)
	var virtual bool
	r.boolean("is_virtual", &virtual)
	if virtual {
		r.addf("virtual fields are not supported")
	}
}

// newSpec builds the spec of a field to create. DreamFactory's defaults
// apply: fields allow null unless they are keys or say otherwise.
func (f *fieldInput) newSpec() (dialects.FieldSpec, []string) {
	r := &fieldReader{f: f}
	spec := dialects.FieldSpec{Name: f.name, AllowNull: true}
	var typ, dbType string
	r.str("type", &typ)
	r.str("db_type", &dbType)
	switch {
	case typ != "":
		spec.Type = dialects.FieldType(typ)
	case dbType != "":
		// Only its simple type and sizes are used.
		spec.Type = dialects.SimpleType(dbType)
		spec.Length, spec.Precision, spec.Scale = dialects.TypeSize(spec.Type, dbType)
	default:
		r.addf("type is required")
	}
	r.common(&spec)
	r.str("ref_table", &spec.RefTable)
	r.refField(&spec.RefField)
	return spec, r.problems
}

// refField reads ref_field, or its synonym ref_fields (DreamFactory reads
// both; the admin UI sends ref_fields).
func (r *fieldReader) refField(dst *string) {
	if r.given("ref_field") {
		r.str("ref_field", dst)
		return
	}
	r.str("ref_fields", dst)
}

// mergeSpec builds the new spec of the existing column c from the keys
// sent: keys left out keep the column's settings. A type equal to the one
// the API reports for c is no change (an id column of bigint stays
// bigint). Foreign keys, unique constraints and indexes are added, never
// removed. lost is the default expression of c that the spec cannot hold
// when the request did not send a default of its own; the caller refuses
// a change that would drop it.
func (f *fieldInput) mergeSpec(c *dialects.Column) (spec dialects.FieldSpec, problems []string, lost string) {
	r := &fieldReader{f: f}
	spec, lost = columnSpec(c)
	if _, sent := f.keys["default"]; sent {
		lost = ""
	}
	var typ string
	r.str("type", &typ)
	if typ != "" && !strings.EqualFold(typ, apiType(c.Type)) && !strings.EqualFold(typ, string(c.Type)) {
		t, err := dialects.ParseFieldType(typ)
		switch {
		case err != nil:
			r.addf("%v", err)
		case t != spec.Type:
			spec.Type = t
			if t == dialects.TypeID || t == dialects.TypeBigID {
				spec.IsPrimaryKey, spec.AutoIncrement = true, true
			}
		}
	}
	r.common(&spec)
	if !c.IsForeignKey {
		r.str("ref_table", &spec.RefTable)
		r.refField(&spec.RefField)
	}
	return spec, r.problems, lost
}

// columnSpec is the spec of c as it is. An id or reference column is given
// its stored integer type (so a change keeps its size) with its key and
// reference; a default that is an expression other than CURRENT_TIMESTAMP
// cannot be written back and is returned as lost.
func columnSpec(c *dialects.Column) (spec dialects.FieldSpec, lost string) {
	spec = dialects.FieldSpec{
		Name: c.Name, Type: c.Type, Length: c.Length, Precision: c.Precision, Scale: c.Scale,
		AllowNull: c.AllowNull, IsUnique: c.IsUnique, IsIndex: c.IsIndex,
		IsPrimaryKey: c.IsPrimaryKey, AutoIncrement: c.AutoIncrement,
		RefTable: c.RefTable, RefField: c.RefField, RefOnDelete: c.RefOnDelete, RefOnUpdate: c.RefOnUpdate,
	}
	if c.Type == dialects.TypeID || c.Type == dialects.TypeReference {
		spec.Type = dialects.SimpleType(c.DBType)
	}
	if c.Default != nil {
		v := *c.Default
		switch {
		case !c.DefaultIsExpr:
			spec.Default = &v
		case strings.EqualFold(v, "CURRENT_TIMESTAMP") && c.Type.IsTemporal() && c.Type != dialects.TypeDate && c.Type != dialects.TypeTime && c.Type != dialects.TypeTimeTZ:
			spec.Default = &v
		default:
			lost = v
		}
	}
	return spec, lost
}

// sameSpec reports whether two field specs describe the same column once
// normalized (the change would do nothing).
func sameSpec(a, b dialects.FieldSpec) bool {
	na, err1 := a.Normalize()
	nb, err2 := b.Normalize()
	if err1 != nil || err2 != nil {
		return false
	}
	da, db := na.Default, nb.Default
	na.Default, nb.Default = nil, nil
	if (da == nil) != (db == nil) || da != nil && *da != *db {
		return false
	}
	na.Name, nb.Name = strings.ToLower(na.Name), strings.ToLower(nb.Name)
	na.RefTable, nb.RefTable = strings.ToLower(na.RefTable), strings.ToLower(nb.RefTable)
	na.RefField, nb.RefField = strings.ToLower(na.RefField), strings.ToLower(nb.RefField)
	return na == nb
}

// resourceList reads the body of a request on several objects:
// {"resource":[…]}, a bare array, or a bare object (one). It returns the
// other members of a wrapped body too.
func resourceList(data []byte) ([]any, map[string]any, error) {
	var v any
	if err := apierr.Unmarshal(data, &v, false); err != nil {
		return nil, nil, err
	}
	switch v := v.(type) {
	case []any:
		return v, nil, nil
	case map[string]any:
		res, wrapped := v["resource"]
		if !wrapped {
			return []any{v}, nil, nil
		}
		switch res := res.(type) {
		case []any:
			return res, v, nil
		case map[string]any:
			return []any{res}, v, nil
		}
		return nil, nil, apierr.BadRequest("The 'resource' member must be an array.")
	}
	return nil, nil, apierr.BadRequest("The request body must be a JSON object or array.")
}
