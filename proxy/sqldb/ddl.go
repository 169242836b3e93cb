package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// schemaOp is one table's part of a schema change request.
type schemaOp struct {
	// table is the stored name (alter, drop) or the new name (create).
	table  string
	create *dialects.TableSpec
	alter  dialects.TableChanges
	fks    []dialects.ForeignKey
	drop   bool
	// extras are the field extras sent with the fields (kept in the
	// system store once the change is made; see extras.go).
	extras []*extraInput
}

func (op *schemaOp) empty() bool {
	return op.create == nil && op.alter.Empty() && len(op.fks) == 0 && !op.drop
}

// applySchema makes the changes of one request, so that a request that
// fails leaves the database as it was: on PostgreSQL in one transaction,
// on SQLite in one transaction on a connection with foreign key
// enforcement suspended (the table rebuilds check the keys themselves), on
// MySQL (which commits every DDL statement) by checking every change
// first, making each table's changes in one statement and dropping the
// tables the request created when a later change fails. What MySQL cannot
// guarantee: when the request changes several existing tables and the
// database refuses a later one (a value that does not convert, a duplicate
// under a new unique key), the earlier tables keep their changes; the
// error says which.
//
// The introspection cache is refreshed here and on every other instance
// (the service's schema epoch moves) whenever something may have changed.
func (b *Backend) applySchema(ctx context.Context, db *bun.DB, ops []*schemaOp) error {
	all := ops
	ops = slices.DeleteFunc(slices.Clone(ops), (*schemaOp).empty)
	if len(ops) == 0 {
		b.saveExtras(ctx, all) // a change of labels or rules alone
		return nil
	}
	ops = orderOps(ops)
	b.mu.Lock()
	d := b.dialect
	b.mu.Unlock()
	if d == nil {
		return unavailable(b.name, errors.New("pool closed"))
	}
	var err error
	changed := true
	switch b.kind {
	case dialects.MySQL:
		changed, err = b.applyMySQL(ctx, db, d, ops)
	case dialects.SQLite:
		err = b.applySQLite(ctx, db, d, ops)
		changed = err == nil
	default:
		err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, op := range ops {
				if err := applyOp(ctx, d, tx, op); err != nil {
					return err
				}
			}
			return nil
		})
		changed = err == nil
	}
	if changed {
		b.schemaChanged(ctx)
	}
	if err == nil {
		b.saveExtras(ctx, all)
	}
	return b.ddlError(err)
}

// applyOp makes one table's changes on db (a transaction, except on
// MySQL). Several column changes go to the dialect's AlterTable where it
// has one (one statement); otherwise they are made one by one: new
// columns first, then changed ones, then the dropped ones (so a table
// whose fields are all replaced never has none).
func applyOp(ctx context.Context, d dialects.Dialect, db bun.IDB, op *schemaOp) error {
	wrap := func(err error) error {
		if err == nil {
			return nil
		}
		return &opError{table: op.table, err: err}
	}
	switch {
	case op.create != nil:
		if err := d.CreateTable(ctx, db, *op.create); err != nil {
			return wrap(err)
		}
	case op.drop:
		return wrap(d.DropTable(ctx, db, op.table))
	}
	if !op.alter.Empty() {
		if ta, ok := d.(dialects.TableAlterer); ok {
			if err := ta.AlterTable(ctx, db, op.table, op.alter); err != nil {
				return wrap(err)
			}
		} else {
			for _, f := range op.alter.Add {
				if err := d.AddColumn(ctx, db, op.table, f); err != nil {
					return wrap(err)
				}
			}
			for _, f := range op.alter.Alter {
				if err := d.AlterColumn(ctx, db, op.table, f); err != nil {
					return wrap(err)
				}
			}
			for _, c := range op.alter.Drop {
				if err := d.DropColumn(ctx, db, op.table, c); err != nil {
					return wrap(err)
				}
			}
		}
	}
	for _, fk := range op.fks {
		if err := d.AddForeignKey(ctx, db, op.table, fk); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// applySQLite runs the changes in one transaction on one connection whose
// foreign key enforcement is off (SQLite cannot change it inside a
// transaction, and rebuilding a referenced table needs it off); every
// changed table's keys are checked before the commit.
func (b *Backend) applySQLite(ctx context.Context, db *bun.DB, d dialects.Dialect, ops []*schemaOp) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var on int
	if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&on); err != nil {
		return err
	}
	if on == 1 {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return err
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON"); err != nil {
				// Never return a connection without enforcement to the pool.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	return conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, op := range ops {
			if err := applyOp(ctx, d, tx, op); err != nil {
				return err
			}
		}
		for _, op := range ops {
			if op.drop {
				continue
			}
			var child, parent string
			var rowid sql.NullInt64
			var fkid int
			err := tx.QueryRowContext(ctx, `SELECT "table", rowid, parent, fkid FROM pragma_foreign_key_check(?)`, op.table).Scan(&child, &rowid, &parent, &fkid)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			return &opError{table: op.table, err: &dialects.ConstraintError{Kind: dialects.ConstraintForeignKey, Table: child,
				Message: fmt.Sprintf("records of %q do not match their foreign key to %q", child, parent)}}
		}
		return nil
	})
}

