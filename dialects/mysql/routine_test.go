package mysql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/mysql"
)

// TestRoutines lists procedures and functions with their parameters; a
// procedure and a function may share a name.
func TestRoutines(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.MySQL)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	for _, s := range []string{
		`CREATE PROCEDURE p(IN a INT, INOUT b DECIMAL(8,3), OUT c VARCHAR(20)) BEGIN SET c = 'x'; END`,
		`CREATE PROCEDURE same() BEGIN SELECT 1; END`,
		`CREATE FUNCTION same(flag TINYINT(1)) RETURNS BIGINT DETERMINISTIC RETURN 1`,
		`CREATE FUNCTION none() RETURNS VARCHAR(5) DETERMINISTIC RETURN 'a'`,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	list, err := mysql.New().Routines(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list {
		var ps []string
		for _, p := range r.Params {
			ps = append(ps, fmt.Sprintf("%d %s %s %s %d/%d/%d", p.Position, p.Mode, p.Name, p.Type, p.Length, p.Precision, p.Scale))
		}
		got = append(got, fmt.Sprintf("%s %s %s (%s)", r.Name, r.Type, r.ReturnType, strings.Join(ps, "; ")))
	}
	want := []string{
		"none function string ()",
		"p procedure  (1 IN a integer 0/0/0; 2 INOUT b decimal 0/8/3; 3 OUT c string 20/0/0)",
		"same function bigint (1 IN flag boolean 0/0/0)",
		"same procedure  ()",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("routines (-want +got):\n%s", diff)
	}
}
