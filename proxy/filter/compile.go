package filter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun/schema"
)

// likeEscape is the escape character of every LIKE the compiler writes. It
// is bound as an argument ("ESCAPE ?") so that each dialect quotes it its own
// way: '\' on PostgreSQL and SQLite, '\\' on MySQL, whose string literals
// treat the backslash as an escape.
const likeEscape = `\`

// Compile turns a parsed filter into a SQL condition for bun: a query with
// ? placeholders and its arguments, to be passed as
// q.Where(query, args...). A nil e gives "" and no arguments.
//
// Field names become whatever the Resolver returns (normally bun.Ident),
// always as arguments; values are always arguments, coerced to the field's
// Kind. The query text itself holds nothing but placeholders, parentheses,
// SQL keywords and operators, so no client text can ever become SQL.
//
// Translation:
//
//	a = v, a != v, a < v …   ? = ?, ? <> ?, ? < ? …
//	a = null, a != null      ? IS NULL, ? IS NOT NULL
//	a like p                 ? LIKE ? ESCAPE '\'   (see below)
//	a contains v             ? LIKE '%v%' ESCAPE '\' with % _ \ in v escaped;
//	                         starts with, ends with likewise
//	a in (x, y, null)        (? IN (?, ?) OR ? IS NULL); not in: (? NOT IN (…) AND ? IS NOT NULL)
//	a between x and y        (? BETWEEN ? AND ?)
//	x and y, x or y          (x AND y), (x OR y)
//	x xor y                  ((x) <> (y)), NULL if either is NULL, as MySQL's XOR
//	x nor y                  NOT (x OR y)
//	not x                    NOT (x)
//	rel.f = v                EXISTS (SELECT 1 FROM <From> WHERE <On> AND ? = ?)
//
// A like pattern is bound as written except that a backslash that does not
// escape %, _ or another backslash is taken literally; with the explicit
// ESCAPE clause, '50\%' matches the text "50%" on every engine (SQLite has no
// default escape character, PostgreSQL and MySQL use the backslash). Whether
// LIKE ignores case depends on the engine: SQLite ignores ASCII case,
// PostgreSQL never does, MySQL follows the column's collation (the usual
// *_ci collations ignore case).
//
// like, contains, starts with and ends with need a KindString or KindOther
// field. Errors are *CompileError.
func Compile(e Expr, r Resolver) (string, []any, error) {
	return compile(e, r, false)
}

// CompileHaving is Compile for a having condition: aggregates are allowed,
// related fields are not.
func CompileHaving(e Expr, r Resolver) (string, []any, error) {
	return compile(e, r, true)
}

func compile(e Expr, r Resolver, having bool) (string, []any, error) {
	if e == nil {
		return "", nil, nil
	}
	c := compiler{r: r, having: having, b: make([]byte, 0, 64), args: make([]any, 0, 8)}
	if err := c.expr(e); err != nil {
		return "", nil, err
	}
	return string(c.b), c.args, nil
}

type compiler struct {
	b      []byte
	args   []any
	r      Resolver
	having bool
}

func (c *compiler) write(s string) { c.b = append(c.b, s...) }

// bind writes a placeholder for arg.
func (c *compiler) bind(arg any) {
	c.b = append(c.b, '?')
	c.args = append(c.args, arg)
}

func (c *compiler) expr(e Expr) error {
	switch e := e.(type) {
	case *Logical:
		return c.logical(e)
	case *Not:
		c.write("NOT (")
		if err := c.expr(e.X); err != nil {
			return err
		}
		c.write(")")
		return nil
	case *Predicate:
		return c.predicate(e)
	case nil:
		return &CompileError{Msg: "empty expression"}
	}
	return &CompileError{Offset: e.Pos(), Msg: fmt.Sprintf("unsupported expression %T", e)}
}

func (c *compiler) logical(e *Logical) error {
	if len(e.Terms) == 0 {
		return &CompileError{Msg: "empty " + e.Op.String() + " expression"}
	}
	var sep string
	switch e.Op {
	case And:
		sep = " AND "
	case Or, Nor:
		sep = " OR "
	case Xor:
		// Left fold: (((a) <> (b)) <> (c)).
		for range len(e.Terms) - 1 {
			c.write("(")
		}
		c.write("(")
		if err := c.expr(e.Terms[0]); err != nil {
			return err
		}
		c.write(")")
		for _, t := range e.Terms[1:] {
			c.write(" <> (")
			if err := c.expr(t); err != nil {
				return err
			}
			c.write("))")
		}
		return nil
	default:
		return &CompileError{Offset: e.Pos(), Msg: "unsupported logical operator"}
	}
	if e.Op == Nor {
		c.write("NOT ")
	}
	c.write("(")
	for i, t := range e.Terms {
		if i > 0 {
			c.write(sep)
		}
		if err := c.expr(t); err != nil {
			return err
		}
	}
	c.write(")")
	return nil
}

// column is a resolved term: a field, or an aggregate over one.
type column struct {
	agg  Aggregate
	expr schema.QueryAppender // nil for count(*)
	kind Kind
	rel  *Related
}

func (c *compiler) col(k column) {
	switch k.agg {
	case NoAggregate:
		c.bind(k.expr)
		return
	case AggCount:
		if k.expr == nil {
			c.write("COUNT(*)")
			return
		}
		c.write("COUNT(")
	case AggSum:
		c.write("SUM(")
	case AggAvg:
		c.write("AVG(")
	case AggMin:
		c.write("MIN(")
	case AggMax:
		c.write("MAX(")
	}
	c.bind(k.expr)
	c.write(")")
}

// resolve looks a term up through r. where names the clause for messages.
func resolve(r Resolver, t Term, aggregates, related bool, where string) (column, error) {
	k := column{agg: t.Agg}
	if t.Agg != NoAggregate && !aggregates {
		return k, &CompileError{Field: t.Name(), Offset: t.Offset, Msg: "aggregate functions are not allowed in " + where}
	}
	if t.Agg > AggMax {
		return k, &CompileError{Field: t.Name(), Offset: t.Offset, Msg: "unknown aggregate function"}
	}
	if t.Agg == AggCount && t.Path == nil {
		k.kind = KindInteger
		return k, nil
	}
	if len(t.Path) == 0 {
		return k, &CompileError{Offset: t.Offset, Msg: "empty field name"}
	}
	if r == nil {
		return k, &CompileError{Field: t.Name(), Offset: t.Offset, Msg: "no resolver", Err: ErrUnknownField}
	}
	f, err := r.Field(t.Path)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, ErrUnknownField) {
			msg = "no such field"
		}
		return k, &CompileError{Field: t.Name(), Offset: t.Offset, Msg: msg, Err: err}
	}
	if f.Expr == nil || f.Related != nil && (f.Related.From == nil || f.Related.On == nil) {
		return k, &CompileError{Field: t.Name(), Offset: t.Offset, Msg: "the resolver returned no SQL for this field"}
	}
	if f.Related != nil && (!related || t.Agg != NoAggregate) {
		return k, &CompileError{Field: t.Name(), Offset: t.Offset, Msg: "related fields cannot be used in " + where}
	}
	k.expr, k.kind, k.rel = f.Expr, f.Kind, f.Related
	switch t.Agg {
	case AggCount:
		k.kind = KindInteger
	case AggSum, AggAvg:
		k.kind = KindFloat
	}
	return k, nil
}

func (c *compiler) predicate(p *Predicate) error {
	where := "a filter"
	if c.having {
		where = "having"
	}
	k, err := resolve(c.r, p.Left, c.having, !c.having, where)
	if err != nil {
		return err
	}
	if want := p.Op.arity(); want >= 0 && len(p.Values) != want || want < 0 && len(p.Values) == 0 {
		return &CompileError{Field: p.Left.Name(), Offset: p.Left.Offset, Msg: "wrong number of values for " + p.Op.String()}
	}
	if k.rel != nil {
		c.write("EXISTS (SELECT 1 FROM ")
		c.bind(k.rel.From)
		c.write(" WHERE ")
		c.bind(k.rel.On)
		c.write(" AND ")
	}
	if err := c.condition(p, k); err != nil {
		return err
	}
	if k.rel != nil {
		c.write(")")
	}
	return nil
}

var comparison = [...]string{Eq: " = ", Ne: " <> ", Lt: " < ", Le: " <= ", Gt: " > ", Ge: " >= "}

func (c *compiler) condition(p *Predicate, k column) error {
	switch p.Op {
	case Eq, Ne, Lt, Le, Gt, Ge:
		v := p.Values[0]
		if v.Kind == ValueNull {
			if p.Op != Eq && p.Op != Ne {
				return c.valueError(p, v, "null can only be compared with = and !=")
			}
			c.col(k)
			if p.Op == Eq {
				c.write(" IS NULL")
			} else {
				c.write(" IS NOT NULL")
			}
			return nil
		}
		arg, err := c.coerce(p, v, k.kind)
		if err != nil {
			return err
		}
		c.col(k)
		c.write(comparison[p.Op])
		c.bind(arg)
		return nil
	case IsNull, IsNotNull:
		c.col(k)
		if p.Op == IsNull {
			c.write(" IS NULL")
		} else {
			c.write(" IS NOT NULL")
		}
		return nil
	case Like, NotLike, Contains, NotContains, StartsWith, NotStartsWith, EndsWith, NotEndsWith:
		return c.like(p, k)
	case In, NotIn:
		return c.in(p, k)
	case Between, NotBetween:
		lo, err := c.coerce(p, p.Values[0], k.kind)
		if err != nil {
			return err
		}
		hi, err := c.coerce(p, p.Values[1], k.kind)
		if err != nil {
			return err
		}
		c.write("(")
		c.col(k)
		if p.Op == Between {
			c.write(" BETWEEN ")
		} else {
			c.write(" NOT BETWEEN ")
		}
		c.bind(lo)
		c.write(" AND ")
		c.bind(hi)
		c.write(")")
		return nil
	}
	return &CompileError{Field: p.Left.Name(), Offset: p.Left.Offset, Msg: "unsupported operator"}
}

func (c *compiler) like(p *Predicate, k column) error {
	if k.kind != KindString && k.kind != KindOther {
		return &CompileError{Field: p.Left.Name(), Offset: p.Left.Offset,
			Msg: strings.ToLower(p.Op.String()) + " needs a text field, and this one is " + k.kind.String()}
	}
	v := p.Values[0]
	if v.Kind == ValueNull {
		return c.valueError(p, v, "null cannot be used with "+strings.ToLower(p.Op.String()))
	}
	var pattern string
	switch p.Op {
	case Like, NotLike:
		pattern = normalizeLike(v.Text)
	case Contains, NotContains:
		pattern = "%" + escapeLike(v.Text) + "%"
	case StartsWith, NotStartsWith:
		pattern = escapeLike(v.Text) + "%"
	case EndsWith, NotEndsWith:
		pattern = "%" + escapeLike(v.Text)
	}
	c.col(k)
	switch p.Op {
	case Like, Contains, StartsWith, EndsWith:
		c.write(" LIKE ")
	default:
		c.write(" NOT LIKE ")
	}
	c.bind(pattern)
	c.write(" ESCAPE ")
	c.bind(likeEscape)
	return nil
}

func (c *compiler) in(p *Predicate, k column) error {
	args := make([]any, 0, len(p.Values))
	hasNull := false
	for _, v := range p.Values {
		if v.Kind == ValueNull {
			hasNull = true
			continue
		}
		arg, err := c.coerce(p, v, k.kind)
		if err != nil {
			return err
		}
		args = append(args, arg)
	}
	if len(args) == 0 { // only nulls
		c.col(k)
		if p.Op == In {
			c.write(" IS NULL")
		} else {
			c.write(" IS NOT NULL")
		}
		return nil
	}
	if hasNull {
		c.write("(")
	}
	c.col(k)
	if p.Op == In {
		c.write(" IN (")
	} else {
		c.write(" NOT IN (")
	}
	for i, a := range args {
		if i > 0 {
			c.write(", ")
		}
		c.bind(a)
	}
	c.write(")")
	if hasNull {
		if p.Op == In {
			c.write(" OR ")
			c.col(k)
			c.write(" IS NULL)")
		} else {
			c.write(" AND ")
			c.col(k)
			c.write(" IS NOT NULL)")
		}
	}
	return nil
}

func (c *compiler) coerce(p *Predicate, v Value, k Kind) (any, error) {
	arg, err := v.As(k)
	if err != nil {
		return nil, &CompileError{Field: p.Left.Name(), Offset: v.Offset, Msg: err.Error(), Err: err}
	}
	return arg, nil
}

func (c *compiler) valueError(p *Predicate, v Value, msg string) error {
	return &CompileError{Field: p.Left.Name(), Offset: v.Offset, Msg: msg}
}

// normalizeLike keeps a client's LIKE pattern as written, except that a
// backslash that escapes neither %, _ nor a backslash is doubled, so that it
// means itself on every engine (with ESCAPE '\' a lone trailing backslash is
// an error on PostgreSQL, and "\a" would drop the backslash).
func normalizeLike(s string) string {
	if !strings.Contains(s, likeEscape) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' {
			b.WriteByte(ch)
			continue
		}
		if i+1 < len(s) && (s[i+1] == '%' || s[i+1] == '_' || s[i+1] == '\\') {
			b.WriteByte('\\')
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteString(`\\`)
	}
	return b.String()
}

// escapeLike escapes the LIKE wildcards and the escape character in s so
// that it matches itself.
func escapeLike(s string) string {
	if !strings.ContainsAny(s, `%_\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%', '_', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// As converts the value to an argument for a field of kind k, following the
