package sqldb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
)

// A read by key on PostgreSQL runs on pgx itself, on a connection of the
// pool (sql.Conn.Raw), instead of through database/sql's Stmt and pgx's
// stdlib rows. The database sees the same thing either way (a statement
// prepared once per connection, then Bind, Execute and Sync per read,
// with the result formats stdlib asks for); the difference is on our
// side: stdlib builds a conversion closure and scan target per column for
// every result (about 15 allocations a read) and database/sql wraps every
// row and value, while here the plan of the columns is kept with the
// shape and each value is decoded as stdlib decodes it (pgValue), so that
// the JSON is the same bytes. The statement is pgx's cached statement
// (QueryExecModeCacheStatement; the per-connection cache is bounded,
// dialects/pgsql), its text tagged with the shape (fast.go), so a schema
// change, which builds new shapes, never meets a statement prepared
// before it.

// pgFormats are the result formats pgx's stdlib asks for: binary for
// these types, text for the others.
var pgFormats = pgx.QueryResultFormatsByOID{
	pgtype.BoolOID:        pgtype.BinaryFormatCode,
	pgtype.ByteaOID:       pgtype.BinaryFormatCode,
	pgtype.CIDOID:         pgtype.BinaryFormatCode,
	pgtype.DateOID:        pgtype.BinaryFormatCode,
	pgtype.Float4OID:      pgtype.BinaryFormatCode,
	pgtype.Float8OID:      pgtype.BinaryFormatCode,
	pgtype.Int2OID:        pgtype.BinaryFormatCode,
	pgtype.Int4OID:        pgtype.BinaryFormatCode,
	pgtype.Int8OID:        pgtype.BinaryFormatCode,
	pgtype.OIDOID:         pgtype.BinaryFormatCode,
	pgtype.TimestampOID:   pgtype.BinaryFormatCode,
	pgtype.TimestamptzOID: pgtype.BinaryFormatCode,
	pgtype.XIDOID:         pgtype.BinaryFormatCode,
}

// pgPlan is how the results of a shape's native read are written: the
// rowjson plan of their columns, made for the column types in oids.
type pgPlan struct {
	oids []uint32
	p    *rowjson.Plan
}

// errNotPGX says that the pool's connections are not pgx's: the read
// goes through database/sql.
var errNotPGX = errors.New("sqldb: not a pgx connection")

// pgGetByID answers as fastGetByID does with sh's read by key run with
// pgx on a connection of the pool. ok is false when it cannot (the caller
// then reads through database/sql).
func (q *tableReq) pgGetByID(ctx context.Context, w http.ResponseWriter, sh *shape, key []any, id string) (ok bool, err error) {
	pb := getBuf()
	defer putBuf(pb)
	m := &keyMatch{keyAt: sh.keyAt, buf: (*pb)[:0]}
	defer func() { *pb = m.buf }()
	ok, err = q.onPGX(ctx, func(pc *pgx.Conn) error { return q.pgRead(ctx, pc, sh, key, m) })
	switch {
	case !ok:
		return false, nil
	case err != nil:
		return true, q.b.dbError(err)
	}
	return true, m.write(w, id)
}

// onPGX runs fn on a pgx connection of the pool, taken with ctx and given
// back before onPGX returns. ok is false when the pool's connections are
// not pgx's: fn did not run, and the caller goes through database/sql.
func (q *tableReq) onPGX(ctx context.Context, fn func(pc *pgx.Conn) error) (ok bool, err error) {
	conn, err := q.db.DB.Conn(ctx)
	if err != nil {
		return true, err
	}
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotPGX
		}
		return fn(sc.Conn())
	})
	conn.Close()
	if errors.Is(err, errNotPGX) {
		return false, nil
	}
	return true, err
}

// pgRead runs the read on pc and gives m each row until it has the
// record.
func (q *tableReq) pgRead(ctx context.Context, pc *pgx.Conn, sh *shape, key []any, m *keyMatch) error {
	r := pgReaders.Get().(*pgRows)
	defer r.release()
	r.args = append(r.args[:0], pgx.QueryExecModeCacheStatement, pgFormats)
	r.args = append(r.args, key...)
	rows, err := pc.Query(ctx, sh.pgByID, r.args...)
	if err != nil {
		return err
	}
	tm := pc.TypeMap()
	r.start(tm, rows, sh.pgPlanFor(tm, rows.FieldDescriptions(), len(q.table.Columns), q.table))
	var wantBuf [64]byte
	want := appendKey(wantBuf[:0], key...)
	for !m.exact {
		ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		// The key columns as the general path compares them: the
		// driver's values, boxed.
		for _, at := range sh.keyAt {
			v, err := pgValue(tm, &r.fds[at], r.rows.RawValues()[at])
			if err != nil {
				return fmt.Errorf("convert field %d failed: %w", at, err)
			}
			r.row.Set(at, v)
		}
		m.row(&r.row, want)
	}
	return r.Close()
}

// pgPlanFor returns the plan of the results of sh's native read whose
// columns are fds, worked out once (again if their types change).
func (sh *shape) pgPlanFor(tm *pgtype.Map, fds []pgconn.FieldDescription, visible int, t *dialects.Table) *pgPlan {
	return pgPlanIn(&sh.pgPlan, tm, fds, visible, t)
}

