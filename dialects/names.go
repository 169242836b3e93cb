package dialects

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxNameLen is the longest identifier Portcullis creates or accepts, in
// bytes: PostgreSQL's limit (MySQL's is 64).
const MaxNameLen = 63

// ForeignKeyName is the name given to a foreign key that was created
// without one, and the name SQLite introspection reports (SQLite keeps
// none): PostgreSQL's default, {table}_{columns}_fkey, shortened with a
// hash when it would pass [MaxNameLen].
func ForeignKeyName(table string, columns []string) string {
	return objectName(table, columns, "fkey")
}

// IndexName is the name given to an index created without one:
// {table}_{columns}_key for unique indexes, {table}_{columns}_idx for the
// others (PostgreSQL's defaults), shortened with a hash when it would pass
// [MaxNameLen].
func IndexName(table string, columns []string, unique bool) string {
	if unique {
		return objectName(table, columns, "key")
	}
	return objectName(table, columns, "idx")
}

func objectName(table string, columns []string, suffix string) string {
	name := table + "_" + strings.Join(columns, "_") + "_" + suffix
	if len(name) <= MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	tail := "_" + hex.EncodeToString(sum[:4]) + "_" + suffix
	head := name[:MaxNameLen-len(tail)]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return head + tail
}
