package dialects

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// TableSpec describes a table to create: the neutral input of
// [Dialect.CreateTable], built by the schema API from a DreamFactory table
// object.
type TableSpec struct {
	// Name is the table name (1 to 63 bytes of printable UTF-8, without
	// '.', '/' or '\').
	Name string
	// Fields are the columns in order; at least one.
	Fields []FieldSpec
}

// FieldSpec describes one column: the neutral form of a DreamFactory field
// object. The zero value of AllowNull is NOT NULL; the schema API applies
// DreamFactory's default (allow_null true) before building a FieldSpec.
type FieldSpec struct {
	// Name is the column name (1 to 63 bytes of printable UTF-8).
	Name string
	// Type is the simple type. id and bigid make an auto-incrementing
	// primary key; reference needs RefTable and RefField;
	// timestamp_on_create and timestamp_on_update default to
	// CURRENT_TIMESTAMP (MySQL also updates the latter on every write).
	Type FieldType
	// Length is the length of string (default 255, at most 16383, MySQL's
	// limit for utf8mb4) and binary columns (0: unbounded).
	Length int
	// Precision (1 to 65, default 10) and Scale (0 to 30 and at most
	// Precision, default 0) size decimal columns; money is decimal(19,4)
	// unless given.
	Precision int
	Scale     int
	// Default is the column default: a literal value as text, checked
	// against the type (a number for numeric types, true/false/1/0 for
	// boolean, ISO dates and times, valid JSON for json), or
	// CURRENT_TIMESTAMP for datetime and timestamp types. Nil: none.
	// It never becomes SQL text as given: literals are quoted by the
	// dialect.
	Default *string
	// AllowNull permits NULL. Primary key columns never allow it.
	AllowNull bool
	// IsUnique adds a unique constraint on the column alone.
	IsUnique bool
	// IsIndex adds a (non-unique) index on the column alone.
	IsIndex bool
	// IsPrimaryKey makes the column part of the primary key; several
	// fields make a composite key.
	IsPrimaryKey bool
	// AutoIncrement makes the database number new rows; it needs a
	// single-column integer primary key.
	AutoIncrement bool
	// RefTable and RefField make the column a foreign key to that
	// table's column, which must be its primary key or unique.
	// RefOnDelete and RefOnUpdate are the actions: "NO ACTION" (default),
	// "RESTRICT", "CASCADE", "SET NULL" or "SET DEFAULT" (case and
	// underscores do not matter).
	RefTable    string
	RefField    string
	RefOnDelete string
	RefOnUpdate string
}

// ErrInvalidSpec is wrapped by every *[SpecError].
var ErrInvalidSpec = errors.New("invalid schema change")

// ErrExists is wrapped when a table, column or index to create already
// exists.
var ErrExists = errors.New("already exists")

// ErrNotFound is wrapped when a table or column to change does not exist.
var ErrNotFound = errors.New("does not exist")

// SpecError lists every problem found in a schema change; nothing was
// changed. Its message is safe to show to an API client.
type SpecError struct {
	Problems []string
}

// Error joins the problems.
func (e *SpecError) Error() string {
	return "invalid schema change: " + strings.Join(e.Problems, "; ")
}

// Unwrap returns [ErrInvalidSpec].
func (e *SpecError) Unwrap() error { return ErrInvalidSpec }

// problems collects SpecError entries.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &SpecError{Problems: p}
}

// Limits on sizes that every engine accepts.
const (
	MaxStringLength = 16383
	MaxBinaryLength = 65535
	MaxPrecision    = 65
	MaxScale        = 30
)

// Referential actions, as introspection spells them.
const (
	ActionNoAction   = "NO ACTION"
	ActionRestrict   = "RESTRICT"
	ActionCascade    = "CASCADE"
	ActionSetNull    = "SET NULL"
	ActionSetDefault = "SET DEFAULT"
)

// NormalizeAction returns the canonical spelling of a referential action
// ("" gives NO ACTION), or an error for anything else.
func NormalizeAction(s string) (string, error) {
	a := strings.Join(strings.Fields(strings.ToUpper(strings.ReplaceAll(s, "_", " "))), " ")
	switch a {
	case "":
		return ActionNoAction, nil
	case ActionNoAction, ActionRestrict, ActionCascade, ActionSetNull, ActionSetDefault:
		return a, nil
	}
	return "", fmt.Errorf("unknown referential action %q", s)
}

