package filter

import (
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// itemsSchema is the test schema: a table of items (queried as "t") with a
// belongs-to relation "owner" and a has-many relation "tag". Table names are
// parameters so the integration tests can use unique names.
type itemsSchema struct {
	items, owners, tags string
}

var itemColumns = map[string]Kind{
	"id": KindInteger, "name": KindString, "status": KindString, "priority": KindInteger,
	"score": KindFloat, "active": KindBoolean, "created": KindTime, "owner_id": KindInteger,
	"data": KindOther,
}

var ownerColumns = map[string]Kind{"id": KindInteger, "name": KindString}

var tagColumns = map[string]Kind{"id": KindInteger, "item_id": KindInteger, "label": KindString}

func col(table, name string) schema.QueryAppender {
	return bun.SafeQuery("?.?", bun.Ident(table), bun.Ident(name))
}

// Field implements Resolver the way the sqldb backend is expected to:
// case-insensitive names, qualified columns, EXISTS information for
// related fields.
func (s itemsSchema) Field(p []string) (Field, error) {
	switch len(p) {
	case 1:
		name := strings.ToLower(p[0])
		if k, ok := itemColumns[name]; ok {
			return Field{Expr: col("t", name), Kind: k}, nil
		}
	case 2:
		name := strings.ToLower(p[1])
		switch strings.ToLower(p[0]) {
		case "owner":
			if k, ok := ownerColumns[name]; ok {
				return Field{Expr: col("o", name), Kind: k, Related: &Related{
					From: bun.SafeQuery("? AS ?", bun.Ident(s.owners), bun.Ident("o")),
					On:   bun.SafeQuery("?.? = ?.?", bun.Ident("o"), bun.Ident("id"), bun.Ident("t"), bun.Ident("owner_id")),
				}}, nil
			}
		case "tag":
			if k, ok := tagColumns[name]; ok {
				return Field{Expr: col("g", name), Kind: k, Related: &Related{
					From: bun.SafeQuery("? AS ?", bun.Ident(s.tags), bun.Ident("g")),
					On:   bun.SafeQuery("?.? = ?.?", bun.Ident("g"), bun.Ident("item_id"), bun.Ident("t"), bun.Ident("id")),
				}}, nil
			}
		}
	}
	return Field{}, fmt.Errorf("%w: %s", ErrUnknownField, strings.Join(p, "."))
}

var testSchema = itemsSchema{items: "items", owners: "owners", tags: "tags"}
