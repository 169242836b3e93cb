package system

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// access says what a client may do with a field.
type access uint8

const (
	// readOnly fields are returned and never written by clients (ids,
	// audit columns, computed values).
	readOnly access = iota
	// readWrite fields are returned and accepted on create and update.
	readWrite
	// writeOnly fields are accepted and never returned (passwords).
	writeOnly
	// createOnly fields are returned and accepted on create only (the key
	// of name-keyed records).
	createOnly
)

// field is one member of a system record as the API shows it.
type field struct {
	// name is the JSON member name.
	name string
	// column is the database column ("" for a computed field).
	column string
	// kind is how the filter language treats the column.
	kind filter.Kind
	// access says whether it is returned and accepted.
	access access
	// index is the Go struct field holding the column.
	index []int
	// encode renders the Go value for output; nil returns it as is.
	encode func(v reflect.Value) (any, error)
	// decode stores a client value; nil uses decodeValue.
	decode func(raw json.RawMessage, v reflect.Value) error
	// compute renders a computed field from the whole record.
	compute func(rec reflect.Value) any
}

func (f *field) readable() bool { return f.access != writeOnly }

func (f *field) writable(create bool) bool {
	return f.access == readWrite || f.access == writeOnly || create && f.access == createOnly
}

// filterable reports whether the field may appear in filter and order.
func (f *field) filterable() bool { return f.column != "" && f.readable() && f.compute == nil }

// fieldOpt adjusts a field definition.
type fieldOpt func(*field)

// col declares a field backed by a column of the same name.
func col(name string, kind filter.Kind, acc access, opts ...fieldOpt) *field {
	f := &field{name: name, column: name, kind: kind, access: acc}
	for _, o := range opts {
		o(f)
	}
	return f
}

// computed declares a read-only field computed from the record.
func computed(name string, fn func(rec reflect.Value) any) *field {
	return &field{name: name, access: readOnly, compute: fn}
}

// withCodec sets a field's encoder and decoder.
func withCodec(enc func(v reflect.Value) (any, error), dec func(raw json.RawMessage, v reflect.Value) error) fieldOpt {
	return func(f *field) {
		f.encode, f.decode = enc, dec
	}
}

// auditFields are the four audit columns every system table has.
func auditFields() []*field {
	return []*field{
		col("created_date", filter.KindTime, readOnly),
		col("last_modified_date", filter.KindTime, readOnly),
		col("created_by_id", filter.KindInteger, readOnly),
		col("last_modified_by_id", filter.KindInteger, readOnly),
	}
}

// columnIndex maps each bun column of struct type t (embedded structs
// included) to its field index.
func columnIndex(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			idx := append(append([]int(nil), prefix...), i)
			tag, ok := sf.Tag.Lookup("bun")
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct && (!ok || tag == "") {
				walk(sf.Type, idx)
				continue
			}
			if !ok || !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" || strings.HasPrefix(name, "table:") || strings.HasPrefix(tag, "rel:") {
				continue
			}
			out[name] = idx
		}
	}
	walk(t, nil)
	return out
}

// bindFields resolves each field's struct index for model type t. A
// column missing from the model is a programming error.
func bindFields(t reflect.Type, fs []*field) {
	idx := columnIndex(t)
	for _, f := range fs {
		if f.column == "" {
			continue
		}
		i, ok := idx[f.column]
		if !ok {
			panic(fmt.Sprintf("system: model %s has no column %s", t.Name(), f.column))
		}
		f.index = i
	}
}
