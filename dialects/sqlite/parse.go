package sqlite

import (
	"errors"
	"fmt"
	"strings"
)

// This file reads a CREATE TABLE statement as sqlite_master keeps it,
// just far enough to rebuild the table with one column added, changed or
// removed, or a constraint added, while every other part of the
// definition (CHECK constraints, COLLATE, ON CONFLICT, deferrable foreign
// keys, WITHOUT ROWID, STRICT, comments) is kept as written.

type tokKind uint8

const (
	tWord   tokKind = iota // keyword or bare identifier
	tIdent                 // "quoted", `quoted` or [quoted] identifier
	tString                // 'string'
	tNumber
	tPunct
)

type token struct {
	kind       tokKind
	text       string
	start, end int
}

// upper is the token's text in upper case, for keyword tests.
func (t token) upper() string { return strings.ToUpper(t.text) }

// name is the identifier the token spells, unquoted.
func (t token) name() string {
	s := t.text
	switch t.kind {
	case tIdent:
		switch s[0] {
		case '"':
			return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
		case '`':
			return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
		case '[':
			return s[1 : len(s)-1]
		}
	case tString: // SQLite accepts 'name' where a name is expected
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func tokenize(sql string) ([]token, error) {
	var toks []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return nil, errors.New("unterminated comment")
			}
			i += end + 4
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for {
				k := strings.IndexByte(sql[j:], c)
				if k < 0 {
					return nil, fmt.Errorf("unterminated quote at %d", i)
				}
				j += k + 1
				if j < len(sql) && sql[j] == c {
					j++
					continue
				}
				break
			}
			kind := tIdent
			if c == '\'' {
				kind = tString
			}
			toks = append(toks, token{kind, sql[i:j], i, j})
			i = j
		case c == '[':
			k := strings.IndexByte(sql[i:], ']')
			if k < 0 {
				return nil, fmt.Errorf("unterminated [ at %d", i)
			}
			toks = append(toks, token{tIdent, sql[i : i+k+1], i, i + k + 1})
			i += k + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i
			for j < len(sql) && (isWordByte(sql[j]) || sql[j] == '.' ||
				(sql[j] == '+' || sql[j] == '-') && (sql[j-1] == 'e' || sql[j-1] == 'E')) {
				j++
			}
			toks = append(toks, token{tNumber, sql[i:j], i, j})
			i = j
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			toks = append(toks, token{tWord, sql[i:j], i, j})
			i = j
		default:
			toks = append(toks, token{tPunct, sql[i : i+1], i, i + 1})
			i++
		}
	}
	return toks, nil
}

// item is one entry of a CREATE TABLE's list: a column definition or a
// table constraint.
type item struct {
	text   string  // as written
	toks   []token // its tokens, offsets into the statement
	column string  // the column's name; "" for a table constraint
}

// createTable is a parsed CREATE TABLE statement.
type createTable struct {
	items []item
	tail  string // after the closing parenthesis: WITHOUT ROWID, STRICT
}

func parseCreate(sql string) (*createTable, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read table definition: %w", err)
	}
	open := -1
	for i, t := range toks {
		if t.kind == tPunct && t.text == "(" {
			open = i
			break
		}
		if t.kind == tWord && t.upper() == "AS" {
			break
		}
	}
	if open < 0 {
		return nil, errors.New("sqlite: a table created with AS SELECT cannot be rebuilt")
	}
	ct := &createTable{}
	depth, start := 0, open+1
	for i := open; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tPunct {
			continue
		}
		switch t.text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				ct.add(sql, toks[start:i])
				ct.tail = sql[t.end:]
				return ct, nil
			}
		case ",":
			if depth == 1 {
				ct.add(sql, toks[start:i])
				start = i + 1
			}
		}
	}
	return nil, errors.New("sqlite: unbalanced table definition")
}

var tableConstraint = map[string]bool{"CONSTRAINT": true, "PRIMARY": true, "UNIQUE": true, "CHECK": true, "FOREIGN": true}

func (ct *createTable) add(sql string, toks []token) {
	if len(toks) == 0 {
		return
	}
	it := item{text: sql[toks[0].start:toks[len(toks)-1].end], toks: toks}
	if !(toks[0].kind == tWord && tableConstraint[toks[0].upper()]) {
		it.column = toks[0].name()
	}
	ct.items = append(ct.items, it)
}

// column returns the index of the column called name, or -1.
func (ct *createTable) column(name string) int {
	for i, it := range ct.items {
		if it.column != "" && strings.EqualFold(it.column, name) {
			return i
		}
	}
	return -1
}

// lastColumn returns the index of the last column definition.
func (ct *createTable) lastColumn() int {
	last := -1
	for i, it := range ct.items {
		if it.column != "" {
			last = i
		}
	}
	return last
}

