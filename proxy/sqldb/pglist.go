package sqldb

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
)

// Pages and compiled list reads on PostgreSQL run on pgx itself, as a read
// by key does (pgfast.go): pgx's cached statement of the text (tagged
// with its shape or compiled read, so that a schema change never meets a
// statement prepared before it), the result formats stdlib asks for, and
// each value decoded as stdlib decodes it. Rows are written as they are
// read, and the commonest values (integers, floats, booleans, text and
// times) are handed to rowjson typed (rowjson.Row) rather than boxed,
// which saves most of the allocations a row costs through database/sql;
// the JSON is the same bytes (TestPostgresNativeListsMatchGeneral).

// pgNative turns the pgx reads of pages and lists on; tests turn it off
// to compare them with database/sql's.
var pgNative = true

// rowSource is what stream writes a result from: a rowReader (database/sql)
// or a pgRows (pgx).
type rowSource interface {
	// Next advances to the next row and reads it.
	Next() (bool, error)
	// AppendObject appends the current row as a JSON object.
	AppendObject(dst []byte) []byte
	// Close ends the result; it may be called more than once.
	Close() error
}

// pgDecode is how a column's wire values become rowjson values.
type pgDecode uint8

const (
	pdOther       pgDecode = iota // pgValue, boxed
	pdInt8                        // binary int8
	pdInt4                        // binary int4
	pdInt2                        // binary int2
	pdBool                        // binary bool
	pdFloat8                      // binary float8
	pdFloat4                      // binary float4
	pdText                        // text that stdlib gives as a string
	pdTimestamp                   // binary timestamp
	pdTimestamptz                 // binary timestamptz
	pdDate                        // binary date
)

// pgDecodeOf is how values of column fd are decoded.
func pgDecodeOf(fd *pgconn.FieldDescription) pgDecode {
	if fd.Format == pgtype.TextFormatCode {
		if stdlibTyped(fd.DataTypeOID) {
			return pdOther
		}
		return pdText
	}
	switch fd.DataTypeOID {
	case pgtype.Int8OID:
		return pdInt8
	case pgtype.Int4OID:
		return pdInt4
	case pgtype.Int2OID:
		return pdInt2
	case pgtype.BoolOID:
		return pdBool
	case pgtype.Float8OID:
		return pdFloat8
	case pgtype.Float4OID:
		return pdFloat4
	case pgtype.TimestampOID:
		return pdTimestamp
	case pgtype.TimestamptzOID:
		return pdTimestamptz
	case pgtype.DateOID:
		return pdDate
	}
	return pdOther
}

// pgRows reads a pgx result into a rowjson.Row.
type pgRows struct {
	rows pgx.Rows
	tm   *pgtype.Map
	fds  []pgconn.FieldDescription
	dec  []pgDecode
	// plans are the scan plans of the time columns, made once a result
	// (pgtype makes a new one each time it is asked).
	plans []pgtype.ScanPlan
	row   rowjson.Row
	args  []any
	// Scan targets of the time types, reused row after row.
	ts   pgtype.Timestamp
	tstz pgtype.Timestamptz
	date pgtype.Date
}

// pgReaders keeps pgRows between results.
var pgReaders = sync.Pool{New: func() any { return new(pgRows) }}

// start makes r a reader of rows with plan pp.
func (r *pgRows) start(tm *pgtype.Map, rows pgx.Rows, pp *pgPlan) {
	r.rows, r.tm, r.fds = rows, tm, rows.FieldDescriptions()
	r.dec, r.plans = r.dec[:0], r.plans[:0]
	for i := range r.fds {
		d := pgDecodeOf(&r.fds[i])
		var plan pgtype.ScanPlan
		switch d {
		case pdTimestamp:
			plan = tm.PlanScan(pgtype.TimestampOID, pgtype.BinaryFormatCode, &r.ts)
		case pdTimestamptz:
			plan = tm.PlanScan(pgtype.TimestamptzOID, pgtype.BinaryFormatCode, &r.tstz)
		case pdDate:
			plan = tm.PlanScan(pgtype.DateOID, pgtype.BinaryFormatCode, &r.date)
		}
		r.dec, r.plans = append(r.dec, d), append(r.plans, plan)
	}
	pp.p.ResetRow(&r.row)
}

// release closes the result and returns r to the pool.
func (r *pgRows) release() {
	if r.rows != nil {
		r.rows.Close()
	}
	r.row.Clear()
	clear(r.args)
	clear(r.plans)
	r.rows, r.tm, r.fds, r.args = nil, nil, nil, r.args[:0]
	pgReaders.Put(r)
}

// Next advances to the next row and reads it.
func (r *pgRows) Next() (bool, error) {
	if !r.rows.Next() {
		return false, r.rows.Err()
	}
	for i, src := range r.rows.RawValues() {
		if err := r.set(i, src); err != nil {
			return false, fmt.Errorf("convert field %d failed: %w", i, err) // stdlib's words
		}
	}
	return true, nil
}

