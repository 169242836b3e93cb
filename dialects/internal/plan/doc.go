// Package plan checks a schema change against the introspected schema
// before an engine makes it, so that all three engines refuse the same
// changes with the same errors: names are resolved case-insensitively to
// their stored spelling, tables and columns must (not) exist, foreign keys
// must reference a key of compatible type, and changes that would break
// other tables are refused.
//
// It imports the dialects root and the standard library only.
package plan
