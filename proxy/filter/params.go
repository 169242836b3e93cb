package filter

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Selection is a parsed fields parameter (alias select).
type Selection struct {
	// All is set for a blank parameter and for "*": every field.
	All bool
	// Items are the fields asked for, in order, when All is not set.
	Items []SelectItem
}

// SelectItem is one entry of the fields parameter: a field or an aggregate,
// optionally renamed with "as".
type SelectItem struct {
	Term Term
	// Alias is the name given with "as", or "".
	Alias string
}

// OutputName returns the name of the item's result column: the alias if one
// was given, the aggregate as written in lower case ("sum(price)",
// "count(*)") for an aggregate, and the last path element otherwise.
func (s SelectItem) OutputName() string {
	switch {
	case s.Alias != "":
		return s.Alias
	case s.Term.Agg != NoAggregate:
		return s.Term.Name()
	}
	return s.Term.Path[len(s.Term.Path)-1]
}

// Nulls says where an order item puts NULLs.
type Nulls uint8

// Where NULLs go. NullsDefault leaves it to the database (first in ascending
// order on SQLite and MySQL, last on PostgreSQL).
const (
	NullsDefault Nulls = iota
	NullsFirst
	NullsLast
)

// OrderItem is one entry of the order parameter (aliases sort, order_by):
// field [asc|desc] [nulls first|nulls last].
type OrderItem struct {
	Term  Term
	Desc  bool
	Nulls Nulls
}

// ParseFields parses the fields parameter with the default limits. See
// Limits.ParseFields.
func ParseFields(src string) (Selection, error) { return Limits{}.ParseFields(src) }

// ParseOrder parses the order parameter with the default limits. See
// Limits.ParseOrder.
func ParseOrder(src string) ([]OrderItem, error) { return Limits{}.ParseOrder(src) }

// ParseGroup parses the group parameter with the default limits. See
// Limits.ParseGroup.
func ParseGroup(src string) ([]Term, error) { return Limits{}.ParseGroup(src) }

// ParseIDs parses the ids parameter with the default limits. See
// Limits.ParseIDs.
func ParseIDs(src string) ([]Value, error) { return Limits{}.ParseIDs(src) }

// ParseFields parses the fields parameter: "*" or a comma-separated list of
// items, each a field name (possibly quoted or dotted) or an aggregate
// (count(*), count(f), sum(f), avg(f), min(f), max(f)), optionally followed
// by "as name". A blank parameter or "*" gives Selection{All: true}; "*"
// cannot be combined with other items. Errors are *SyntaxError.
func (l Limits) ParseFields(src string) (Selection, error) {
	p, err := newParser(l, "fields", src)
	if err != nil {
		return Selection{}, err
	}
	if p == nil {
		return Selection{All: true}, nil
	}
	var sel Selection
	err = p.items(func(n int) error {
		t, err := p.peek(modeName)
		if err != nil {
			return err
		}
		if t.kind == tkStar {
			p.consume(t)
			next, err := p.peek(modeName)
			if err != nil {
				return err
			}
			if n > 0 || next.kind != tkEOF {
				return p.s.errAt(t.off, "'*' cannot be combined with other fields", "")
			}
			sel.All = true
			return nil
		}
		item := SelectItem{}
		if item.Term, err = p.term(true); err != nil {
			return err
		}
		as, err := p.peek(modeName)
		if err != nil {
			return err
		}
		if isWord(as, "as") {
			p.consume(as)
			if item.Alias, err = p.alias(); err != nil {
				return err
			}
		}
		sel.Items = append(sel.Items, item)
		return nil
	})
	if err != nil {
		return Selection{}, err
	}
	return sel, nil
}

// alias reads the single name after "as".
func (p *parser) alias() (string, error) {
	t, err := p.peek(modeName)
	if err != nil {
		return "", err
	}
	switch {
	case t.kind == tkWord && !isReservedName(t.val), t.kind == tkQIdent && t.val != "", t.kind == tkDQ && t.val != "":
		p.consume(t)
		return t.val, nil
	}
	return "", p.unexpected(t, "a name after 'as'")
}

