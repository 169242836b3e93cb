package dialects

import (
	"fmt"
	"strconv"
	"strings"
)

// FieldType is a DreamFactory simple type: the engine-neutral name of a
// column's type that the schema API reports and accepts.
type FieldType string

// The simple types. Introspection reports the plain types (integer, string,
// …) plus [TypeID] for an auto-incrementing single-column integer primary key
// and [TypeReference] for a single-column integer foreign key; the
// create-only types (timestamp_on_create, user_id, …) read back as the plain
// type they are stored as.
const (
	TypeID                FieldType = "id"
	TypeBigID             FieldType = "bigid"
	TypeString            FieldType = "string"
	TypeText              FieldType = "text"
	TypeMediumText        FieldType = "mediumtext"
	TypeLongText          FieldType = "longtext"
	TypeInteger           FieldType = "integer"
	TypeTinyInt           FieldType = "tinyint"
	TypeSmallInt          FieldType = "smallint"
	TypeMediumInt         FieldType = "mediumint"
	TypeBigInt            FieldType = "bigint"
	TypeBoolean           FieldType = "boolean"
	TypeFloat             FieldType = "float"
	TypeDouble            FieldType = "double"
	TypeDecimal           FieldType = "decimal"
	TypeMoney             FieldType = "money"
	TypeDate              FieldType = "date"
	TypeTime              FieldType = "time"
	TypeTimeTZ            FieldType = "timetz"
	TypeDatetime          FieldType = "datetime"
	TypeDatetimeTZ        FieldType = "datetimetz"
	TypeTimestamp         FieldType = "timestamp"
	TypeTimestampTZ       FieldType = "timestamptz"
	TypeTimestampOnCreate FieldType = "timestamp_on_create"
	TypeTimestampOnUpdate FieldType = "timestamp_on_update"
	TypeUserID            FieldType = "user_id"
	TypeUserIDOnCreate    FieldType = "user_id_on_create"
	TypeUserIDOnUpdate    FieldType = "user_id_on_update"
	TypeReference         FieldType = "reference"
	TypeBinary            FieldType = "binary"
	TypeJSON              FieldType = "json"
	TypeJSONB             FieldType = "jsonb"
	TypeUUID              FieldType = "uuid"
	TypeArray             FieldType = "array"
)

// fieldTypes is every type ParseFieldType accepts, with DreamFactory's
// aliases.
var fieldTypes = func() map[string]FieldType {
	m := map[string]FieldType{"pk": TypeID, "fk": TypeReference}
	for _, t := range []FieldType{
		TypeID, TypeBigID, TypeString, TypeText, TypeMediumText, TypeLongText,
		TypeInteger, TypeTinyInt, TypeSmallInt, TypeMediumInt, TypeBigInt,
		TypeBoolean, TypeFloat, TypeDouble, TypeDecimal, TypeMoney,
		TypeDate, TypeTime, TypeTimeTZ, TypeDatetime, TypeDatetimeTZ,
		TypeTimestamp, TypeTimestampTZ, TypeTimestampOnCreate, TypeTimestampOnUpdate,
		TypeUserID, TypeUserIDOnCreate, TypeUserIDOnUpdate, TypeReference,
		TypeBinary, TypeJSON, TypeJSONB, TypeUUID,
	} {
		m[string(t)] = t
	}
	return m
}()

// ParseFieldType returns the simple type named s (case-insensitive; "pk" and
// "fk" are DreamFactory's aliases of id and reference). It fails on any name
// that is not in the fixed list, so a request can never choose a native type.
func ParseFieldType(s string) (FieldType, error) {
	if t, ok := fieldTypes[strings.ToLower(strings.TrimSpace(s))]; ok {
		return t, nil
	}
	return "", fmt.Errorf("unknown field type %q", s)
}

// IsInteger reports whether t holds whole numbers (the integer family, id,
// reference and user ids).
func (t FieldType) IsInteger() bool {
	switch t {
	case TypeInteger, TypeTinyInt, TypeSmallInt, TypeMediumInt, TypeBigInt,
		TypeID, TypeBigID, TypeReference, TypeUserID, TypeUserIDOnCreate, TypeUserIDOnUpdate:
		return true
	}
	return false
}

// IsNumeric reports whether t is a number of any kind (integers, floats,
// decimals, money).
func (t FieldType) IsNumeric() bool {
	switch t {
	case TypeFloat, TypeDouble, TypeDecimal, TypeMoney:
		return true
	}
	return t.IsInteger()
}

// IsTemporal reports whether t is a date, time, datetime or timestamp type.
func (t FieldType) IsTemporal() bool {
	switch t {
	case TypeDate, TypeTime, TypeTimeTZ, TypeDatetime, TypeDatetimeTZ,
		TypeTimestamp, TypeTimestampTZ, TypeTimestampOnCreate, TypeTimestampOnUpdate:
		return true
	}
	return false
}

// IsText reports whether t holds character data.
func (t FieldType) IsText() bool {
	switch t {
	case TypeString, TypeText, TypeMediumText, TypeLongText, TypeUUID:
		return true
	}
	return false
}

