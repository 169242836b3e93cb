package filter

import (
	"strconv"
	"strings"
)

// Default limits, used for every Limits field left at zero.
const (
	// DefaultMaxLength is the longest parameter accepted, in bytes.
	DefaultMaxLength = 8 << 10
	// DefaultMaxDepth is the deepest nesting of parentheses and "not"s.
	DefaultMaxDepth = 64
	// DefaultMaxListItems is the most items in one in (…) list, and in one
	// fields, order, group or ids list.
	DefaultMaxListItems = 1000
)

// Limits bounds what the parsers accept, so that a hostile parameter costs
// bounded time and memory and can never overflow the stack. Each limit
// broken is a *SyntaxError. A zero (or negative) field means its default.
// The zero Limits is ready to use; the package-level Parse functions use it.
type Limits struct {
	// MaxLength is the longest parameter accepted, in bytes
	// (DefaultMaxLength).
	MaxLength int
	// MaxDepth is the deepest nesting of parentheses and "not" in a filter
	// or having expression (DefaultMaxDepth).
	MaxDepth int
	// MaxListItems is the most values in one in (…) list and the most items
	// in a fields, order, group or ids list (DefaultMaxListItems).
	MaxListItems int
}

func (l Limits) withDefaults() Limits {
	if l.MaxLength <= 0 {
		l.MaxLength = DefaultMaxLength
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxListItems <= 0 {
		l.MaxListItems = DefaultMaxListItems
	}
	return l
}

// Parse parses a filter with the default limits. See Limits.Parse.
func Parse(src string) (Expr, error) { return Limits{}.Parse(src) }

// ParseHaving parses a having condition with the default limits. See
// Limits.ParseHaving.
func ParseHaving(src string) (Expr, error) { return Limits{}.ParseHaving(src) }

// Parse parses the filter parameter (alias where). A blank filter gives a nil
// Expr and no error: there is no condition. Errors are *SyntaxError.
func (l Limits) Parse(src string) (Expr, error) {
	return l.parseExpr("filter", src, false)
}

// ParseHaving parses the having parameter. Its grammar is the filter's, and
// in addition the left side of a comparison may be an aggregate:
// count(*), count(f), sum(f), avg(f), min(f) or max(f), as in
// "count(*) > 5 and sum(total) >= 100". Plain fields are allowed too (they
// should be grouped fields; the database says so if they are not). A blank
// having gives a nil Expr.
func (l Limits) ParseHaving(src string) (Expr, error) {
	return l.parseExpr("having", src, true)
}

func (l Limits) parseExpr(param, src string, having bool) (Expr, error) {
	p, err := newParser(l, param, src)
	if err != nil || p == nil {
		return nil, err
	}
	p.aggregates = having
	e, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	t, err := p.peek(modeName)
	if err != nil {
		return nil, err
	}
	if t.kind != tkEOF {
		if t.kind == tkRParen {
			return nil, p.s.errAt(t.off, "unexpected ')' without a matching '('", "")
		}
		return nil, p.unexpected(t, "'and', 'or' or the end of the "+param)
	}
	return e, nil
}

// parser is a recursive-descent parser over a scanner, with one token of
// look-ahead cached per scan mode.
type parser struct {
	s          scanner
	lim        Limits
	pos        int // offset after the last consumed token
	depth      int
	aggregates bool // whether terms may be aggregate calls

	cached bool
	cacheM scanMode
	cacheP int
	cacheT token
}

// newParser checks the length limit and returns nil for blank input.
func newParser(l Limits, param, src string) (*parser, error) {
	l = l.withDefaults()
	p := &parser{s: scanner{src: src, param: param}, lim: l}
	if len(src) > l.MaxLength {
		return nil, p.s.errAt(l.MaxLength, param+" is longer than "+strconv.Itoa(l.MaxLength)+" bytes", "")
	}
	if p.s.skipSpace(0) == len(src) {
		return nil, nil
	}
	return p, nil
}

func (p *parser) peek(mode scanMode) (token, error) {
	if p.cached && p.cacheM == mode && p.cacheP == p.pos {
		return p.cacheT, nil
	}
	t, err := p.s.scan(p.pos, mode)
	if err != nil {
		return t, err
	}
	p.cached, p.cacheM, p.cacheP, p.cacheT = true, mode, p.pos, t
	return t, nil
}

func (p *parser) consume(t token) { p.pos = t.end }

func (p *parser) unexpected(t token, expected string) *SyntaxError {
	return p.s.errAt(t.off, "unexpected "+p.s.describe(t), expected)
}

// isWord reports whether t is the keyword kw (case-insensitive).
func isWord(t token, kw string) bool {
	return t.kind == tkWord && strings.EqualFold(t.val, kw)
}

// isReservedName reports words that cannot be bare field names because they
// join or negate expressions.
func isReservedName(w string) bool {
	switch strings.ToLower(w) {
	case "and", "or", "not", "xor", "nor":
		return true
	}
	return false
}

// enter counts one more level of nesting at offset off.
func (p *parser) enter(off int) error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return p.s.errAt(off, p.s.param+" is nested deeper than "+strconv.Itoa(p.lim.MaxDepth)+" levels", "")
	}
	return nil
}

