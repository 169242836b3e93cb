package filter_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/schema"
)

// orders resolves the columns of an orders table, queried as "t", and of its
// belongs-to relation "customer".
type orders struct{}

var (
	orderColumns    = map[string]filter.Kind{"id": filter.KindInteger, "status": filter.KindString, "total": filter.KindFloat}
	customerColumns = map[string]filter.Kind{"id": filter.KindInteger, "name": filter.KindString}
)

func (orders) Field(path []string) (filter.Field, error) {
	switch {
	case len(path) == 1:
		if k, ok := orderColumns[strings.ToLower(path[0])]; ok {
			return filter.Field{Expr: bun.SafeQuery("?.?", bun.Ident("t"), bun.Ident(strings.ToLower(path[0]))), Kind: k}, nil
		}
	case len(path) == 2 && strings.EqualFold(path[0], "customer"):
		if k, ok := customerColumns[strings.ToLower(path[1])]; ok {
			return filter.Field{
				Expr: bun.SafeQuery("?.?", bun.Ident("c"), bun.Ident(strings.ToLower(path[1]))),
				Kind: k,
				Related: &filter.Related{
					From: bun.SafeQuery("? AS ?", bun.Ident("customers"), bun.Ident("c")),
					On:   bun.SafeQuery("?.? = ?.?", bun.Ident("c"), bun.Ident("id"), bun.Ident("t"), bun.Ident("customer_id")),
				},
			}, nil
		}
	}
	return filter.Field{}, fmt.Errorf("%w: %s", filter.ErrUnknownField, strings.Join(path, "."))
}

func Example() {
	e, err := filter.Parse("(status = 'open') and (total >= '100' or customer.name starts with 'O''B')")
	if err != nil {
		fmt.Println(err)
		return
	}
	q, args, err := filter.Compile(e, orders{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(q)
	// bun formats the arguments; shown here for SQLite.
	fmt.Println(schema.NewQueryGen(sqlitedialect.New()).FormatQuery(q, args...))

	// Output:
	// (? = ? AND (? >= ? OR EXISTS (SELECT 1 FROM ? WHERE ? AND ? LIKE ? ESCAPE ?)))
	// ("t"."status" = 'open' AND ("t"."total" >= 100 OR EXISTS (SELECT 1 FROM "customers" AS "c" WHERE "c"."id" = "t"."customer_id" AND "c"."name" LIKE 'O''B%' ESCAPE '\')))
}

func Example_errors() {
	_, err := filter.Parse("status = 'open' and (total > )")
	fmt.Println(err)

	e, _ := filter.Parse("total > 'lots' or secret = 1")
	_, _, err = filter.Compile(e, orders{})
	fmt.Println(err)

	e, _ = filter.Parse("secret = 1")
	_, _, err = filter.Compile(e, orders{})
	fmt.Println(err, errors.Is(err, filter.ErrUnknownField))

	// Output:
	// filter: unexpected ')' at position 29; expected a value
	// field 'total': 'lots' is not a number at position 8
	// field 'secret': no such field at position 0 true
}

func ExampleParseOrder() {
	items, _ := filter.ParseOrder("total desc nulls last, id")
	q, args, _ := filter.CompileOrder(items, orders{})
	fmt.Println(schema.NewQueryGen(sqlitedialect.New()).FormatQuery(q, args...))
	// Output:
	// CASE WHEN "t"."total" IS NULL THEN 1 ELSE 0 END, "t"."total" DESC, "t"."id" ASC
}