// set decodes src, a value of column i, into the row: as pgValue does,
// typed where rowjson.Row takes the type.
func (r *pgRows) set(i int, src []byte) error {
	if src == nil {
		r.row.Set(i, nil)
		return nil
	}
	switch r.dec[i] {
	case pdInt8:
		if len(src) == 8 {
			r.row.SetInt(i, int64(binary.BigEndian.Uint64(src)))
			return nil
		}
	case pdInt4:
		if len(src) == 4 {
			r.row.SetInt(i, int64(int32(binary.BigEndian.Uint32(src))))
			return nil
		}
	case pdInt2:
		if len(src) == 2 {
			r.row.SetInt(i, int64(int16(binary.BigEndian.Uint16(src))))
			return nil
		}
	case pdBool:
		if len(src) == 1 {
			r.row.SetBool(i, src[0] == 1)
			return nil
		}
	case pdFloat8:
		if len(src) == 8 {
			r.row.SetFloat(i, math.Float64frombits(binary.BigEndian.Uint64(src)))
			return nil
		}
	case pdFloat4:
		if len(src) == 4 {
			r.row.SetFloat(i, float64(math.Float32frombits(binary.BigEndian.Uint32(src))))
			return nil
		}
	case pdText:
		r.row.SetText(i, src) // valid until the next row
		return nil
	case pdTimestamp:
		if err := r.plans[i].Scan(src, &r.ts); err != nil {
			return err
		}
		if r.ts.Valid && r.ts.InfinityModifier == pgtype.Finite {
			r.row.SetTime(i, r.ts.Time)
			return nil
		}
		return r.setValue(i, r.ts.Value)
	case pdTimestamptz:
		if err := r.plans[i].Scan(src, &r.tstz); err != nil {
			return err
		}
		if r.tstz.Valid && r.tstz.InfinityModifier == pgtype.Finite {
			r.row.SetTime(i, r.tstz.Time)
			return nil
		}
		return r.setValue(i, r.tstz.Value)
	case pdDate:
		if err := r.plans[i].Scan(src, &r.date); err != nil {
			return err
		}
		if r.date.Valid && r.date.InfinityModifier == pgtype.Finite {
			r.row.SetTime(i, r.date.Time)
			return nil
		}
		return r.setValue(i, r.date.Value)
	}
	v, err := pgValue(r.tm, &r.fds[i], src)
	if err != nil {
		return err
	}
	r.row.Set(i, v)
	return nil
}

// setValue sets column i to what value gives (the driver.Value of a time
// that is infinite: its text).
func (r *pgRows) setValue(i int, value func() (driver.Value, error)) error {
	v, err := value()
	if err != nil {
		return err
	}
	r.row.Set(i, v)
	return nil
}

// AppendObject appends the current row as a JSON object.
func (r *pgRows) AppendObject(dst []byte) []byte { return r.row.AppendObject(dst) }

// Close ends the result (reading what is left of it) and returns its
// error, as stdlib's rows do.
func (r *pgRows) Close() error {
	r.rows.Close()
	return r.rows.Err()
}

// pgList answers a page or list read as runList and fastPage do, with
// text (ending in LIMIT and OFFSET parameters) run on pgx with vals, the
// request's limit and offset; its plan is kept in slot. total is the
// count asked for, or -1. ok is false when the pool's connections are not
// pgx's (the caller then reads through database/sql).
func (q *tableReq) pgList(ctx context.Context, w http.ResponseWriter, text string, slot *atomic.Pointer[pgPlan], vals []any, visible int, hints *dialects.Table, total int64) (ok bool, err error) {
	if !pgNative {
		return false, nil
	}
	o := q.opts
	var (
		answer streamEnd
		read   bool
	)
	// The connection goes back before the last write, as database/sql's
	// rows give theirs back.
	ok, err = q.onPGX(ctx, func(pc *pgx.Conn) error {
		r := pgReaders.Get().(*pgRows)
		defer r.release()
		r.args = append(r.args[:0], pgx.QueryExecModeCacheStatement, pgFormats)
		r.args = append(r.args, vals...)
		r.args = append(r.args, int64(o.limit)+1, int64(o.offset))
		rows, err := pc.Query(ctx, text, r.args...)
		if err != nil {
			return err
		}
		r.start(pc.TypeMap(), rows, pgPlanIn(slot, pc.TypeMap(), rows.FieldDescriptions(), visible, hints))
		answer, read = q.streamRows(w, r, o.limit, o.offset, total), true
		return nil
	})
	switch {
	case read:
		return true, answer.finish(w)
	case !ok:
		return false, nil
	case err != nil:
		return true, q.b.dbError(err)
	}
	return true, nil
}