// applyMySQL makes the changes on MySQL: new tables first (dropped again
// if anything after them fails), then every change of an existing table
// is checked before the first is made, each table's in one statement.
// It reports whether anything may have changed (tables created and
// dropped again count: the cache may have seen them).
func (b *Backend) applyMySQL(ctx context.Context, db *bun.DB, d dialects.Dialect, ops []*schemaOp) (bool, error) {
	ta, _ := d.(dialects.TableAlterer)
	var created []string
	undo := func() {
		for i := len(created) - 1; i >= 0; i-- {
			if err := d.DropTable(context.WithoutCancel(ctx), db, created[i]); err != nil {
				b.log.Error("could not drop a table created by a failed schema change", "table", created[i], "error", err)
			}
		}
	}
	var rest []*schemaOp
	if ta != nil {
		// New tables that reference only existing ones can be checked
		// before anything is made.
		s, err := d.Introspect(ctx, db)
		if err != nil {
			return false, err
		}
		for _, op := range ops {
			if op.create != nil && !referencesNew(op.create, ops) {
				if err := ta.CheckCreateTable(s, *op.create); err != nil {
					return false, &opError{table: op.table, err: err}
				}
			}
		}
	}
	for _, op := range ops {
		if op.create == nil {
			rest = append(rest, op)
			continue
		}
		if err := applyOp(ctx, d, db, op); err != nil {
			undo()
			return len(created) > 0, err
		}
		created = append(created, op.create.Name)
	}
	if len(rest) == 0 {
		return len(created) > 0, nil
	}
	if ta != nil {
		s, err := d.Introspect(ctx, db)
		if err != nil {
			undo()
			return len(created) > 0, err
		}
		for _, op := range rest {
			if !op.alter.Empty() {
				if err := ta.CheckAlterTable(s, op.table, op.alter); err != nil {
					undo()
					return len(created) > 0, &opError{table: op.table, err: err}
				}
			}
		}
	}
	var done []string
	for i, op := range rest {
		if err := applyOp(ctx, d, db, op); err != nil {
			if i == 0 {
				undo()
				return len(created) > 0, err
			}
			return true, &partialError{done: append(created, done...), err: err}
		}
		done = append(done, op.table)
	}
	return true, nil
}

// referencesNew reports whether spec references a table that another
// operation of the request creates.
func referencesNew(spec *dialects.TableSpec, ops []*schemaOp) bool {
	for _, f := range spec.Fields {
		if f.RefTable == "" || strings.EqualFold(f.RefTable, spec.Name) {
			continue
		}
		for _, op := range ops {
			if op.create != nil && op.create != spec && strings.EqualFold(op.create.Name, f.RefTable) {
				return true
			}
		}
	}
	return false
}

// orderOps puts new tables first, each after the new tables it
// references, then the changes of existing tables, then the tables to
// drop, each before the tables it references.
func orderOps(ops []*schemaOp) []*schemaOp {
	var creates, alters, drops []*schemaOp
	for _, op := range ops {
		switch {
		case op.create != nil:
			creates = append(creates, op)
		case op.drop:
			drops = append(drops, op)
		default:
			alters = append(alters, op)
		}
	}
	out := make([]*schemaOp, 0, len(ops))
	// Creates: repeatedly take the first whose references are placed.
	placed := map[string]bool{}
	for len(creates) > 0 {
		pick := 0
		for i, op := range creates {
			ready := true
			for _, f := range op.create.Fields {
				ref := strings.ToLower(f.RefTable)
				if ref == "" || ref == strings.ToLower(op.table) || placed[ref] {
					continue
				}
				if slices.ContainsFunc(creates, func(o *schemaOp) bool { return strings.EqualFold(o.table, ref) }) {
					ready = false
					break
				}
			}
			if ready {
				pick = i
				break
			}
		}
		placed[strings.ToLower(creates[pick].table)] = true
		out = append(out, creates[pick])
		creates = slices.Delete(creates, pick, pick+1)
	}
	out = append(out, alters...)
	return append(out, drops...)
}

