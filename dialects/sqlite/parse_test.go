package sqlite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCreate(t *testing.T) {
	sql := `CREATE TABLE "a ""b""" ( -- comment (
		[x y] INTEGER PRIMARY KEY ASC ON CONFLICT REPLACE AUTOINCREMENT,
		` + "`c`" + ` VARCHAR ( 10 , 2 ) CONSTRAINT nn NOT NULL DEFAULT -1 COLLATE NOCASE,
		d TEXT DEFAULT 'it''s, (fine)' CHECK (d <> ')') REFERENCES p (id) ON DELETE SET NULL NOT DEFERRABLE UNIQUE,
		e GENERATED ALWAYS AS (c || d) STORED,
		f DEFAULT (1 + 2) NULL,
		CONSTRAINT pk2 UNIQUE (c, "d"),
		CHECK (f > 0),
		FOREIGN KEY (f) REFERENCES q
	) WITHOUT ROWID, STRICT`
	ct, err := parseCreate(sql)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, it := range ct.items {
		cols = append(cols, it.column)
	}
	if diff := cmp.Diff([]string{"x y", "c", "d", "e", "f", "", "", ""}, cols); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if ct.tail != " WITHOUT ROWID, STRICT" {
		t.Errorf("tail %q", ct.tail)
	}
	want := map[int][]clause{
		0: {{"PRIMARY", "PRIMARY KEY ASC ON CONFLICT REPLACE AUTOINCREMENT"}},
		1: {{"NOT NULL", "CONSTRAINT nn NOT NULL"}, {"DEFAULT", "DEFAULT -1"}, {"COLLATE", "COLLATE NOCASE"}},
		2: {{"DEFAULT", "DEFAULT 'it''s, (fine)'"}, {"CHECK", "CHECK (d <> ')')"}, {"REFERENCES", "REFERENCES p (id) ON DELETE SET NULL NOT DEFERRABLE"}, {"UNIQUE", "UNIQUE"}},
		3: {{"GENERATED", "GENERATED ALWAYS AS (c || d) STORED"}},
		4: {{"DEFAULT", "DEFAULT (1 + 2)"}, {"NULL", "NULL"}},
	}
	types := []string{"INTEGER", "VARCHAR ( 10 , 2 )", "TEXT", "", ""}
	for i, w := range want {
		typ, got, err := columnClauses(sql, ct.items[i])
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if typ != types[i] {
			t.Errorf("item %d type %q, want %q", i, typ, types[i])
		}
		if diff := cmp.Diff(w, got, cmp.AllowUnexported(clause{})); diff != "" {
			t.Errorf("item %d clauses (-want +got):\n%s", i, diff)
		}
	}
	for _, tt := range []struct {
		item   int
		column string
		want   bool
	}{{5, "d", true}, {5, "f", false}, {6, "F", true}, {7, "f", true}, {7, "q", false}} {
		if got := ct.items[tt.item].mentions(tt.column); got != tt.want {
			t.Errorf("item %d mentions %q = %v", tt.item, tt.column, got)
		}
	}
	if _, err := parseCreate(`CREATE TABLE t AS SELECT 1`); err == nil {
		t.Error("AS SELECT accepted")
	}
	if _, err := parseCreate(`CREATE TABLE t (a 'unterminated)`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func FuzzParseCreate(f *testing.F) {
	for _, s := range []string{
		`CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT DEFAULT 'x,y' CHECK (b <> ')'))`,
		`CREATE TABLE "q""t" ([a b] "odd, type", CONSTRAINT c UNIQUE (a)) WITHOUT ROWID`,
		`CREATE TABLE t (a /* ( */ INT -- )
		)`,
		`CREATE TABLE t (a REFERENCES p ON DELETE SET NULL NOT DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE TABLE t(`, `'`, `CREATE TABLE t (a DEFAULT`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		ct, err := parseCreate(sql)
		if err != nil {
			return
		}
		for _, it := range ct.items {
			if !strings.Contains(sql, it.text) {
				t.Fatalf("item %q is not part of the statement", it.text)
			}
			if it.column != "" {
				_, clauses, err := columnClauses(sql, it)
				if err != nil {
					continue
				}
				for _, c := range clauses {
					if !strings.Contains(it.text, c.text) {
						t.Fatalf("clause %q is not part of item %q", c.text, it.text)
					}
				}
			}
			it.mentions("a")
		}
	})
}
