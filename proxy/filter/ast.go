package filter

import (
	"strings"
)

// Expr is a node of a parsed filter or having expression: *Logical, *Not or
// *Predicate. String renders it in the canonical form of the grammar, which
// parses back to an equal tree (offsets aside).
type Expr interface {
	// Pos returns the 0-based byte offset where the expression starts.
	Pos() int
	// String renders the expression in canonical filter syntax.
	String() string
	isExpr()
}

// LogicalOp combines the terms of a Logical expression.
type LogicalOp uint8

// The logical operators, from the loosest binding to the tightest:
// Or and Nor, then Xor, then And. (Not binds tighter than all of them.)
const (
	// And holds when every term holds ("and", "&&").
	And LogicalOp = iota + 1
	// Or holds when at least one term holds ("or", "||").
	Or
	// Xor holds when exactly one of two terms holds; longer chains fold from
	// the left, as in MySQL ("xor").
	Xor
	// Nor holds when no term holds: a NOR b NOR c is NOT (a OR b OR c)
	// ("nor", DreamFactory's spelling).
	Nor
)

// String returns the operator's keyword in upper case.
func (op LogicalOp) String() string {
	switch op {
	case And:
		return "AND"
	case Or:
		return "OR"
	case Xor:
		return "XOR"
	case Nor:
		return "NOR"
	}
	return "LogicalOp(?)"
}

// Logical is two or more expressions joined by one logical operator. A chain
// such as a AND b AND c is one Logical with three terms; parentheses in the
// source make nested Logicals.
type Logical struct {
	Op    LogicalOp
	Terms []Expr
}

// Pos returns the offset of the first term.
func (e *Logical) Pos() int {
	if len(e.Terms) == 0 || e.Terms[0] == nil {
		return 0
	}
	return e.Terms[0].Pos()
}

// String renders the terms joined by the operator, parenthesising terms that
// are themselves Logical.
func (e *Logical) String() string {
	var b strings.Builder
	e.format(&b)
	return b.String()
}

func (e *Logical) format(b *strings.Builder) {
	for i, t := range e.Terms {
		if i > 0 {
			b.WriteByte(' ')
			b.WriteString(e.Op.String())
			b.WriteByte(' ')
		}
		if l, ok := t.(*Logical); ok {
			b.WriteByte('(')
			l.format(b)
			b.WriteByte(')')
			continue
		}
		formatExpr(b, t)
	}
}

func (*Logical) isExpr() {}

// Not negates an expression ("not").
type Not struct {
	X Expr
	// Offset is the byte offset of the "not" keyword.
	Offset int
}

// Pos returns the offset of the "not" keyword.
func (e *Not) Pos() int { return e.Offset }

// String renders NOT followed by the operand.
func (e *Not) String() string {
	var b strings.Builder
	e.format(&b)
	return b.String()
}

func (e *Not) format(b *strings.Builder) {
	b.WriteString("NOT ")
	if l, ok := e.X.(*Logical); ok {
		b.WriteByte('(')
		l.format(b)
		b.WriteByte(')')
		return
	}
	formatExpr(b, e.X)
}

func (*Not) isExpr() {}

func formatExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Logical:
		e.format(b)
	case *Not:
		e.format(b)
	case *Predicate:
		e.format(b)
	case nil:
		b.WriteString("<nil>")
	default:
		b.WriteString(e.String())
	}
}

// Operator is the comparison of a Predicate.
type Operator uint8

// The comparison operators. Word forms map onto these: eq → Eq, ne and <> →
// Ne, gt → Gt, ge and gte → Ge, lt → Lt, le and lte → Le.
const (
	Eq            Operator = iota + 1 // =
	Ne                                // != or <>
	Lt                                // <
	Le                                // <=
	Gt                                // >
	Ge                                // >=
	Like                              // like
	NotLike                           // not like
	In                                // in (…)
	NotIn                             // not in (…)
	IsNull                            // is null
	IsNotNull                         // is not null
	Between                           // between x and y
	NotBetween                        // not between x and y
	Contains                          // contains x: LIKE '%x%' with x escaped
	NotContains                       // not contains x
	StartsWith                        // starts with x: LIKE 'x%'
	NotStartsWith                     // not starts with x
	EndsWith                          // ends with x: LIKE '%x'
	NotEndsWith                       // not ends with x
)