// rules of each Kind: it returns nil (SQL NULL), a string, an int64, a
// float64 (numbers with an exponent), a Decimal (other numbers with a
// fraction, or integers beyond int64) or a bool. The error says why the value
// does not fit, in words fit for the client ("'abc' is not a number").
func (v Value) As(k Kind) (any, error) {
	if v.Kind == ValueNull {
		return nil, nil
	}
	switch k {
	case KindString:
		return v.Text, nil
	case KindInteger, KindFloat:
		switch v.Kind {
		case ValueBool:
			if v.Text == "true" {
				return int64(1), nil
			}
			return int64(0), nil
		case ValueNumber:
			return number(v.Text)
		}
		if t := strings.TrimSpace(v.Text); isNumberText(t) {
			return number(t)
		}
		return nil, fmt.Errorf("%s is not a number", quoteForMessage(v.Text))
	case KindBoolean:
		if v.Kind == ValueBool {
			return v.Text == "true", nil
		}
		switch strings.ToLower(strings.TrimSpace(v.Text)) {
		case "true", "t", "yes", "y", "on", "1":
			return true, nil
		case "false", "f", "no", "n", "off", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%s is not a boolean (use true or false)", quoteForMessage(v.Text))
	case KindTime:
		if v.Kind != ValueString || !isTimeText(v.Text) {
			return nil, fmt.Errorf("%s is not a date/time such as '2024-01-31' or '2024-01-31 13:45:00'", quoteForMessage(v.Text))
		}
		return v.Text, nil
	}
	switch v.Kind {
	case ValueNumber:
		return number(v.Text)
	case ValueBool:
		return v.Text == "true", nil
	}
	return v.Text, nil
}

// number converts a number literal: int64 when it is an integer that fits,
// float64 when it has an exponent, Decimal otherwise.
func number(text string) (any, error) {
	if strings.ContainsAny(text, "eE") {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", quoteForMessage(text))
		}
		return f, nil
	}
	if !strings.Contains(text, ".") {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, nil
		}
		return Decimal(text), nil
	}
	// Give both sides of the point a digit: ".5" → "0.5", "5." → "5.0".
	neg := strings.HasPrefix(text, "-")
	t := strings.TrimPrefix(text, "-")
	if strings.HasPrefix(t, ".") {
		t = "0" + t
	}
	if strings.HasSuffix(t, ".") {
		t += "0"
	}
	if neg {
		t = "-" + t
	}
	return Decimal(t), nil
}

