package contract

import (
	"slices"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Severity ranks a change by what it can do to a client.
type Severity string

// The severities, from worst to mildest.
const (
	Breaking            Severity = "breaking"
	PotentiallyBreaking Severity = "potentially_breaking"
	Additive            Severity = "additive"
	Cosmetic            Severity = "cosmetic"
)

// The kinds of change, as DreamFactory names them.
const (
	KindTableRemoved            = "table.removed"
	KindTableTypeChanged        = "table.type_changed"
	KindTableLabelChanged       = "table.label_changed"
	KindTableDescriptionChanged = "table.description_changed"

	KindFieldAdded               = "field.added"
	KindFieldRemoved             = "field.removed"
	KindFieldTypeChanged         = "field.type_changed"
	KindFieldElementTypeChanged  = "field.element_type_changed"
	KindFieldNullableRelaxed     = "field.nullable_relaxed"
	KindFieldNullableTightened   = "field.nullable_tightened"
	KindFieldLengthIncreased     = "field.length_increased"
	KindFieldLengthReduced       = "field.length_reduced"
	KindFieldPrecisionIncreased  = "field.precision_increased"
	KindFieldPrecisionReduced    = "field.precision_reduced"
	KindFieldScaleIncreased      = "field.scale_increased"
	KindFieldScaleReduced        = "field.scale_reduced"
	KindFieldDefaultChanged      = "field.default_changed"
	KindFieldDefaultRemoved      = "field.default_removed"
	KindFieldRequiredAdded       = "field.required_added"
	KindFieldRequiredRemoved     = "field.required_removed"
	KindFieldAutoIncrementAdded  = "field.auto_increment_added"
	KindFieldAutoIncrementRemove = "field.auto_increment_removed"
	KindFieldReadOnlyAdded       = "field.read_only_added"
	KindFieldReadOnlyRemoved     = "field.read_only_removed"
	KindFieldGeneratedChanged    = "field.generated_changed"
	KindFieldUniqueAdded         = "field.unique_added"
	KindFieldUniqueRemoved       = "field.unique_removed"
	KindFieldForeignKeyChanged   = "field.foreign_key_changed"
	KindFieldRefChanged          = "field.ref_changed"
	KindFieldEnumValueAdded      = "field.enum_value_added"
	KindFieldEnumValueRemoved    = "field.enum_value_removed"
	KindFieldValidationChanged   = "field.validation_changed"
	KindFieldLabelChanged        = "field.label_changed"
	KindFieldDescriptionChanged  = "field.description_changed"

	KindPrimaryKeyChanged = "primary_key.changed"

	KindRelationshipAdded         = "relationship.added"
	KindRelationshipRemoved       = "relationship.removed"
	KindRelationshipTypeChanged   = "relationship.type_changed"
	KindRelationshipTargetChanged = "relationship.target_changed"
	KindRelationshipLabelChanged  = "relationship.label_changed"
)

// Change is one drift item.
type Change struct {
	Severity Severity       `json:"severity"`
	Kind     string         `json:"kind"`
	Path     string         `json:"path"`
	Table    string         `json:"table"`
	Detail   map[string]any `json:"detail"`
}

// Summary counts changes by severity.
type Summary struct {
	BreakingCount            int `json:"breaking_count"`
	PotentiallyBreakingCount int `json:"potentially_breaking_count"`
	AdditiveCount            int `json:"additive_count"`
	CosmeticCount            int `json:"cosmetic_count"`
	TotalChanges             int `json:"total_changes"`
}

// Add counts s into the summary.
func (s *Summary) Add(o Summary) {
	s.BreakingCount += o.BreakingCount
	s.PotentiallyBreakingCount += o.PotentiallyBreakingCount
	s.AdditiveCount += o.AdditiveCount
	s.CosmeticCount += o.CosmeticCount
	s.TotalChanges += o.TotalChanges
}

// Report is the drift of one table.
type Report struct {
	HasDrift    bool     `json:"has_drift"`
	HasBreaking bool     `json:"has_breaking"`
	Summary     Summary  `json:"summary"`
	Changes     []Change `json:"changes"`
}

// NewReport wraps changes in a report with its counts.
func NewReport(changes []Change) Report {
	r := Report{Changes: changes}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	for _, c := range changes {
		switch c.Severity {
		case Breaking:
			r.Summary.BreakingCount++
		case PotentiallyBreaking:
			r.Summary.PotentiallyBreakingCount++
		case Additive:
			r.Summary.AdditiveCount++
		case Cosmetic:
			r.Summary.CosmeticCount++
		}
	}
	r.Summary.TotalChanges = len(changes)
	r.HasDrift = len(changes) > 0
	r.HasBreaking = r.Summary.BreakingCount > 0
	return r
}

// OnlyAdditive reports whether every change is additive or cosmetic.
func (r Report) OnlyAdditive() bool {
	return r.Summary.BreakingCount == 0 && r.Summary.PotentiallyBreakingCount == 0
}

// compareOptions make go-cmp see fields and relationships as maps keyed by
// name (order does not matter, renames are a removal and an addition) and
// skip what no rule looks at: engine details, aliases, index flags and the
// index list.
var compareOptions = []cmp.Option{
	// The transformers apply unless both lists are empty, where
	// EquateEmpty alone decides (two options on one value make go-cmp
	// panic).
	cmp.FilterValues(func(x, y []Field) bool { return len(x) > 0 || len(y) > 0 },
		cmp.Transformer("fieldsByName", func(fs []Field) map[string]Field {
			m := make(map[string]Field, len(fs))
			for _, f := range fs {
				m[f.Name] = f
			}
			return m
		})),
	cmp.FilterValues(func(x, y []Relationship) bool { return len(x) > 0 || len(y) > 0 },
		cmp.Transformer("relationshipsByName", func(rs []Relationship) map[string]Relationship {
			m := make(map[string]Relationship, len(rs))
			for _, r := range rs {
				m[r.Name] = r
			}
			return m
		})),
	cmpopts.IgnoreFields(Table{}, "Name", "Catalog", "Schema", "Indexes", "OpenAPI", "Native"),
	cmpopts.IgnoreFields(Field{}, "Name", "Alias", "DBType", "NativeType", "IsPrimaryKey", "IsIndex", "OpenAPI", "Native"),
	cmpopts.IgnoreFields(Relationship{}, "Name", "Alias", "Field", "IsVirtual", "AlwaysFetch", "Native"),
	cmpopts.EquateEmpty(),
}

// difference is one place where go-cmp found the shapes differ: the
// table's attribute, and for fields and relationships the member's name
// and attribute ("" when the member is on one side only).
type difference struct {
	top, member, attr string
	inOld, inNew      bool
}

// reporter collects go-cmp's differences as [difference]s.
type reporter struct {
	path  cmp.Path
	diffs []difference
}

func (r *reporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *reporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *reporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	var d difference
	d.inOld, d.inNew = true, true
	for _, step := range r.path {
		switch s := step.(type) {
		case cmp.StructField:
			switch {
			case d.top == "":
				d.top = s.Name()
			case d.member != "" && d.attr == "":
				d.attr = s.Name()
			}
		case cmp.MapIndex:
			if d.member == "" && (d.top == "Fields" || d.top == "Relationships") {
				d.member = s.Key().String()
				vx, vy := s.Values()
				d.inOld, d.inNew = vx.IsValid(), vy.IsValid()
			}
		}
	}
	r.diffs = append(r.diffs, d)
}

// Diff classifies every change from the locked shape old to the live shape
// cur; cur nil means the table is gone. Changes come in a fixed order:
// the table's own attributes, fields added (live order), fields removed
// and changed (locked order, attributes in rule order), the primary key,
// relationships added, removed and changed.
func Diff(old, cur *Table) Report {
	if cur == nil {
		return NewReport([]Change{{Severity: Breaking, Kind: KindTableRemoved, Path: old.Name, Table: old.Name,
			Detail: map[string]any{"old_table": old}}})
	}
	var rep reporter
	cmp.Equal(old, cur, append(slices.Clone(compareOptions), cmp.Reporter(&rep))...)

	tableAttrs := map[string]bool{}
	fieldAttrs := map[string]map[string]bool{}
	relAttrs := map[string]map[string]bool{}
	addedFields, removedFields := map[string]bool{}, map[string]bool{}
	addedRels, removedRels := map[string]bool{}, map[string]bool{}
	for _, d := range rep.diffs {
		switch d.top {
		case "Fields":
			switch {
			case !d.inOld:
				addedFields[d.member] = true
			case !d.inNew:
				removedFields[d.member] = true
			default:
				if fieldAttrs[d.member] == nil {
					fieldAttrs[d.member] = map[string]bool{}
				}
				fieldAttrs[d.member][d.attr] = true
			}
		case "Relationships":
			switch {
			case !d.inOld:
				addedRels[d.member] = true
			case !d.inNew:
				removedRels[d.member] = true
			default:
				if relAttrs[d.member] == nil {
					relAttrs[d.member] = map[string]bool{}
				}
				relAttrs[d.member][d.attr] = true
			}
		default:
			tableAttrs[d.top] = true
		}
	}

	name := cur.Name
	var out []Change
	add := func(sev Severity, kind, path string, detail map[string]any) {
		out = append(out, Change{Severity: sev, Kind: kind, Path: path, Table: name, Detail: detail})
	}
	if tableAttrs["Type"] {
		add(Breaking, KindTableTypeChanged, name, fromTo(old.Type, cur.Type))
	}
	if tableAttrs["Label"] {
		add(Cosmetic, KindTableLabelChanged, name, fromTo(old.Label, cur.Label))
	}
	if tableAttrs["Description"] {
		add(Cosmetic, KindTableDescriptionChanged, name, fromTo(old.Description, cur.Description))
	}
	for _, f := range cur.Fields {
		if addedFields[f.Name] {
			add(Additive, KindFieldAdded, name+"."+f.Name, map[string]any{"new_field": f})
		}
	}
	for _, f := range old.Fields {
		if removedFields[f.Name] {
			add(Breaking, KindFieldRemoved, name+"."+f.Name, map[string]any{"old_field": f})
		}
	}
	for _, f := range old.Fields {
		attrs := fieldAttrs[f.Name]
		if len(attrs) == 0 {
			continue
		}
		nf := cur.Field(f.Name)
		for _, rule := range fieldRules {
			if attrs[rule.attr] {
				for _, c := range rule.classify(&f, nf) {
					add(c.Severity, c.Kind, name+"."+f.Name, c.Detail)
				}
			}
		}
	}
	if tableAttrs["PrimaryKey"] {
		add(Breaking, KindPrimaryKeyChanged, name+".primary_key",
			map[string]any{"from": nonNil(old.PrimaryKey), "to": nonNil(cur.PrimaryKey)})
	}
	for _, r := range cur.Relationships {
		if addedRels[r.Name] {
			add(Additive, KindRelationshipAdded, name+"."+r.Name, map[string]any{"new_relationship": r})
		}
	}
	for _, r := range old.Relationships {
		if removedRels[r.Name] {
			add(Breaking, KindRelationshipRemoved, name+"."+r.Name, map[string]any{"old_relationship": r})
		}
	}
	for _, r := range old.Relationships {
		attrs := relAttrs[r.Name]
		if len(attrs) == 0 {
			continue
		}
		nr := relationship(cur, r.Name)
		path := name + "." + r.Name
		if attrs["Type"] {
			add(Breaking, KindRelationshipTypeChanged, path, fromTo(r.Type, nr.Type))
		}
		if attrs["RefService"] || attrs["RefSchema"] || attrs["RefTable"] || attrs["RefField"] || attrs["Junction"] {
			add(Breaking, KindRelationshipTargetChanged, path, fromTo(target(&r), target(nr)))
		}
		if attrs["Label"] {
			add(Cosmetic, KindRelationshipLabelChanged, path, fromTo(r.Label, nr.Label))
		}
	}
	return NewReport(out)
}

func relationship(t *Table, name string) *Relationship {
	for i := range t.Relationships {
		if t.Relationships[i].Name == name {
			return &t.Relationships[i]
		}
	}
	return nil
}

// target is the part of a relationship that says where it leads.
func target(r *Relationship) map[string]any {
	return map[string]any{"ref_service": r.RefService, "ref_schema": r.RefSchema,
		"ref_table": r.RefTable, "ref_field": r.RefField, "junction": r.Junction}
}

func fromTo(from, to any) map[string]any { return map[string]any{"from": from, "to": to} }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// fieldRule classifies a change of one attribute of a field.
type fieldRule struct {
	attr     string
	classify func(old, cur *Field) []Change
}

func one(sev Severity, kind string, detail map[string]any) []Change {
	return []Change{{Severity: sev, Kind: kind, Detail: detail}}
}

// flag classifies a boolean attribute that went on or off.
func flag(get func(*Field) bool, onSev Severity, onKind string, offSev Severity, offKind string) func(old, cur *Field) []Change {
	return func(old, cur *Field) []Change {
		if get(cur) {
			return one(onSev, onKind, fromTo(false, true))
		}
		return one(offSev, offKind, fromTo(true, false))
	}
}

// size classifies a length, precision or scale: larger is additive,
// smaller potentially breaking, a missing size counting as 0.
func size(get func(*Field) *int, upKind, downKind string) func(old, cur *Field) []Change {
	return func(old, cur *Field) []Change {
		o, n := get(old), get(cur)
		on, nn := 0, 0
		if o != nil {
			on = *o
		}
		if n != nil {
			nn = *n
		}
		if nn > on {
			return one(Additive, upKind, fromTo(o, n))
		}
		return one(PotentiallyBreaking, downKind, fromTo(o, n))
	}
}

func stringLike(t string) bool { return t == TypeString || t == TypeText || t == TypeBinary }

// fieldRules is the severity table for a field present on both sides, in
// the order its changes are listed.
var fieldRules = []fieldRule{
	{"Type", func(o, n *Field) []Change { return one(Breaking, KindFieldTypeChanged, fromTo(o.Type, n.Type)) }},
	{"ElementType", func(o, n *Field) []Change {
		return one(Breaking, KindFieldElementTypeChanged, fromTo(o.ElementType, n.ElementType))
	}},
	{"AllowNull", flag(func(f *Field) bool { return f.AllowNull },
		Additive, KindFieldNullableRelaxed, Breaking, KindFieldNullableTightened)},
	{"Length", func(o, n *Field) []Change {
		if !stringLike(o.Type) || !stringLike(n.Type) {
			return nil
		}
		return size(func(f *Field) *int { return f.Length }, KindFieldLengthIncreased, KindFieldLengthReduced)(o, n)
	}},
	{"Precision", size(func(f *Field) *int { return f.Precision }, KindFieldPrecisionIncreased, KindFieldPrecisionReduced)},
	{"Scale", size(func(f *Field) *int { return f.Scale }, KindFieldScaleIncreased, KindFieldScaleReduced)},
	{"Default", func(o, n *Field) []Change {
		if o.Default != nil && n.Default == nil {
			return one(PotentiallyBreaking, KindFieldDefaultRemoved, fromTo(o.Default, nil))
		}
		return one(Additive, KindFieldDefaultChanged, fromTo(o.Default, n.Default))
	}},
	{"Required", flag(func(f *Field) bool { return f.Required },
		Breaking, KindFieldRequiredAdded, Additive, KindFieldRequiredRemoved)},
	{"AutoIncrement", flag(func(f *Field) bool { return f.AutoIncrement },
		Additive, KindFieldAutoIncrementAdded, Breaking, KindFieldAutoIncrementRemove)},
	{"ReadOnly", flag(func(f *Field) bool { return f.ReadOnly },
		Breaking, KindFieldReadOnlyAdded, Additive, KindFieldReadOnlyRemoved)},
	{"Generated", func(o, n *Field) []Change {
		return one(Breaking, KindFieldGeneratedChanged, fromTo(o.Generated, n.Generated))
	}},
	{"IsUnique", flag(func(f *Field) bool { return f.IsUnique },
		PotentiallyBreaking, KindFieldUniqueAdded, Additive, KindFieldUniqueRemoved)},
	{"IsForeignKey", func(o, n *Field) []Change {
		return one(Breaking, KindFieldForeignKeyChanged, fromTo(o.IsForeignKey, n.IsForeignKey))
	}},
	{"Ref", func(o, n *Field) []Change { return one(Breaking, KindFieldRefChanged, fromTo(o.Ref, n.Ref)) }},
	{"Enum", classifyEnum},
	{"Validation", func(o, n *Field) []Change {
		return one(PotentiallyBreaking, KindFieldValidationChanged, fromTo(o.Validation, n.Validation))
	}},
	{"Label", func(o, n *Field) []Change { return one(Cosmetic, KindFieldLabelChanged, fromTo(o.Label, n.Label)) }},
	{"Description", func(o, n *Field) []Change {
		return one(Cosmetic, KindFieldDescriptionChanged, fromTo(o.Description, n.Description))
	}},
}

// classifyEnum: a constraint added from none or removed entirely is
// additive; values added to a list are potentially breaking (clients
// validating against the list), values removed breaking.
func classifyEnum(o, n *Field) []Change {
	var ov, nv []string
	if o.Enum != nil {
		ov = o.Enum.Values
	}
	if n.Enum != nil {
		nv = n.Enum.Values
	}
	switch {
	case o.Enum == nil && n.Enum == nil:
		return nil
	case o.Enum == nil:
		return one(Additive, KindFieldEnumValueAdded, fromTo(nil, nonNil(nv)))
	case n.Enum == nil:
		return one(Additive, KindFieldEnumValueRemoved, fromTo(nonNil(ov), nil))
	}
	var added, removed []string
	for _, v := range nv {
		if !slices.Contains(ov, v) {
			added = append(added, v)
		}
	}
	for _, v := range ov {
		if !slices.Contains(nv, v) {
			removed = append(removed, v)
		}
	}
	var out []Change
	if len(added) > 0 {
		out = append(out, one(PotentiallyBreaking, KindFieldEnumValueAdded,
			map[string]any{"added": added, "from": nonNil(ov), "to": nonNil(nv)})...)
	}
	if len(removed) > 0 {
		out = append(out, one(Breaking, KindFieldEnumValueRemoved,
			map[string]any{"removed": removed, "from": nonNil(ov), "to": nonNil(nv)})...)
	}
	return out
}