// orExpr = xorExpr { ("or" | "||" | "nor") xorExpr }, without mixing or and nor.
func (p *parser) orExpr() (Expr, error) {
	first, err := p.xorExpr()
	if err != nil {
		return nil, err
	}
	var l *Logical
	for {
		t, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		var op LogicalOp
		switch {
		case t.kind == tkOrOr || isWord(t, "or"):
			op = Or
		case isWord(t, "nor"):
			op = Nor
		default:
			if l != nil {
				return l, nil
			}
			return first, nil
		}
		if l == nil {
			l = &Logical{Op: op, Terms: []Expr{first}}
		} else if l.Op != op {
			return nil, p.s.errAt(t.off, "'or' and 'nor' mixed without parentheses", "")
		}
		p.consume(t)
		next, err := p.xorExpr()
		if err != nil {
			return nil, err
		}
		l.Terms = append(l.Terms, next)
	}
}

// xorExpr = andExpr { "xor" andExpr }
func (p *parser) xorExpr() (Expr, error) {
	return p.chain(Xor, p.andExpr, func(t token) bool { return isWord(t, "xor") })
}

// andExpr = unary { ("and" | "&&") unary }
func (p *parser) andExpr() (Expr, error) {
	return p.chain(And, p.unary, func(t token) bool { return t.kind == tkAndAnd || isWord(t, "and") })
}

func (p *parser) chain(op LogicalOp, operand func() (Expr, error), isOp func(token) bool) (Expr, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	var l *Logical
	for {
		t, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		if !isOp(t) {
			if l != nil {
				return l, nil
			}
			return first, nil
		}
		p.consume(t)
		next, err := operand()
		if err != nil {
			return nil, err
		}
		if l == nil {
			l = &Logical{Op: op, Terms: make([]Expr, 1, 4)}
			l.Terms[0] = first
		}
		l.Terms = append(l.Terms, next)
	}
}

// unary = "not" unary | "(" orExpr ")" | predicate
func (p *parser) unary() (Expr, error) {
	t, err := p.peek(modeName)
	if err != nil {
		return nil, err
	}
	switch {
	case isWord(t, "not"):
		if err := p.enter(t.off); err != nil {
			return nil, err
		}
		p.consume(t)
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		p.depth--
		return &Not{X: x, Offset: t.off}, nil
	case t.kind == tkLParen:
		if err := p.enter(t.off); err != nil {
			return nil, err
		}
		p.consume(t)
		x, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		c, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		if c.kind != tkRParen {
			return nil, p.unexpected(c, "')' to close the '(' at position "+strconv.Itoa(t.off))
		}
		p.consume(c)
		p.depth--
		return x, nil
	}
	return p.predicate()
}