// timeLayouts are the date/time forms accepted for KindTime. Parsing also
// accepts fractional seconds after the seconds of any layout.
var timeLayouts = []string{
	time.DateOnly,
	time.DateTime,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	time.RFC3339,
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z07",
	"2006-01-02T15:04:05Z07",
	"2006-01-02 15:04:05 Z07:00",
	time.TimeOnly,
	"15:04",
}

func isTimeText(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 5 || len(s) > 40 {
		return false
	}
	for _, l := range timeLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}

// CompileSelect compiles a fields parameter into a column list for
// q.ColumnExpr(query, args...): "?, ?, SUM(?) AS ?". Aggregates and items
// with an alias are named by SelectItem.OutputName. For sel.All it returns
// "*". Related fields are refused (they are selected with the related
// parameter). Errors are *CompileError.
func CompileSelect(sel Selection, r Resolver) (string, []any, error) {
	if sel.All {
		return "*", nil, nil
	}
	if len(sel.Items) == 0 {
		return "", nil, &CompileError{Msg: "no fields selected"}
	}
	c := compiler{r: r}
	for i, it := range sel.Items {
		k, err := resolve(r, it.Term, true, false, "fields")
		if err != nil {
			return "", nil, err
		}
		if i > 0 {
			c.write(", ")
		}
		c.col(k)
		if it.Alias != "" || it.Term.Agg != NoAggregate {
			c.write(" AS ")
			c.bind(schema.Ident(it.OutputName()))
		}
	}
	return string(c.b), c.args, nil
}