// pgPlanIn returns the plan kept in slot when it was made for columns of
// the types of fds, else makes it (visible columns written, with the
// types of t) and keeps it there. A slot belongs to one statement text,
// so only the column types can differ between its results.
func pgPlanIn(slot *atomic.Pointer[pgPlan], tm *pgtype.Map, fds []pgconn.FieldDescription, visible int, t *dialects.Table) *pgPlan {
	if pp := slot.Load(); pp != nil && len(pp.oids) == len(fds) {
		same := true
		for i := range fds {
			if fds[i].DataTypeOID != pp.oids[i] {
				same = false
				break
			}
		}
		if same {
			return pp
		}
	}
	cols := make([]rowjson.ResultColumn, len(fds))
	oids := make([]uint32, len(fds))
	for i := range fds {
		oids[i] = fds[i].DataTypeOID
		cols[i] = rowjson.ResultColumn{Name: fds[i].Name, DatabaseType: pgTypeName(tm, oids[i])}
	}
	pp := &pgPlan{oids: oids, p: rowjson.NewPlanOf(dialects.Postgres, cols, rowjson.Options{Table: t, Visible: visible})}
	slot.Store(pp)
	return pp
}

// pgTypeName is the database type name of oid as stdlib gives it
// (sql.ColumnType.DatabaseTypeName).
func pgTypeName(tm *pgtype.Map, oid uint32) string {
	if dt, ok := tm.TypeForOID(oid); ok {
		return strings.ToUpper(dt.Name)
	}
	return strconv.FormatInt(int64(oid), 10)
}

// pgValue decodes src, a value of column fd, into the value pgx's stdlib
// gives database/sql for it. The commonest types are decoded here, as
// pgtype decodes them; the others by stdlibValue.
func pgValue(tm *pgtype.Map, fd *pgconn.FieldDescription, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	oid := fd.DataTypeOID
	switch fd.Format {
	case pgtype.BinaryFormatCode:
		switch {
		case oid == pgtype.Int8OID && len(src) == 8:
			return int64(binary.BigEndian.Uint64(src)), nil
		case oid == pgtype.Int4OID && len(src) == 4:
			return int64(int32(binary.BigEndian.Uint32(src))), nil
		case oid == pgtype.Int2OID && len(src) == 2:
			return int64(int16(binary.BigEndian.Uint16(src))), nil
		case oid == pgtype.BoolOID && len(src) == 1:
			return src[0] == 1, nil
		case oid == pgtype.Float8OID && len(src) == 8:
			return math.Float64frombits(binary.BigEndian.Uint64(src)), nil
		case oid == pgtype.Float4OID && len(src) == 4:
			return float64(math.Float32frombits(binary.BigEndian.Uint32(src))), nil
		}
	case pgtype.TextFormatCode:
		if !stdlibTyped(oid) {
			return string(src), nil // stdlib's default: the text as a string
		}
	}
	return stdlibValue(tm, oid, fd.Format, src)
}

// stdlibTyped reports whether stdlib decodes values of oid into a type of
// their own rather than a string.
func stdlibTyped(oid uint32) bool {
	switch oid {
	case pgtype.BoolOID, pgtype.ByteaOID, pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID, pgtype.DateOID,
		pgtype.Float4OID, pgtype.Float8OID, pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID,
		pgtype.JSONOID, pgtype.JSONBOID, pgtype.TimestampOID, pgtype.TimestamptzOID, pgtype.XMLOID:
		return true
	}
	return false
}

// stdlibValue decodes src (not NULL) exactly as pgx's stdlib does
// (stdlib.Rows.initValueFuncs, pgx v5.12): the same scan plans into the
// same types.
func stdlibValue(tm *pgtype.Map, oid uint32, format int16, src []byte) (any, error) {
	switch oid {
	case pgtype.BoolOID:
		var d bool
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return d, err
	case pgtype.ByteaOID:
		var d []byte
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return d, err
	case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
		var d pgtype.Uint32
		if err := tm.PlanScan(oid, format, &d).Scan(src, &d); err != nil {
			return nil, err
		}
		return d.Value()
	case pgtype.DateOID:
		var d pgtype.Date
		if err := tm.PlanScan(oid, format, &d).Scan(src, &d); err != nil {
			return nil, err
		}
		return d.Value()
	case pgtype.Float4OID:
		var d float32
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return float64(d), err
	case pgtype.Float8OID:
		var d float64
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return d, err
	case pgtype.Int2OID:
		var d int16
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return int64(d), err
	case pgtype.Int4OID:
		var d int32
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return int64(d), err
	case pgtype.Int8OID:
		var d int64
		err := tm.PlanScan(oid, format, &d).Scan(src, &d)
		return d, err
	case pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
		var d []byte
		if err := tm.PlanScan(oid, format, &d).Scan(src, &d); err != nil {
			return nil, err
		}
		return d, nil
	case pgtype.TimestampOID:
		var d pgtype.Timestamp
		if err := tm.PlanScan(oid, format, &d).Scan(src, &d); err != nil {
			return nil, err
		}
		return d.Value()
	case pgtype.TimestamptzOID:
		var d pgtype.Timestamptz
		if err := tm.PlanScan(oid, format, &d).Scan(src, &d); err != nil {
			return nil, err
		}
		return d.Value()
	}
	var d string
	err := tm.PlanScan(oid, format, &d).Scan(src, &d)
	return d, err
}
