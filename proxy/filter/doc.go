// Package filter is the query language of the table API: it parses the
// filter, having, fields, order, group and ids query parameters of
// GET/PATCH/DELETE /api/v2/{service}/_table/{table} and compiles them into
// SQL fragments for bun, in which every value is a bound argument and every
// name comes from a Resolver the caller implements over the introspected
// schema. Request text never becomes query text.
//
// It imports only the standard library and bun (github.com/uptrace/bun/schema);
// it must not import the dialects or sqldb packages, nor anything HTTP.
//
// # Use
//
//	e, err := filter.Parse(r.URL.Query().Get("filter"))   // *SyntaxError → 400
//	q, args, err := filter.Compile(e, resolver)          // *CompileError → 400
//	sel := db.NewSelect().TableExpr("? AS ?", bun.Ident(table), bun.Ident("t"))
//	if q != "" {
//		sel = sel.Where(q, args...)
//	}
//
// # Filter grammar
//
// Keywords are case-insensitive. White space is free between tokens, but word
// operators need white space (or a quote or parenthesis) around them.
//
//	filter     = [ or ]                      blank: no condition (Parse returns nil)
//	or         = xor { ("or" | "||") xor }   or:  xor { "nor" xor }  (no mixing without parentheses)
//	xor        = and { "xor" and }
//	and        = unary { ("and" | "&&") unary }
//	unary      = "not" unary | "(" or ")" | predicate
//	predicate  = term cmp value
//	           | term ["not"] "like" value
//	           | term ["not"] "in" "(" value { "," value } ")"
//	           | term "is" ["not"] "null"
//	           | term ["not"] "between" value "and" value
//	           | term ["not"] ("contains" | "starts" "with" | "ends" "with") value
//	cmp        = "=" | "!=" | "<>" | "<" | "<=" | ">" | ">=" | "eq" | "ne" | "neq"
//	           | "gt" | "ge" | "gte" | "lt" | "le" | "lte"
//	term       = name { "." name }                      (having also: aggregate)
//	aggregate  = ("count" | "sum" | "avg" | "min" | "max") "(" (term | "*") ")"   (* only in count)
//	name       = word | "`" text "`" | "[" text "]" | `"` text `"`
//	word       = (letter | "_") { letter | digit | "_" | "$" }     not and, or, not, xor, nor
//	value      = "'" text "'" | `"` text `"` | number | "true" | "false" | "null" | bare
//	number     = ["-"] (digits ["." [digits]] | "." digits) [("e" | "E") ["+" | "-"] digits]
//	bare       = a run of characters other than white space and ( ) , ' " ` [ ] ; = < > ! & |
//	             that is not a number: name = John, created > 2024-01-31
//
// Precedence, tightest first: comparison, not, and, xor, or/nor. So
// "a = 1 or b = 2 and not c = 3" is "a = 1 or (b = 2 and (not c = 3))".
// DreamFactory's style, with every clause in parentheses, parses too:
// "(a = 1) and (b like 'x%')". Unlike DreamFactory, clauses need not be
// parenthesised: "a = 1 and b = 2" is two comparisons, not a = '1 and b = 2'.
//
// Strings: in '…' and "…" a quote is escaped by doubling it or with a
// backslash, and two backslashes are one; a backslash before any other
// character is kept, so LIKE escapes such as '50\%' reach the pattern.
// Quoted names (`…`, […], and "…" where a name is expected) escape their
// closing quote by doubling it:
//
//	'it''s'  'it\'s'  "say ""hi"""  'C:\\dir'  `odd``name`  [odd]]name]
//
// Double quotes therefore mean a name on the left of an operator and a
// string on the right, as in DreamFactory.
//
// An unquoted value is one word (name = John); quote values that hold white
// space or any of the characters above (name = 'John Smith'), where
// DreamFactory would take the rest of the clause. Values are literals only: a
// parenthesised value, a sub-query or a function call is a syntax error, and
// field-to-field comparisons are not supported, nor is DreamFactory's ALL.
// DreamFactory's ":name" parameters are not substituted (":name" is just a
// bare string); lookups ({…}) are the caller's business, before parsing.
//
// null is allowed with =, != (meaning IS NULL, IS NOT NULL) and in lists:
// "a in (1, null)" matches 1 and NULL, "a not in (1, null)" matches values
// that are neither (plain SQL would match nothing). An empty list "in ()" is
// a syntax error, as in DreamFactory.
//
// Dotted names ("customer.name") refer to fields of related tables when the
// Resolver says so; see Field.Related for what they compile to. DreamFactory
// rejects them; the spec allows them.
//
// # Other parameters
//
//	fields = "*" | item { "," item }          item  = term [ "as" name ], aggregates allowed
//	order  = oitem { "," oitem }              oitem = term [ "asc" | "desc" ] [ "nulls" ("first" | "last") ]
//	group  = term { "," term }                no aggregates
//	having = as filter, and the left side of a comparison may be an aggregate
//	ids    = id { "," id }                    id = quoted string | text up to the next comma
//
// # Limits
//
// Limits bounds every parser: a parameter may be at most DefaultMaxLength
// (8 KiB) long, a filter or having at most DefaultMaxDepth (64) levels of
// parentheses and "not" deep, and a list (an in list, fields, order, group,
// ids) at most DefaultMaxListItems (1000) items long. Breaking a limit is a
// *SyntaxError; nothing panics or recurses without bound. NUL bytes, invalid
// UTF-8, control characters outside quotes and ';' are syntax errors.
//
// # Errors
//
// *SyntaxError (parse) and *CompileError (unknown field, value of the wrong
// kind, operator not valid for the field) carry a byte offset and a message
// fit for the client; both map to 400. A CompileError for an unknown field
// wraps the Resolver's error, normally ErrUnknownField.
package filter