// CompileOrder compiles an order parameter for q.OrderExpr(query, args...):
// "? ASC, ? DESC". Aggregates are allowed (for grouped queries), related
// fields are not. NULLS FIRST and NULLS LAST are written portably (MySQL has
// no such clause) as a leading CASE WHEN ? IS NULL THEN 0 ELSE 1 END.
// Errors are *CompileError.
func CompileOrder(items []OrderItem, r Resolver) (string, []any, error) {
	c := compiler{r: r}
	for i, it := range items {
		k, err := resolve(r, it.Term, true, false, "order")
		if err != nil {
			return "", nil, err
		}
		if i > 0 {
			c.write(", ")
		}
		switch it.Nulls {
		case NullsFirst:
			c.write("CASE WHEN ")
			c.col(k)
			c.write(" IS NULL THEN 0 ELSE 1 END, ")
		case NullsLast:
			c.write("CASE WHEN ")
			c.col(k)
			c.write(" IS NULL THEN 1 ELSE 0 END, ")
		}
		c.col(k)
		if it.Desc {
			c.write(" DESC")
		} else {
			c.write(" ASC")
		}
	}
	return string(c.b), c.args, nil
}

// CompileGroup compiles a group parameter for q.GroupExpr(query, args...):
// "?, ?". Aggregates and related fields are refused. Errors are
// *CompileError.
func CompileGroup(terms []Term, r Resolver) (string, []any, error) {
	c := compiler{r: r}
	for i, t := range terms {
		k, err := resolve(r, t, false, false, "group")
		if err != nil {
			return "", nil, err
		}
		if i > 0 {
			c.write(", ")
		}
		c.col(k)
	}
	return string(c.b), c.args, nil
}
