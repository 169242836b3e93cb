package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/portcullis-dev/portcullis/dialects"
)

// The baseline is the best hand-written Go server for the calls the
// scenarios make: net/http's ServeMux, database/sql and the driver, one
// fixed query per route with bound arguments, typed scanning and a JSON
// encoder written for the item table, pooled buffers. It answers with the
// same bytes as Portcullis for the same call (checked before every
// scenario), so the two differ only in what Portcullis does on top: the
// pipeline (API key, session, RBAC, limits), the query language, the
// schema-driven encoder.

// maxPage is the largest page the baseline serves, as Portcullis's
// max_records default.
const maxPage = 1000

// baseDB is one engine's pool and its queries.
type baseDB struct {
	kind     dialects.Kind
	db       *sql.DB
	byID     string
	page     string
	filtered string
	insert   string

	// The prepared statements of the four queries.
	byIDStmt, pageStmt, filteredStmt, insertStmt *sql.Stmt
}

// prepare prepares the queries once on the pool (database/sql prepares
// them again on each connection as needed).
func (b *baseDB) prepare(ctx context.Context) error {
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{{&b.byIDStmt, b.byID}, {&b.pageStmt, b.page}, {&b.filteredStmt, b.filtered}, {&b.insertStmt, b.insert}} {
		s, err := b.db.PrepareContext(ctx, p.text)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.text, err)
		}
		*p.dst = s
	}
	return nil
}

// itemColumns is the item table's column list in table order.
const itemColumns = "id, name, category, price, qty, active, created, notes"

func newBaseDB(kind dialects.Kind, db *sql.DB) *baseDB {
	p := func(i int) string {
		if kind == dialects.Postgres {
			return "$" + strconv.Itoa(i)
		}
		return "?"
	}
	b := &baseDB{kind: kind, db: db}
	b.byID = "SELECT " + itemColumns + " FROM item WHERE id = " + p(1)
	b.page = "SELECT " + itemColumns + " FROM item ORDER BY id LIMIT " + p(1) + " OFFSET " + p(2)
	b.filtered = "SELECT " + itemColumns + " FROM item WHERE category = " + p(1) + " AND price > " + p(2) +
		" ORDER BY price DESC, id ASC LIMIT " + p(3)
	b.insert = "INSERT INTO item (name, category, price, qty, active, created, notes) VALUES (" +
		p(1) + ", " + p(2) + ", " + p(3) + ", " + p(4) + ", " + p(5) + ", " + p(6) + ", " + p(7) + ")"
	if kind != dialects.MySQL {
		b.insert += " RETURNING id"
	}
	return b
}

// baseline is the baseline server.
type baseline struct {
	dbs map[string]*baseDB // by engine name
	mux *http.ServeMux
	// trivialBody is what the pipeline scenario's route writes: the bytes
	// Portcullis answers to GET /api/v2/{data service} (the service's
	// resources), taken once at start-up, so that the scenario measures
	// the pipeline alone however that list grows.
	trivialBody atomic.Pointer[[]byte]
	// upstream and client are the rws scenario's upstream and the client
	// the hand-written proxy (GET /proxy/orders/{id}) reaches it with.
	upstream string
	client   *http.Client
}

// newBaseline returns the baseline for the pools in dbs; upstream, when
// set, is what its proxy route forwards to.
func newBaseline(dbs map[string]*baseDB, upstream string) *baseline {
	b := &baseline{dbs: dbs, mux: http.NewServeMux(), upstream: upstream, client: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true, IdleConnTimeout: time.Minute},
		Timeout:   30 * time.Second,
	}}
	b.mux.HandleFunc("GET /trivial", b.trivial)
	b.mux.HandleFunc("GET /proxy/orders/{id}", b.proxy)
	b.mux.HandleFunc("GET /{engine}/item/{id}", b.getByID)
	b.mux.HandleFunc("GET /{engine}/item", b.getPage)
	b.mux.HandleFunc("GET /{engine}/filtered", b.getFiltered)
	b.mux.HandleFunc("POST /{engine}/item", b.create)
	return b
}

func (b *baseline) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.mux.ServeHTTP(w, r) }

func (b *baseline) trivial(w http.ResponseWriter, r *http.Request) {
	body := b.trivialBody.Load()
	if body == nil {
		writeError(w, http.StatusServiceUnavailable, "not ready")
		return
	}
	writeBody(w, http.StatusOK, *body)
}

// proxy is the best reverse proxy a careful programmer writes with
// net/http for the rws scenario's calls: the same GET sent to the
// upstream on a pooled keep-alive connection, its status, type, length
// and body copied back; nothing else (no headers
// passed on, no rewriting). The rwsproxy scenario puts Portcullis's rws
// service beside it, so that the cost of the second HTTP exchange, which
// any proxy pays, is told apart from what Portcullis adds.
func (b *baseline) proxy(w http.ResponseWriter, r *http.Request) {
	if b.upstream == "" {
		writeError(w, http.StatusNotFound, "no upstream")
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, b.upstream+"/orders/"+r.PathValue("id")+queryOf(r), nil)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	resp, err := b.client.Do(req)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	h["Content-Type"] = resp.Header["Content-Type"]
	if resp.ContentLength >= 0 {
		h["Content-Length"] = []string{strconv.FormatInt(resp.ContentLength, 10)}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body) // the response's ReadFrom, with net/http's pooled buffer
}

