package sqldb

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// The POST of one record on SQLite runs its INSERT (… RETURNING the key
// when the database makes it) on the driver, as the fast reads do
// (litefast.go): a connection of the pool through sql.Conn.Raw, the
// statement prepared once per driver connection (Backend.lite), bound,
// stepped and reset. SQLite runs the same statement either way, in
// autocommit (a failed INSERT undoes itself, and the commit's error comes
// back from the reset, as database/sql's Row.Scan returns it). What goes
// is database/sql's Stmt and Rows around it and the driver's goroutine
// that watches the request's context (interruptOnDone): two goroutines, a
// context and about 15 allocations a POST. The connection is taken with
// the request's context; the statement runs without one (it waits at most
// the busy timeout for the write lock).
//
// These INSERTs take turns (Backend.liteWriter) before they take a
// connection. SQLite lets one connection write at a time; one that finds
// the write lock taken gets SQLITE_BUSY and its busy handler sleeps 1, 2,
// 5, 10 … 100 ms between tries, while the other connections, which ask
// again the moment the lock is free, keep it: under a load of concurrent
// POSTs a few writers starved for seconds (strace of 3,000 POSTs from 16
// goroutines on 4 connections: 13 such waits, 77 sleeps of 100 ms; p99
// 55–80 ms at the bench). Waiting in Go hands the turn over as soon as
// it is free, and a waiting writer holds no connection the reads could
// use. Writes of the general path (transactions) still meet the busy
// handler, as do other processes.

// liteInsert runs sh's INSERT with args on SQLite's driver and, when sh
// returns the key, stores the returned values in key as database/sql
// scans them into an any. ok is false when it cannot (a value
// database/sql would convert in a way of its own, a connection of
// another driver): the caller then runs it through database/sql.
func (q *tableReq) liteInsert(ctx context.Context, sh *insertShape, args, key []any) (ok bool, err error) {
	var argBuf [16]driver.NamedValue
	nv, ok := liteArgs(argBuf[:0], args)
	if !ok {
		return false, nil
	}
	select {
	case q.b.liteWriter <- struct{}{}:
	case <-ctx.Done():
		return true, ctx.Err()
	}
	defer func() { <-q.b.liteWriter }()
	conn, err := q.db.DB.Conn(ctx)
	if err != nil {
		return true, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		st, err := q.b.driverStmt(ctx, dc, q.db.DB, sh.text)
		if err != nil {
			return err
		}
		if !sh.returning {
			ex, ok := st.(driver.StmtExecContext)
			if !ok {
				return errNotDriver
			}
			_, err := ex.ExecContext(context.Background(), nv)
			return err
		}
		qc, ok := st.(driver.StmtQueryContext)
		if !ok {
			return errNotDriver
		}
		rows, err := qc.QueryContext(context.Background(), nv)
		if err != nil {
			return err
		}
		return liteScanKey(rows, key)
	})
	if errors.Is(err, errNotDriver) {
		return false, nil
	}
	return true, err
}

// liteScanKey reads the one row of rows into key as Row.Scan does into
// *any destinations (a []byte copied), then closes rows, returning its
// error (the statement's commit) as Row.Scan does.
func liteScanKey(rows driver.Rows, key []any) error {
	var valBuf [4]driver.Value
	var vals []driver.Value
	if n := len(rows.Columns()); n <= len(valBuf) {
		vals = valBuf[:n]
	} else {
		vals = make([]driver.Value, n)
	}
	err := rows.Next(vals)
	if err == nil {
		if len(vals) != len(key) {
			err = fmt.Errorf("sqldb: RETURNING gave %d columns for %d key columns", len(vals), len(key))
		}
		for i, v := range vals {
			if i < len(key) {
				if b, ok := v.([]byte); ok {
					v = bytes.Clone(b)
				}
				key[i] = v
			}
		}
	} else if err == io.EOF {
		err = sql.ErrNoRows
	}
	if cerr := rows.Close(); cerr != nil && (err == nil || err == sql.ErrNoRows) {
		return cerr
	}
	return err
}

// liteWrites turns liteInsert on; tests turn it off to compare it with
// database/sql's path.
var liteWrites = true