var operatorText = [...]string{
	Eq: "=", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">=",
	Like: "LIKE", NotLike: "NOT LIKE", In: "IN", NotIn: "NOT IN",
	IsNull: "IS NULL", IsNotNull: "IS NOT NULL",
	Between: "BETWEEN", NotBetween: "NOT BETWEEN",
	Contains: "CONTAINS", NotContains: "NOT CONTAINS",
	StartsWith: "STARTS WITH", NotStartsWith: "NOT STARTS WITH",
	EndsWith: "ENDS WITH", NotEndsWith: "NOT ENDS WITH",
}

// String returns the operator in canonical filter syntax ("=", "NOT LIKE").
func (op Operator) String() string {
	if int(op) < len(operatorText) && operatorText[op] != "" {
		return operatorText[op]
	}
	return "Operator(?)"
}

// arity returns how many values the operator takes; -1 means a list.
func (op Operator) arity() int {
	switch op {
	case IsNull, IsNotNull:
		return 0
	case Between, NotBetween:
		return 2
	case In, NotIn:
		return -1
	}
	return 1
}

// Predicate compares a field (or, in having, an aggregate) with values:
// none for IsNull and IsNotNull, two for Between and NotBetween, one or more
// for In and NotIn, one otherwise.
type Predicate struct {
	Left   Term
	Op     Operator
	Values []Value
}

// Pos returns the offset of the left-hand term.
func (e *Predicate) Pos() int { return e.Left.Offset }

// String renders the predicate in canonical syntax.
func (e *Predicate) String() string {
	var b strings.Builder
	e.format(&b)
	return b.String()
}

func (e *Predicate) format(b *strings.Builder) {
	e.Left.format(b)
	b.WriteByte(' ')
	b.WriteString(e.Op.String())
	switch e.Op.arity() {
	case 0:
	case 2:
		b.WriteByte(' ')
		e.Values[0].format(b)
		b.WriteString(" AND ")
		e.Values[1].format(b)
	case -1:
		b.WriteString(" (")
		for i, v := range e.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			v.format(b)
		}
		b.WriteByte(')')
	default:
		b.WriteByte(' ')
		e.Values[0].format(b)
	}
}

func (*Predicate) isExpr() {}

// Aggregate is the aggregate function applied by a Term, if any.
type Aggregate uint8

// The aggregate functions allowed in fields, order and having.
const (
	NoAggregate Aggregate = iota
	AggCount              // count(field) or count(*)
	AggSum                // sum(field)
	AggAvg                // avg(field)
	AggMin                // min(field)
	AggMax                // max(field)
)

var aggregateText = [...]string{AggCount: "count", AggSum: "sum", AggAvg: "avg", AggMin: "min", AggMax: "max"}

// String returns the function's name in lower case, or "" for NoAggregate.
func (a Aggregate) String() string {
	if int(a) < len(aggregateText) {
		return aggregateText[a]
	}
	return "Aggregate(?)"
}

func aggregateOf(word string) Aggregate {
	for a := AggCount; a <= AggMax; a++ {
		if strings.EqualFold(word, aggregateText[a]) {
			return a
		}
	}
	return NoAggregate
}

// Term names a field, possibly of a related table (Path has more than one
// element: "customer.name" is ["customer", "name"]), possibly inside an
// aggregate function. count(*) has Agg AggCount and a nil Path.
type Term struct {
	Agg  Aggregate
	Path []string
	// Offset is the byte offset where the term starts.
	Offset int
}