// queryOf is r's query with its "?", or "".
func queryOf(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return "?" + r.URL.RawQuery
}

// engine returns the pool for the request's {engine}, or answers 404.
func (b *baseline) engine(w http.ResponseWriter, r *http.Request) *baseDB {
	d := b.dbs[r.PathValue("engine")]
	if d == nil {
		writeError(w, http.StatusNotFound, "unknown engine")
	}
	return d
}

func (b *baseline) getByID(w http.ResponseWriter, r *http.Request) {
	d := b.engine(w, r)
	if d == nil {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "id must be an integer")
		return
	}
	rows, err := d.byIDStmt.QueryContext(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	var it itemRow
	if err := it.scan(rows); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	*buf = it.appendJSON((*buf)[:0])
	*buf = append(*buf, '\n')
	writeBody(w, http.StatusOK, *buf)
}

func (b *baseline) getPage(w http.ResponseWriter, r *http.Request) {
	d := b.engine(w, r)
	if d == nil {
		return
	}
	q := r.URL.Query()
	limit, err1 := intParam(q.Get("limit"), maxPage, 1, maxPage)
	offset, err2 := intParam(q.Get("offset"), 0, 0, 1<<40)
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rows, err := d.pageStmt.QueryContext(r.Context(), limit+1, offset)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writePage(w, rows, limit, offset)
}

func (b *baseline) getFiltered(w http.ResponseWriter, r *http.Request) {
	d := b.engine(w, r)
	if d == nil {
		return
	}
	q := r.URL.Query()
	limit, err1 := intParam(q.Get("limit"), maxPage, 1, maxPage)
	minPrice, err2 := strconv.ParseFloat(q.Get("min_price"), 64)
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rows, err := d.filteredStmt.QueryContext(r.Context(), q.Get("category"), minPrice, limit+1)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writePage(w, rows, limit, 0)
}

// writePage answers {"resource":[…]} with up to limit rows, and meta.next
// when the extra row asked for exists, as Portcullis does.
func writePage(w http.ResponseWriter, rows *sql.Rows, limit, offset int) {
	defer rows.Close()
	buf := getBuf()
	defer putBuf(buf)
	out := append((*buf)[:0], `{"resource":[`...)
	var it itemRow
	n := 0
	for rows.Next() {
		n++
		if n > limit {
			break
		}
		if err := it.scan(rows); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if n > 1 {
			out = append(out, ',')
		}
		out = it.appendJSON(out)
	}
	if err := rows.Err(); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out = append(out, ']')
	if n > limit {
		out = append(out, `,"meta":{"next":`...)
		out = strconv.AppendInt(out, int64(offset+limit), 10)
		out = append(out, '}')
	}
	out = append(out, "}\n"...)
	*buf = out
	writeBody(w, http.StatusOK, out)
}

// itemIn is a record in a POST body.
type itemIn struct {
	Name     string      `json:"name"`
	Category string      `json:"category"`
	Price    json.Number `json:"price"`
	Qty      int64       `json:"qty"`
	Active   bool        `json:"active"`
	Created  string      `json:"created"`
	Notes    *string     `json:"notes"`
}

