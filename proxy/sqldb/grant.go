package sqldb

import (
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/filter"
)

// grantOperators maps the operators of a role's row filter (DreamFactory's
// spellings, case-insensitive) onto the filter language.
var grantOperators = map[string]filter.Operator{
	"=": filter.Eq, "eq": filter.Eq, "==": filter.Eq,
	"!=": filter.Ne, "<>": filter.Ne, "ne": filter.Ne, "neq": filter.Ne,
	">": filter.Gt, "gt": filter.Gt, ">=": filter.Ge, "gte": filter.Ge, "ge": filter.Ge,
	"<": filter.Lt, "lt": filter.Lt, "<=": filter.Le, "lte": filter.Le, "le": filter.Le,
	"like": filter.Like, "not like": filter.NotLike,
	"in": filter.In, "not in": filter.NotIn,
	"is null": filter.IsNull, "is not null": filter.IsNotNull,
	"contains": filter.Contains, "not contains": filter.NotContains,
	"starts with": filter.StartsWith, "ends with": filter.EndsWith,
}

// grantExpr builds the row condition of a grant's filters, joined by its
// FilterOp; nil when the grant restricts no rows. The values are bound like
// any filter value. A filter that cannot be understood fails closed: 403.
func grantExpr(g *caller.Grant) (filter.Expr, error) {
	if g == nil || len(g.Filters) == 0 {
		return nil, nil
	}
	terms := make([]filter.Expr, 0, len(g.Filters))
	for _, f := range g.Filters {
		op, ok := grantOperators[strings.ToLower(strings.Join(strings.Fields(f.Operator), " "))]
		name := strings.TrimSpace(f.Name)
		if !ok || name == "" {
			return nil, apierr.Forbidden("The role's record filter on '%s' (operator '%s') cannot be applied.", f.Name, f.Operator)
		}
		p := &filter.Predicate{Left: filter.Term{Path: strings.Split(name, ".")}, Op: op}
		switch op {
		case filter.IsNull, filter.IsNotNull:
		case filter.In, filter.NotIn:
			list := strings.TrimSpace(f.Value)
			if strings.HasPrefix(list, "(") && strings.HasSuffix(list, ")") {
				list = list[1 : len(list)-1]
			}
			vals, err := filter.ParseIDs(list)
			if err != nil || len(vals) == 0 {
				return nil, apierr.Forbidden("The role's record filter on '%s' has an invalid list.", f.Name)
			}
			for i := range vals {
				vals[i].Kind = grantValueKind(vals[i])
			}
			p.Values = vals
		default:
			v := filter.Value{Kind: filter.ValueString, Text: f.Value}
			if strings.EqualFold(strings.TrimSpace(f.Value), "null") && (op == filter.Eq || op == filter.Ne) {
				v = filter.Value{Kind: filter.ValueNull, Text: "null"}
			}
			p.Values = []filter.Value{v}
		}
		terms = append(terms, p)
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	op := filter.And
	if strings.EqualFold(strings.TrimSpace(g.FilterOp), "or") {
		op = filter.Or
	}
	return &filter.Logical{Op: op, Terms: terms}, nil
}

func grantValueKind(v filter.Value) filter.ValueKind {
	if v.Kind == filter.ValueString && strings.EqualFold(v.Text, "null") {
		return filter.ValueNull
	}
	return v.Kind
}