// predicate = term operator-and-values
func (p *parser) predicate() (Expr, error) {
	left, err := p.term(p.aggregates)
	if err != nil {
		return nil, err
	}
	t, err := p.peek(modeName)
	if err != nil {
		return nil, err
	}
	pr := &Predicate{Left: left}
	switch t.kind {
	case tkEq:
		pr.Op = Eq
	case tkNe:
		pr.Op = Ne
	case tkLt:
		pr.Op = Lt
	case tkLe:
		pr.Op = Le
	case tkGt:
		pr.Op = Gt
	case tkGe:
		pr.Op = Ge
	case tkWord:
		op, err := p.wordOperator(t)
		if err != nil {
			return nil, err
		}
		pr.Op = op
	case tkLParen:
		if len(left.Path) == 1 && left.Agg == NoAggregate {
			if aggregateOf(left.Path[0]) != NoAggregate {
				return nil, p.s.errAt(left.Offset, "aggregate functions are not allowed in "+p.s.param, "")
			}
			return nil, p.s.errAt(left.Offset, "function calls are not supported", "")
		}
		return nil, p.unexpected(t, "an operator")
	default:
		return nil, p.unexpected(t, expectOperator)
	}
	if t.kind != tkWord {
		p.consume(t) // word operators consume themselves
	}
	switch pr.Op.arity() {
	case 0:
		return pr, nil
	case -1:
		if pr.Values, err = p.list(); err != nil {
			return nil, err
		}
	case 2:
		lo, err := p.value()
		if err != nil {
			return nil, err
		}
		and, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		if !isWord(and, "and") && and.kind != tkAndAnd {
			return nil, p.unexpected(and, "'and' between the two values of between")
		}
		p.consume(and)
		hi, err := p.value()
		if err != nil {
			return nil, err
		}
		pr.Values = []Value{lo, hi}
	default:
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		pr.Values = []Value{v}
	}
	for _, v := range pr.Values {
		if v.Kind == ValueNull && pr.Op != Eq && pr.Op != Ne && pr.Op != In && pr.Op != NotIn {
			return nil, p.s.errAt(v.Offset, "null cannot be used with "+strings.ToLower(pr.Op.String()),
				"a non-null value (use 'is null' or 'is not null' to test for null)")
		}
	}
	return pr, nil
}

const expectOperator = "an operator (=, !=, <, <=, >, >=, like, in, is null, between, contains, starts with, ends with)"

// wordOperator reads an operator spelled with words, starting at t, and
// consumes it.
func (p *parser) wordOperator(t token) (Operator, error) {
	negated := false
	first := t
	if isWord(t, "not") {
		negated = true
		p.consume(t)
		var err error
		if t, err = p.peek(modeName); err != nil {
			return 0, err
		}
		if t.kind != tkWord {
			return 0, p.unexpected(t, "like, in, between, contains, starts with or ends with after 'not'")
		}
	}
	var op Operator
	switch strings.ToLower(t.val) {
	case "eq":
		op = Eq
	case "ne", "neq":
		op = Ne
	case "lt":
		op = Lt
	case "le", "lte":
		op = Le
	case "gt":
		op = Gt
	case "ge", "gte":
		op = Ge
	case "like":
		op = Like
	case "in":
		op = In
	case "between":
		op = Between
	case "contains":
		op = Contains
	case "starts", "ends":
		op = StartsWith
		if strings.EqualFold(t.val, "ends") {
			op = EndsWith
		}
		p.consume(t)
		w, err := p.peek(modeName)
		if err != nil {
			return 0, err
		}
		if !isWord(w, "with") {
			return 0, p.unexpected(w, "'with' after "+quoteForMessage(strings.ToLower(t.val)))
		}
		t = w
	case "is":
		if negated {
			return 0, p.unexpected(t, "like, in, between, contains, starts with or ends with after 'not'")
		}
		p.consume(t)
		n, err := p.peek(modeName)
		if err != nil {
			return 0, err
		}
		op = IsNull
		if isWord(n, "not") {
			op = IsNotNull
			p.consume(n)
			if n, err = p.peek(modeName); err != nil {
				return 0, err
			}
		}
		if !isWord(n, "null") {
			return 0, p.unexpected(n, "'null' after 'is'")
		}
		p.consume(n)
		return op, nil
	default:
		if negated {
			return 0, p.unexpected(t, "like, in, between, contains, starts with or ends with after 'not'")
		}
		return 0, p.unexpected(first, expectOperator)
	}
	if negated {
		switch op {
		case Like:
			op = NotLike
		case In:
			op = NotIn
		case Between:
			op = NotBetween
		case Contains:
			op = NotContains
		case StartsWith:
			op = NotStartsWith
		case EndsWith:
			op = NotEndsWith
		default:
			return 0, p.unexpected(t, "like, in, between, contains, starts with or ends with after 'not'")
		}
	}
	p.consume(t)
	return op, nil
}

// term = name { "." name } | aggregate "(" ( "*" | name { "." name } ) ")"
// where a name is a word or a quoted name (`…`, […] or "…"). Words that
// join expressions (and, or, not, xor, nor) must be quoted to be names.
func (p *parser) term(aggregates bool) (Term, error) {
	t, err := p.peek(modeName)
	if err != nil {
		return Term{}, err
	}
	if t.kind == tkWord && aggregates {
		if agg := aggregateOf(t.val); agg != NoAggregate {
			open, err := p.s.scan(t.end, modeName)
			if err != nil {
				return Term{}, err
			}
			if open.kind == tkLParen {
				return p.aggregate(agg, t, open)
			}
		}
	}
	path, err := p.path()
	if err != nil {
		return Term{}, err
	}
	return Term{Path: path, Offset: t.off}, nil
}