func (b *baseline) create(w http.ResponseWriter, r *http.Request) {
	d := b.engine(w, r)
	if d == nil {
		return
	}
	var body struct {
		Resource []itemIn `json:"resource"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if len(body.Resource) != 1 {
		writeError(w, http.StatusBadRequest, "exactly one record is expected")
		return
	}
	in := body.Resource[0]
	if in.Name == "" || in.Category == "" || in.Created == "" {
		writeError(w, http.StatusBadRequest, "name, category and created are required")
		return
	}
	if _, err := in.Price.Float64(); err != nil {
		writeError(w, http.StatusBadRequest, "price must be a number")
		return
	}
	if _, err := time.Parse(time.DateTime, in.Created); err != nil {
		writeError(w, http.StatusBadRequest, "created must be a date-time")
		return
	}
	var notes any
	if in.Notes != nil {
		notes = *in.Notes
	}
	args := []any{in.Name, in.Category, in.Price.String(), in.Qty, in.Active, in.Created, notes}
	var id int64
	if d.kind == dialects.MySQL {
		res, err := d.insertStmt.ExecContext(r.Context(), args...)
		if err == nil {
			id, err = res.LastInsertId()
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
	} else if err := d.insertStmt.QueryRowContext(r.Context(), args...).Scan(&id); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	out := append((*buf)[:0], `{"resource":[{"id":`...)
	out = strconv.AppendInt(out, id, 10)
	out = append(out, "}]}\n"...)
	*buf = out
	writeBody(w, http.StatusOK, out)
}

// itemRow receives one row of item. Each column is a raw cell: database/sql
// hands a Scanner the driver's own value, so nothing is converted or
// copied; the encoder knows each column's type and writes the value in the
// form the driver gave (MySQL's text protocol sends numbers as digits,
// which are written as they are). The row is encoded before the next is
// scanned, while the driver's memory is still valid.
type itemRow struct {
	id, name, category, price, qty, active, created, notes rawCell
}

// rawCell keeps the driver's value.
type rawCell struct{ v any }

func (c *rawCell) Scan(src any) error {
	c.v = src
	return nil
}

func (it *itemRow) scan(rows *sql.Rows) error {
	return rows.Scan(&it.id, &it.name, &it.category, &it.price, &it.qty, &it.active, &it.created, &it.notes)
}

// appendJSON appends the row as a JSON object, keys in column order.
func (it *itemRow) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendInt(dst, it.id.v)
	dst = append(dst, `,"name":`...)
	dst = appendText(dst, it.name.v)
	dst = append(dst, `,"category":`...)
	dst = appendText(dst, it.category.v)
	dst = append(dst, `,"price":`...)
	dst = appendDecimal2(dst, it.price.v)
	dst = append(dst, `,"qty":`...)
	dst = appendInt(dst, it.qty.v)
	dst = append(dst, `,"active":`...)
	dst = appendBool(dst, it.active.v)
	dst = append(dst, `,"created":`...)
	dst = appendDateTime(dst, it.created.v)
	dst = append(dst, `,"notes":`...)
	dst = appendText(dst, it.notes.v)
	return append(dst, '}')
}

// appendInt writes an integer column: int64 (SQLite, PostgreSQL) or the
// digits themselves (MySQL).
func appendInt(dst []byte, v any) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case []byte:
		return append(dst, x...)
	case string:
		return append(dst, x...)
	case nil:
		return append(dst, "null"...)
	}
	return appendText(dst, fmt.Sprint(v))
}

// appendText writes a text column; NULL is null.
func appendText(dst []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendJSONString(dst, x)
	case []byte:
		return appendJSONString(dst, x)
	case nil:
		return append(dst, "null"...)
	}
	return appendJSONString(dst, fmt.Sprint(v))
}

// appendDecimal2 writes a DECIMAL(10,2) column with its two decimals:
// PostgreSQL and MySQL send "12.50", SQLite stores 12.5 or 13.
func appendDecimal2(dst []byte, v any) []byte {
	switch x := v.(type) {
	case []byte:
		return appendScale2(dst, x)
	case string:
		return appendScale2(dst, x)
	case float64:
		var tmp [32]byte
		return appendScale2(dst, strconv.AppendFloat(tmp[:0], x, 'g', -1, 64))
	case int64:
		return append(strconv.AppendInt(dst, x, 10), ".00"...)
	case nil:
		return append(dst, "null"...)
	}
	return appendJSONString(dst, fmt.Sprint(v))
}

// appendBool writes a boolean column: bool (PostgreSQL), 0/1 (SQLite) or
// "0"/"1" (MySQL TINYINT(1)).
func appendBool(dst []byte, v any) []byte {
	t := false
	switch x := v.(type) {
	case bool:
		t = x
	case int64:
		t = x != 0
	case []byte:
		t = len(x) > 0 && string(x) != "0"
	case nil:
		return append(dst, "null"...)
	}
	if t {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendDateTime writes a DATETIME/TIMESTAMP column (a time.Time from every
// driver here) as "2006-01-02 15:04:05" in UTC, with a fraction only when
// there is one.
func appendDateTime(dst []byte, v any) []byte {
	t, ok := v.(time.Time)
	if !ok {
		return appendText(dst, v)
	}
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, "2006-01-02 15:04:05.999999999")
		return append(dst, '"')
	}
	h, mi, sec := t.Clock()
	dst = append(dst, '"', byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), ' ',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var frac [9]byte
		for i := 8; i >= 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, '.')
		dst = append(dst, frac[:n]...)
	}
	return append(dst, '"')
}

// appendScale2 writes decimal digits with exactly two decimals.
func appendScale2[T string | []byte](dst []byte, raw T) []byte {
	dot := -1
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case 'e', 'E':
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				return appendJSONString(dst, raw)
			}
			return strconv.AppendFloat(dst, f, 'f', 2, 64)
		case '.':
			dot = i
		}
	}
	if dot < 0 {
		dst = append(dst, raw...)
		return append(dst, ".00"...)
	}
	dst = append(dst, raw...)
	switch len(raw) - dot - 1 {
	case 0:
		return append(dst, "00"...)
	case 1:
		return append(dst, '0')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string escaped as encoding/json
// escapes it: quotes, backslashes and control characters, <, > and & as
// \u003c, \u003e and \u0026, U+2028 and U+2029, invalid UTF-8 as U+FFFD.
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		var rb [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(rb[:copy(rb[:], s[i:])])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// intParam reads a query integer, def when empty, within [lo, hi].
func intParam(s string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q must be an integer from %d to %d", s, lo, hi)
	}
	return n, nil
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		bufPool.Put(b)
	}
}

// writeBody writes a complete JSON response with its length.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers {"error":{"code":…,"message":…}}.
func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg}})
	writeBody(w, status, append(b, '\n'))
}