// ParseOrder parses the order parameter: a comma-separated list of
// "field [asc|desc] [nulls first|nulls last]" (keywords in any case). The
// field may be an aggregate, for grouped queries. A blank parameter gives nil.
// Errors are *SyntaxError.
func (l Limits) ParseOrder(src string) ([]OrderItem, error) {
	p, err := newParser(l, "order", src)
	if err != nil || p == nil {
		return nil, err
	}
	var out []OrderItem
	err = p.items(func(int) error {
		var item OrderItem
		var err error
		if item.Term, err = p.term(true); err != nil {
			return err
		}
		t, err := p.peek(modeName)
		if err != nil {
			return err
		}
		switch {
		case isWord(t, "asc"):
			p.consume(t)
		case isWord(t, "desc"):
			item.Desc = true
			p.consume(t)
		}
		if t, err = p.peek(modeName); err != nil {
			return err
		}
		if isWord(t, "nulls") {
			p.consume(t)
			w, err := p.peek(modeName)
			if err != nil {
				return err
			}
			switch {
			case isWord(w, "first"):
				item.Nulls = NullsFirst
			case isWord(w, "last"):
				item.Nulls = NullsLast
			default:
				return p.unexpected(w, "'first' or 'last' after 'nulls'")
			}
			p.consume(w)
		}
		out = append(out, item)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ParseGroup parses the group parameter (alias group_by): a comma-separated
// list of field names. Aggregates are not allowed. A blank parameter gives
// nil. Errors are *SyntaxError.
func (l Limits) ParseGroup(src string) ([]Term, error) {
	p, err := newParser(l, "group", src)
	if err != nil || p == nil {
		return nil, err
	}
	var out []Term
	err = p.items(func(int) error {
		t, err := p.term(false)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// items parses a comma-separated list of at least one item, up to the end
// of the input.
func (p *parser) items(item func(n int) error) error {
	for n := 0; ; n++ {
		if n == p.lim.MaxListItems {
			return p.s.errAt(p.s.skipSpace(p.pos), p.s.param+" has more than "+strconv.Itoa(p.lim.MaxListItems)+" items", "")
		}
		if err := item(n); err != nil {
			return err
		}
		t, err := p.peek(modeName)
		if err != nil {
			return err
		}
		switch t.kind {
		case tkEOF:
			return nil
		case tkComma:
			p.consume(t)
		case tkLParen:
			return p.s.errAt(t.off, "unexpected '('", "',' or the end of "+p.s.param+" (only count, sum, avg, min and max can be called)")
		default:
			return p.unexpected(t, "',' or the end of "+p.s.param)
		}
	}
}

// ParseIDs parses the ids parameter: a comma-separated list of record ids.
// An id is either quoted ('…' or "…", with the filter's escapes, so it may
// contain commas) or the text up to the next comma with surrounding white
// space removed; unquoted ids cannot contain quotes or control characters.
// An unquoted id that is a number has kind ValueNumber, every other id
// ValueString; convert them to the key's type with Value.As. A blank
// parameter gives nil; an empty item ("1,,2") is an error.
func (l Limits) ParseIDs(src string) ([]Value, error) {
	l = l.withDefaults()
	s := scanner{src: src, param: "ids"}
	if len(src) > l.MaxLength {
		return nil, s.errAt(l.MaxLength, "ids is longer than "+strconv.Itoa(l.MaxLength)+" bytes", "")
	}
	off := s.skipSpace(0)
	if off == len(src) {
		return nil, nil
	}
	var out []Value
	for {
		off = s.skipSpace(off)
		if len(out) == l.MaxListItems {
			return nil, s.errAt(off, "ids has more than "+strconv.Itoa(l.MaxListItems)+" items", "")
		}
		if off == len(src) || src[off] == ',' {
			return nil, s.errAt(off, "empty id", "an id")
		}
		if c := src[off]; c == '\'' || c == '"' {
			t, err := s.scanQuoted(off, tkString)
			if err != nil {
				return nil, err
			}
			out = append(out, Value{Kind: ValueString, Text: t.val, Offset: off})
			off = t.end
		} else {
			end := off
			for end < len(src) && src[end] != ',' {
				r, size := utf8.DecodeRuneInString(src[end:])
				switch {
				case r == utf8.RuneError && size == 1, r == '\'', r == '"', r == '`',
					r != ' ' && unicode.IsControl(r) && !unicode.IsSpace(r):
					return nil, s.badChar(end)
				}
				end += size
			}
			raw := strings.TrimRightFunc(src[off:end], unicode.IsSpace)
			kind := ValueString
			if isNumberText(raw) {
				kind = ValueNumber
			}
			out = append(out, Value{Kind: kind, Text: raw, Offset: off})
			off = end
		}
		off = s.skipSpace(off)
		if off == len(src) {
			return out, nil
		}
		if src[off] != ',' {
			return nil, s.errAt(off, "unexpected "+quoteForMessage(src[off:off+1]), "',' between ids (quote ids that contain spaces or quotes)")
		}
		off++
	}
}