// CheckName reports why name cannot be an identifier, or nil: it must be 1
// to [MaxNameLen] bytes of valid UTF-8 without control characters and
// without leading or trailing spaces; table names also without '.', '/'
// and '\' (MySQL keeps tables in files).
func CheckName(name string, table bool) error {
	switch {
	case name == "":
		return errors.New("name is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("name %q is longer than %d bytes", name, MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("name %q is not valid UTF-8", name)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("name %q starts or ends with a space", name)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("name %q contains a control character", name)
	case table && strings.ContainsAny(name, `./\`):
		return fmt.Errorf("table name %q contains '.', '/' or '\\'", name)
	}
	return nil
}

// Validate checks the table spec on its own (not against a database) and
// returns a *[SpecError] listing every problem.
func (s TableSpec) Validate() error {
	_, err := s.Normalize()
	return err
}

// Normalize validates the spec and returns it completed: each field as
// [FieldSpec.Normalize] returns it.
func (s TableSpec) Normalize() (TableSpec, error) {
	var p problems
	if err := CheckName(s.Name, true); err != nil {
		p.addf("table: %v", err)
	}
	if len(s.Fields) == 0 {
		p.addf("table %q has no fields", s.Name)
	}
	out := TableSpec{Name: s.Name, Fields: make([]FieldSpec, 0, len(s.Fields))}
	seen := map[string]bool{}
	pk, auto := 0, 0
	for _, f := range s.Fields {
		key := strings.ToLower(f.Name)
		if seen[key] {
			p.addf("field %q is given twice", f.Name)
		}
		seen[key] = true
		nf, err := f.Normalize()
		if err != nil {
			var se *SpecError
			if errors.As(err, &se) {
				p = append(p, se.Problems...)
			} else {
				p.addf("%v", err)
			}
			continue
		}
		if nf.IsPrimaryKey {
			pk++
		}
		if nf.AutoIncrement {
			auto++
		}
		out.Fields = append(out.Fields, nf)
	}
	if auto > 1 || auto == 1 && pk > 1 {
		p.addf("table %q: auto increment needs a single-column primary key", s.Name)
	}
	return out, p.err()
}

// Normalize validates the field on its own and returns it completed: the
// type's implied settings (id and bigid are auto-incrementing primary
// keys, timestamp_on_* default to CURRENT_TIMESTAMP, money is
// decimal(19,4)), default sizes, canonical referential actions and a
// canonical default, and primary keys made NOT NULL. It returns a
// *[SpecError] listing every problem.
func (f FieldSpec) Normalize() (FieldSpec, error) {
	var p problems
	if err := CheckName(f.Name, false); err != nil {
		p.addf("field: %v", err)
	}
	t, err := ParseFieldType(string(f.Type))
	if err != nil {
		p.addf("field %q: %v", f.Name, err)
		return f, p.err()
	}
	f.Type = t
	switch t {
	case TypeID, TypeBigID:
		f.IsPrimaryKey, f.AutoIncrement = true, true
	case TypeReference:
		if f.RefTable == "" || f.RefField == "" {
			p.addf("field %q: a reference needs ref_table and ref_field", f.Name)
		}
	case TypeTimestampOnCreate, TypeTimestampOnUpdate:
		if f.Default == nil {
			v := "CURRENT_TIMESTAMP"
			f.Default = &v
		}
	case TypeString:
		if f.Length == 0 {
			f.Length = 255
		}
		if f.Length < 1 || f.Length > MaxStringLength {
			p.addf("field %q: length must be between 1 and %d", f.Name, MaxStringLength)
		}
	case TypeBinary:
		if f.Length < 0 || f.Length > MaxBinaryLength {
			p.addf("field %q: length must be between 0 and %d", f.Name, MaxBinaryLength)
		}
	case TypeMoney:
		if f.Precision == 0 {
			f.Precision, f.Scale = 19, 4
		}
	}
	if t != TypeString && t != TypeBinary {
		f.Length = 0
	}
	if t == TypeDecimal || t == TypeMoney {
		if f.Precision == 0 {
			f.Precision = 10
		}
		if f.Precision < 1 || f.Precision > MaxPrecision {
			p.addf("field %q: precision must be between 1 and %d", f.Name, MaxPrecision)
		}
		if f.Scale < 0 || f.Scale > MaxScale || f.Scale > f.Precision {
			p.addf("field %q: scale must be between 0 and %d and at most the precision", f.Name, MaxScale)
		}
	} else {
		f.Precision, f.Scale = 0, 0
	}
	if f.AutoIncrement && !t.IsInteger() {
		p.addf("field %q: auto increment needs an integer type", f.Name)
	}
	if f.AutoIncrement && !f.IsPrimaryKey {
		p.addf("field %q: auto increment needs the primary key", f.Name)
	}
	if f.IsPrimaryKey {
		f.AllowNull = false
	}
	if f.RefTable != "" || f.RefField != "" {
		if err := CheckName(f.RefTable, true); err != nil {
			p.addf("field %q: ref_table: %v", f.Name, err)
		}
		if err := CheckName(f.RefField, false); err != nil {
			p.addf("field %q: ref_field: %v", f.Name, err)
		}
		for _, a := range []*string{&f.RefOnDelete, &f.RefOnUpdate} {
			v, err := NormalizeAction(*a)
			if err != nil {
				p.addf("field %q: %v", f.Name, err)
			}
			*a = v
		}
		if (f.RefOnDelete == ActionSetNull || f.RefOnUpdate == ActionSetNull) && !f.AllowNull {
			p.addf("field %q: SET NULL needs a column that allows null", f.Name)
		}
	} else {
		f.RefOnDelete, f.RefOnUpdate = "", ""
	}
	if f.Default != nil {
		if f.AutoIncrement {
			p.addf("field %q: an auto increment field has no default", f.Name)
		} else if v, err := normalizeDefault(t, *f.Default); err != nil {
			p.addf("field %q: default: %v", f.Name, err)
		} else {
			f.Default = &v
		}
	}
	return f, p.err()
}

// IsCurrentTimestamp reports whether a normalized default is the
// CURRENT_TIMESTAMP expression rather than a literal.
func (f FieldSpec) IsCurrentTimestamp() bool {
	return f.Default != nil && *f.Default == "CURRENT_TIMESTAMP" && (f.Type.IsTemporal() && f.Type != TypeDate && f.Type != TypeTime && f.Type != TypeTimeTZ)
}

// IsForeignKey reports whether the field references another table.
func (f FieldSpec) IsForeignKey() bool { return f.RefTable != "" }

var (
	dateLayouts     = []string{"2006-01-02"}
	timeLayouts     = []string{"15:04:05", "15:04:05.999999999", "15:04"}
	datetimeLayouts = []string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02"}
)

// normalizeDefault checks a default literal against the type and returns
// its canonical text: integers and decimals as digits, booleans as
// true/false, CURRENT_TIMESTAMP for the current time.
func normalizeDefault(t FieldType, v string) (string, error) {
	if strings.IndexByte(v, 0) >= 0 {
		return "", errors.New("contains a NUL character")
	}
	switch {
	case t == TypeBoolean:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1", "t", "yes", "y", "on":
			return "true", nil
		case "false", "0", "f", "no", "n", "off":
			return "false", nil
		}
		return "", fmt.Errorf("%q is not a boolean", v)
	case t.IsInteger():
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not an integer", v)
		}
		return strconv.FormatInt(n, 10), nil
	case t == TypeFloat || t == TypeDouble:
		s := strings.TrimPrefix(strings.TrimSpace(v), "+")
		if f, err := strconv.ParseFloat(s, 64); err != nil || !numericLiteral.MatchString(s) || f != f {
			return "", fmt.Errorf("%q is not a number", v)
		}
		return s, nil
	case t == TypeDecimal || t == TypeMoney:
		s := strings.TrimPrefix(strings.TrimSpace(v), "+")
		if !numericLiteral.MatchString(s) || strings.ContainsAny(s, "eE") {
			return "", fmt.Errorf("%q is not a decimal number", v)
		}
		return s, nil
	case t == TypeDate:
		return checkTime(v, dateLayouts, "a date (YYYY-MM-DD)")
	case t == TypeTime || t == TypeTimeTZ:
		return checkTime(v, timeLayouts, "a time (HH:MM:SS)")
	case t.IsTemporal():
		if strings.EqualFold(strings.TrimSpace(v), "CURRENT_TIMESTAMP") || strings.EqualFold(strings.TrimSpace(v), "now()") {
			return "CURRENT_TIMESTAMP", nil
		}
		return checkTime(v, datetimeLayouts, "a date and time (YYYY-MM-DD HH:MM:SS) or CURRENT_TIMESTAMP")
	case t == TypeJSON || t == TypeJSONB:
		if !json.Valid([]byte(v)) {
			return "", errors.New("is not valid JSON")
		}
		return v, nil
	case t == TypeBinary:
		return "", errors.New("binary fields take no default")
	}
	return v, nil
}

func checkTime(v string, layouts []string, what string) (string, error) {
	s := strings.TrimSpace(v)
	for _, l := range layouts {
		if _, err := time.Parse(l, s); err == nil {
			return s, nil
		}
	}
	return "", fmt.Errorf("%q is not %s", v, what)
}
