package sqldb

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// The INSERT of a one-record POST (createRaw) on PostgreSQL runs on pgx
// itself, as the reads do (pgfast.go): pgx's cached statement of the
// shape's text, tagged with the shape (insertShape.pgText) so that a
// schema change, which builds new shapes, never meets a statement (and
// its parameter types) prepared before it; the same values as
// database/sql would hand pgx's stdlib (which passes every value through
// unchanged); and the returned key decoded as stdlib decodes it. What it
// saves is database/sql's statement, rows and argument conversion
// (TestPostgresNativeCreateMatchesGeneral).

// pgInsert runs sh's INSERT with args on pgx and, when it returns the key,
// reads it into key. ok is false when the pool's connections are not
// pgx's (the caller then runs it through database/sql).
func (q *tableReq) pgInsert(ctx context.Context, sh *insertShape, args, key []any) (ok bool, err error) {
	if !pgNative {
		return false, nil
	}
	return q.onPGX(ctx, func(pc *pgx.Conn) error {
		r := pgReaders.Get().(*pgRows)
		defer r.release()
		if !sh.returning {
			r.args = append(r.args[:0], pgx.QueryExecModeCacheStatement)
			r.args = append(r.args, args...)
			_, err := pc.Exec(ctx, sh.pgText, r.args...)
			return err
		}
		r.args = append(r.args[:0], pgx.QueryExecModeCacheStatement, pgFormats)
		r.args = append(r.args, args...)
		rows, err := pc.Query(ctx, sh.pgText, r.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		tm, fds := pc.TypeMap(), rows.FieldDescriptions()
		for i, src := range rows.RawValues() {
			if i >= len(key) {
				break
			}
			v, err := pgValue(tm, &fds[i], src)
			if err != nil {
				return err
			}
			key[i] = v
		}
		rows.Close()
		return rows.Err()
	})
}