// SimpleType maps a native column type as an engine writes it
// ("varchar(64)", "numeric(10,2)", "timestamp with time zone",
// "tinyint(1) unsigned", "INTEGER", "" for an untyped SQLite column) to its
// simple type, following DreamFactory's extractSimpleType but by type name
// rather than by substring, so that "interval" or "point" do not read as
// integers. Names it does not know fall back to SQLite's affinity rules and
// finally to string.
func SimpleType(native string) FieldType {
	base, args := SplitNativeType(native)
	if strings.HasSuffix(base, "[]") {
		return TypeArray
	}
	switch base {
	case "":
		return TypeString
	case "bool", "boolean":
		return TypeBoolean
	case "bit":
		if len(args) == 0 || args[0] == 1 {
			return TypeBoolean
		}
		return TypeInteger
	case "tinyint":
		if len(args) > 0 && args[0] == 1 {
			return TypeBoolean
		}
		return TypeTinyInt
	case "smallint", "int2", "smallserial", "serial2":
		return TypeSmallInt
	case "mediumint":
		return TypeMediumInt
	case "int", "integer", "int4", "serial", "serial4", "year":
		return TypeInteger
	case "bigint", "int8", "bigserial", "serial8":
		return TypeBigInt
	case "decimal", "numeric", "dec", "fixed", "number":
		return TypeDecimal
	case "money", "smallmoney":
		return TypeMoney
	case "float":
		if len(args) > 0 && args[0] > 24 {
			return TypeDouble
		}
		return TypeFloat
	case "real", "float4":
		return TypeFloat
	case "double", "double precision", "float8":
		return TypeDouble
	case "date":
		return TypeDate
	case "time", "time without time zone":
		return TypeTime
	case "timetz", "time with time zone":
		return TypeTimeTZ
	case "datetime", "datetime2", "smalldatetime":
		return TypeDatetime
	case "datetimeoffset", "datetimetz":
		return TypeDatetimeTZ
	case "timestamp", "timestamp without time zone":
		return TypeTimestamp
	case "timestamptz", "timestamp with time zone":
		return TypeTimestampTZ
	case "char", "character", "varchar", "character varying", "nchar", "nvarchar",
		"varchar2", "nvarchar2", "bpchar", "string", "enum", "set", "name",
		"inet", "cidr", "macaddr", "macaddr8", "interval", "xml", "tsvector", "tsquery", "bit varying", "varbit",
		"point", "line", "lseg", "box", "path", "polygon", "circle", "geometry", "geography", "linestring",
		"multipoint", "multilinestring", "multipolygon", "geometrycollection", "int4range", "int8range":
		return TypeString
	case "text", "tinytext", "mediumtext", "longtext", "clob", "ntext", "citext":
		return TypeText
	case "blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary", "bytea", "image":
		return TypeBinary
	case "json":
		return TypeJSON
	case "jsonb":
		return TypeJSONB
	case "uuid", "uniqueidentifier":
		return TypeUUID
	}
	// SQLite accepts any type name and gives it an affinity by substring.
	switch {
	case strings.Contains(base, "bool"):
		return TypeBoolean
	case strings.Contains(base, "int"):
		return TypeInteger
	case strings.Contains(base, "char"):
		return TypeString
	case strings.Contains(base, "clob"), strings.Contains(base, "text"):
		return TypeText
	case strings.Contains(base, "blob"):
		return TypeBinary
	case strings.Contains(base, "doub"):
		return TypeDouble
	case strings.Contains(base, "real"), strings.Contains(base, "floa"):
		return TypeFloat
	case strings.Contains(base, "timestamp"):
		return TypeTimestamp
	case strings.Contains(base, "datetime"):
		return TypeDatetime
	case strings.Contains(base, "dec"), strings.Contains(base, "numeric"):
		return TypeDecimal
	}
	return TypeString
}

// SplitNativeType splits a native type into its lowercased base name and its
// numeric arguments: "DECIMAL(10, 2) UNSIGNED" gives "decimal", [10 2];
// "character varying(64)" gives "character varying", [64];
// "timestamp(3) without time zone" gives "timestamp without time zone", [3].
// Arguments that are not integers (an enum's values) are dropped.
func SplitNativeType(native string) (base string, args []int) {
	s := strings.ToLower(strings.TrimSpace(native))
	if open := strings.IndexByte(s, '('); open >= 0 {
		if end := strings.IndexByte(s[open:], ')'); end > 0 {
			for _, a := range strings.Split(s[open+1:open+end], ",") {
				if n, err := strconv.Atoi(strings.TrimSpace(a)); err == nil {
					args = append(args, n)
				}
			}
			s = s[:open] + " " + s[open+end+1:]
		}
	}
	fields := strings.Fields(s)
	kept := fields[:0]
	for _, f := range fields {
		switch f {
		case "unsigned", "signed", "zerofill":
			continue
		}
		kept = append(kept, f)
	}
	return strings.Join(kept, " "), args
}

// TypeSize derives a column's length, precision and scale from its native
// type: length for character and binary types, precision and scale for
// decimals and money. Other types report zeros.
func TypeSize(t FieldType, native string) (length, precision, scale int) {
	_, args := SplitNativeType(native)
	switch {
	case t == TypeString || t == TypeBinary:
		if len(args) > 0 {
			length = args[0]
		}
	case t == TypeDecimal || t == TypeMoney:
		if len(args) > 0 {
			precision = args[0]
		}
		if len(args) > 1 {
			scale = args[1]
		}
	}
	return length, precision, scale
}