// orderDrops sorts the tables to drop so that a table comes before the
// tables it references (s is the schema they are in).
func orderDrops(s *dialects.Schema, tables []*dialects.Table) []*dialects.Table {
	out := make([]*dialects.Table, 0, len(tables))
	left := slices.Clone(tables)
	for len(left) > 0 {
		pick := 0
		for i, t := range left {
			referenced := false
			for _, other := range left {
				if other == t {
					continue
				}
				for _, fk := range other.ForeignKeys {
					if s.Table(fk.RefTable) == t {
						referenced = true
					}
				}
			}
			if !referenced {
				pick = i
				break
			}
		}
		out = append(out, left[pick])
		left = slices.Delete(left, pick, pick+1)
	}
	return out
}

// opError is the failure of one table's changes.
type opError struct {
	table string
	err   error
}

func (e *opError) Error() string { return e.table + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// partialError is a MySQL failure after other tables were changed.
type partialError struct {
	done []string
	err  error
}

func (e *partialError) Error() string { return e.err.Error() }
func (e *partialError) Unwrap() error { return e.err }

// ddlError turns the failure of a schema change into an API error: 400 for
// changes that cannot be made (with every problem found), 404 for a table
// or field that does not exist, 409 for changes existing rows or other
// tables prevent, 400 with the database's message for a change the
// database refused, 503 when it cannot be reached.
func (b *Backend) ddlError(err error) error {
	if err == nil {
		return nil
	}
	var pe *partialError
	if errors.As(err, &pe) {
		inner := b.ddlError(pe.err)
		ae := apierr.As(inner)
		msg := fmt.Sprintf("%s MySQL makes schema changes table by table: the changes of %s were made before this failure and are kept.",
			ae.Message, quoteList(pe.done))
		return &apierr.Error{Status: ae.Status, Code: ae.Code, Message: msg, Context: map[string]any{"changed": pe.done}, Err: err}
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	table := ""
	var oe *opError
	if errors.As(err, &oe) {
		table = oe.table
	}
	// msg names the table unless the database's message already does.
	msg := func(m string) string {
		m = capitalize(strings.TrimSuffix(m, "."))
		if table == "" || strings.Contains(m, `"`+table+`"`) || strings.Contains(m, "'"+table+"'") {
			return m + "."
		}
		return "Table '" + table + "': " + m + "."
	}
	var se *dialects.SpecError
	var ve *dialects.ValueError
	var ce *dialects.ConstraintError
	switch {
	case errors.As(err, &se):
		return apierr.BadRequest("%s", msg("Invalid schema: "+strings.Join(se.Problems, "; "))).WithContext(map[string]any{"problems": se.Problems}).WithCause(err)
	case errors.Is(err, dialects.ErrNotFound):
		return apierr.NotFound("%s", msg(innerMessage(err))).WithCause(err)
	case errors.Is(err, dialects.ErrExists):
		return apierr.BadRequest("%s", msg(innerMessage(err))).WithCause(err)
	case errors.As(err, &ve):
		return apierr.BadRequest("%s", msg(ve.Message)).WithCause(err)
	case errors.As(err, &ce):
		if ce.Kind == dialects.ConstraintNotNull || ce.Kind == dialects.ConstraintCheck {
			return apierr.BadRequest("%s", msg(ce.Message)).WithCause(err)
		}
		return apierr.Conflict("%s", msg(ce.Message)).WithCause(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, dialects.ErrUnavailable), dialects.IsConnectionError(err):
		return b.dbError(err)
	}
	if m, ok := driverMessage(err); ok {
		return apierr.BadRequest("%s", msg("The database refused the schema change: "+m)).WithCause(err)
	}
	return b.dbError(err)
}

// innerMessage is the message of the error below any opError.
func innerMessage(err error) string {
	var oe *opError
	if errors.As(err, &oe) {
		return oe.err.Error()
	}
	return err.Error()
}

// driverMessage returns the database's own message for an error a driver
// returned.
func driverMessage(err error) (string, bool) {
	var pe *pgconn.PgError
	var me *mysqldrv.MySQLError
	var se *sqlite.Error
	switch {
	case errors.As(err, &pe):
		return pe.Message, true
	case errors.As(err, &me):
		return me.Message, true
	case errors.As(err, &se):
		return se.Error(), true
	}
	return "", false
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}