// Name returns the field as written, dotted, without quotes: "customer.name",
// or "sum(price)" and "count(*)" for aggregates. Error messages use it.
func (t Term) Name() string {
	p := strings.Join(t.Path, ".")
	if t.Agg == NoAggregate {
		return p
	}
	if t.Path == nil {
		p = "*"
	}
	return t.Agg.String() + "(" + p + ")"
}

// String renders the term in canonical syntax, quoting path elements that
// are not plain names.
func (t Term) String() string {
	var b strings.Builder
	t.format(&b)
	return b.String()
}

func (t Term) format(b *strings.Builder) {
	if t.Agg != NoAggregate {
		b.WriteString(t.Agg.String())
		b.WriteByte('(')
		if t.Path == nil {
			b.WriteByte('*')
		}
	}
	for i, p := range t.Path {
		if i > 0 {
			b.WriteByte('.')
		}
		formatName(b, p)
	}
	if t.Agg != NoAggregate {
		b.WriteByte(')')
	}
}

// formatName writes a name bare when the grammar would read it back as the
// same name, double-quoted otherwise.
func formatName(b *strings.Builder, name string) {
	if isPlainName(name) {
		b.WriteString(name)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '"':
			b.WriteString(`""`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(name[i])
		}
	}
	b.WriteByte('"')
}

// isPlainName reports whether name lexes as one word that is not reserved.
func isPlainName(name string) bool {
	if name == "" || isReservedName(name) || aggregateOf(name) != NoAggregate {
		return false
	}
	for i, r := range name {
		if i == 0 && !isWordStart(r) || i > 0 && !isWordPart(r) {
			return false
		}
	}
	return true
}

// ValueKind is the lexical kind of a Value.
type ValueKind uint8

// The value kinds.
const (
	ValueString ValueKind = iota + 1 // 'text', "text" or an unquoted word
	ValueNumber                      // 42, -3.5, 1e3
	ValueBool                        // true or false
	ValueNull                        // null
)

// Value is a literal as written in a filter or ids list. It is always bound
// as a query argument (see Value.As), never pasted into SQL.
type Value struct {
	Kind ValueKind
	// Text is the decoded string for ValueString, the literal for
	// ValueNumber ("-3.5"), "true" or "false" for ValueBool and "null" for
	// ValueNull.
	Text string
	// Offset is the byte offset where the value starts.
	Offset int
}

// String renders the value in canonical syntax: strings single-quoted with
// quotes doubled and backslashes escaped.
func (v Value) String() string {
	var b strings.Builder
	v.format(&b)
	return b.String()
}

func (v Value) format(b *strings.Builder) {
	if v.Kind != ValueString {
		b.WriteString(v.Text)
		return
	}
	b.WriteByte('\'')
	for i := 0; i < len(v.Text); i++ {
		switch v.Text[i] {
		case '\'':
			b.WriteString(`''`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(v.Text[i])
		}
	}
	b.WriteByte('\'')
}

// Walk calls fn for e and, while fn returns true, for each expression below
// it, depth first. It does nothing for a nil e.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *Logical:
		for _, t := range e.Terms {
			Walk(t, fn)
		}
	case *Not:
		Walk(e.X, fn)
	}
}

// Refs returns the terms of every predicate in e, in source order. A caller
// can check them against the fields a role may see before compiling.
func Refs(e Expr) []Term {
	var out []Term
	Walk(e, func(x Expr) bool {
		if p, ok := x.(*Predicate); ok {
			out = append(out, p.Left)
		}
		return true
	})
	return out
}

// AllOf joins expressions with AND, skipping nil ones: it returns nil for
// none, the expression itself for one, and a *Logical otherwise. Callers use
// it to add a role's row filter to the client's filter.
func AllOf(exprs ...Expr) Expr {
	var terms []Expr
	for _, e := range exprs {
		if e != nil {
			terms = append(terms, e)
		}
	}
	switch len(terms) {
	case 0:
		return nil
	case 1:
		return terms[0]
	}
	return &Logical{Op: And, Terms: terms}
}