func (p *parser) aggregate(agg Aggregate, name, open token) (Term, error) {
	p.consume(open)
	term := Term{Agg: agg, Offset: name.off}
	t, err := p.peek(modeName)
	if err != nil {
		return Term{}, err
	}
	if t.kind == tkStar {
		if agg != AggCount {
			return Term{}, p.s.errAt(t.off, "'*' is only allowed in count(*)", "a field name")
		}
		p.consume(t)
	} else if term.Path, err = p.path(); err != nil {
		return Term{}, err
	}
	c, err := p.peek(modeName)
	if err != nil {
		return Term{}, err
	}
	if c.kind != tkRParen {
		return Term{}, p.unexpected(c, "')' to close "+agg.String()+"(")
	}
	p.consume(c)
	return term, nil
}

// path reads a possibly dotted field name.
func (p *parser) path() ([]string, error) {
	var path []string
	for {
		t, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tkWord:
			if len(path) == 0 && isReservedName(t.val) {
				return nil, p.s.errAt(t.off, "unexpected keyword "+quoteForMessage(t.val),
					"a field name (quote a field named "+quoteForMessage(t.val)+")")
			}
		case tkQIdent, tkDQ:
			if t.val == "" {
				return nil, p.s.errAt(t.off, "empty field name", "")
			}
		default:
			exp := "a field name"
			if len(path) > 0 {
				exp = "a field name after '.'"
			}
			return nil, p.unexpected(t, exp)
		}
		p.consume(t)
		path = append(path, t.val)
		d, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		if d.kind != tkDot {
			return path, nil
		}
		p.consume(d)
	}
}

// value = string | number | true | false | null | bare word
func (p *parser) value() (Value, error) {
	t, err := p.peek(modeValue)
	if err != nil {
		return Value{}, err
	}
	switch t.kind {
	case tkString:
		p.consume(t)
		return Value{Kind: ValueString, Text: t.val, Offset: t.off}, nil
	case tkNumber:
		p.consume(t)
		return Value{Kind: ValueNumber, Text: t.val, Offset: t.off}, nil
	case tkBare:
		p.consume(t)
		switch {
		case strings.EqualFold(t.val, "true"):
			return Value{Kind: ValueBool, Text: "true", Offset: t.off}, nil
		case strings.EqualFold(t.val, "false"):
			return Value{Kind: ValueBool, Text: "false", Offset: t.off}, nil
		case strings.EqualFold(t.val, "null"):
			return Value{Kind: ValueNull, Text: "null", Offset: t.off}, nil
		case isReservedName(t.val):
			return Value{}, p.s.errAt(t.off, "unexpected keyword "+quoteForMessage(t.val), "a value")
		}
		return Value{Kind: ValueString, Text: t.val, Offset: t.off}, nil
	case tkLParen:
		return Value{}, p.s.errAt(t.off, "unexpected '('", "a value (sub-expressions and sub-queries are not allowed)")
	}
	return Value{}, p.unexpected(t, "a value")
}

// list = "(" value { "," value } ")"
func (p *parser) list() ([]Value, error) {
	t, err := p.peek(modeValue)
	if err != nil {
		return nil, err
	}
	if t.kind != tkLParen {
		return nil, p.unexpected(t, "'(': value lists must be wrapped in parentheses")
	}
	p.consume(t)
	if c, err := p.peek(modeValue); err != nil {
		return nil, err
	} else if c.kind == tkRParen {
		return nil, p.s.errAt(c.off, "empty value list", "at least one value")
	}
	vals := make([]Value, 0, 4)
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if len(vals) == p.lim.MaxListItems {
			return nil, p.s.errAt(v.Offset, "value list has more than "+strconv.Itoa(p.lim.MaxListItems)+" items", "")
		}
		vals = append(vals, v)
		c, err := p.peek(modeName)
		if err != nil {
			return nil, err
		}
		switch c.kind {
		case tkComma:
			p.consume(c)
		case tkRParen:
			p.consume(c)
			return vals, nil
		default:
			return nil, p.unexpected(c, "',' or ')'")
		}
	}
}