// mentions reports whether a table constraint uses column: in its column
// list (PRIMARY KEY, UNIQUE, FOREIGN KEY) or anywhere in a CHECK.
func (it item) mentions(column string) bool {
	toks := it.toks
	if len(toks) >= 2 && toks[0].upper() == "CONSTRAINT" {
		toks = toks[2:]
	}
	if len(toks) == 0 {
		return false
	}
	isName := func(t token) bool {
		return (t.kind == tWord || t.kind == tIdent) && strings.EqualFold(t.name(), column)
	}
	if toks[0].upper() == "CHECK" {
		for _, t := range toks {
			if isName(t) {
				return true
			}
		}
		return false
	}
	// The first parenthesised list.
	depth := 0
	for _, t := range toks {
		if t.kind == tPunct && t.text == "(" {
			depth++
			continue
		}
		if t.kind == tPunct && t.text == ")" {
			return false
		}
		if depth == 1 && isName(t) {
			return true
		}
	}
	return false
}

// isPrimaryKey reports whether a table constraint is the PRIMARY KEY.
func (it item) isPrimaryKey() bool {
	toks := it.toks
	if len(toks) >= 2 && toks[0].upper() == "CONSTRAINT" {
		toks = toks[2:]
	}
	return len(toks) > 0 && toks[0].upper() == "PRIMARY"
}

// clause is one constraint of a column definition.
type clause struct {
	kind string // PRIMARY, NOT NULL, NULL, UNIQUE, CHECK, DEFAULT, COLLATE, REFERENCES, GENERATED
	text string
}

var clauseStart = map[string]bool{
	"CONSTRAINT": true, "PRIMARY": true, "NOT": true, "NULL": true, "UNIQUE": true, "CHECK": true,
	"DEFAULT": true, "COLLATE": true, "REFERENCES": true, "GENERATED": true, "AS": true,
}

// columnClauses splits a column definition into its name, type text and
// constraint clauses.
func columnClauses(sql string, it item) (typ string, clauses []clause, err error) {
	toks := it.toks
	i := 1
	typeStart, typeEnd := -1, -1
	for i < len(toks) && !(toks[i].kind == tWord && clauseStart[toks[i].upper()]) {
		if typeStart < 0 {
			typeStart = toks[i].start
		}
		if toks[i].kind == tPunct && toks[i].text == "(" {
			j := skipGroup(toks, i)
			typeEnd = toks[j-1].end
			i = j
			continue
		}
		typeEnd = toks[i].end
		i++
	}
	if typeStart >= 0 {
		typ = sql[typeStart:typeEnd]
	}
	for i < len(toks) {
		start := i
		if toks[i].upper() == "CONSTRAINT" {
			i += 2
			if i >= len(toks) {
				return "", nil, errors.New("sqlite: incomplete constraint")
			}
		}
		kw := toks[i].upper()
		i++
		switch kw {
		case "NOT":
			if i < len(toks) && toks[i].upper() == "NULL" {
				i++
				kw = "NOT NULL"
			}
			i = skipToClause(toks, i)
		case "PRIMARY", "UNIQUE", "NULL":
			i = skipToClause(toks, i)
		case "CHECK":
			i = skipGroup(toks, i)
		case "DEFAULT":
			if i < len(toks) && (toks[i].text == "-" || toks[i].text == "+") {
				i++
			}
			if i < len(toks) && toks[i].text == "(" {
				i = skipGroup(toks, i)
			} else {
				i++
			}
		case "COLLATE":
			i++
		case "REFERENCES":
			i = skipReferences(toks, i)
		case "GENERATED", "AS":
			kw = "GENERATED"
			for i < len(toks) && toks[i].text != "(" {
				i++
			}
			i = skipGroup(toks, i)
			if i < len(toks) && (toks[i].upper() == "STORED" || toks[i].upper() == "VIRTUAL") {
				i++
			}
		default:
			return "", nil, fmt.Errorf("sqlite: unexpected %q in a column definition", toks[i-1].text)
		}
		if i > len(toks) {
			i = len(toks)
		}
		clauses = append(clauses, clause{kind: kw, text: sql[toks[start].start:toks[i-1].end]})
	}
	return typ, clauses, nil
}

// skipGroup returns the index after the parenthesised group starting at i.
func skipGroup(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		if toks[i].kind != tPunct {
			continue
		}
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// skipToClause returns the index of the next clause keyword from i.
func skipToClause(toks []token, i int) int {
	for i < len(toks) && !(toks[i].kind == tWord && clauseStart[toks[i].upper()]) {
		i++
	}
	return i
}

// skipReferences skips a foreign key clause after REFERENCES.
func skipReferences(toks []token, i int) int {
	i++ // the table
	if i < len(toks) && toks[i].text == "(" {
		i = skipGroup(toks, i)
	}
	for i < len(toks) {
		switch toks[i].upper() {
		case "ON":
			i += 2 // ON DELETE|UPDATE
			if i < len(toks) && (toks[i].upper() == "SET" || toks[i].upper() == "NO") {
				i++
			}
			i++
		case "MATCH":
			i += 2
		case "NOT":
			if i+1 < len(toks) && toks[i+1].upper() == "DEFERRABLE" {
				i += 2
				if i < len(toks) && toks[i].upper() == "INITIALLY" {
					i += 2
				}
				continue
			}
			return i
		case "DEFERRABLE":
			i++
			if i < len(toks) && toks[i].upper() == "INITIALLY" {
				i += 2
			}
		default:
			return i
		}
	}
	return i
}
