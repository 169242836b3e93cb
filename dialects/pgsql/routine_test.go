package pgsql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/pgsql"
)

// describe writes a routine in one line: name, type, return, parameters.
func describe(r *dialects.Routine) string {
	var ps []string
	for _, p := range r.Params {
		s := fmt.Sprintf("%d %s %s %s/%s", p.Position, p.Mode, p.Name, p.Type, p.DBType)
		if p.HasDefault {
			s += " default"
			if p.Default != nil {
				s += "=" + *p.Default
			}
		}
		ps = append(ps, s)
	}
	ret := string(r.ReturnType)
	switch {
	case r.ReturnsSet:
		ret = "set"
	case r.ReturnsVoid:
		ret = "void"
	}
	return fmt.Sprintf("%s %s %s (%s)", r.Name, r.Type, ret, strings.Join(ps, "; "))
}

// TestRoutines lists procedures and functions with their parameters, and
// leaves out trigger functions and aggregates.
func TestRoutines(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	for _, s := range []string{
		`CREATE PROCEDURE p(IN a integer, INOUT b numeric, OUT c varchar) LANGUAGE plpgsql AS $$ BEGIN c := 'x'; END $$`,
		`CREATE FUNCTION f(a integer, b text DEFAULT 'x''y') RETURNS bigint LANGUAGE sql AS $$ SELECT 1::bigint $$`,
		`CREATE FUNCTION f(a varchar) RETURNS bigint LANGUAGE sql AS $$ SELECT 2::bigint $$`,
		`CREATE FUNCTION rows_of(n integer) RETURNS TABLE(id integer, label text) LANGUAGE sql AS $$ SELECT 1, 'a' $$`,
		`CREATE FUNCTION nothing() RETURNS void LANGUAGE sql AS $$ SELECT $$`,
		`CREATE FUNCTION "Mixed Case"(integer, OUT x integer, OUT y integer) LANGUAGE sql AS $$ SELECT $1, $1 $$`,
		`CREATE FUNCTION trig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
		`CREATE AGGREGATE agg(integer) (SFUNC = int4pl, STYPE = integer)`,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	list, err := pgsql.New().Routines(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list {
		got = append(got, describe(r))
	}
	want := []string{
		"f function bigint (1 IN a integer/integer; 2 IN b text/text default=x'y)",
		"f function bigint (1 IN a string/character varying)",
		"Mixed Case function  (1 IN  integer/integer; 2 OUT x integer/integer; 3 OUT y integer/integer)",
		"nothing function void ()",
		"p procedure  (1 IN a integer/integer; 2 INOUT b decimal/numeric; 3 OUT c string/character varying)",
		"rows_of function set (1 IN n integer/integer)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("routines (-want +got):\n%s", diff)
	}
}
