package sqldb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// cachedRoutines are the routines read from the database.
type cachedRoutines struct {
	list []*dialects.Routine
	at   time.Time
}

// routineMaxAge is how long the listed routines are trusted; a routine
// created or changed behind the API is seen after it (or at once, by a
// call that names an unknown one or that the database refuses as having
// the wrong parameters).
var routineMaxAge = 10 * time.Second

// loadRoutines returns the database's routines, read again when the cached
// list is older than maxAge.
func (b *Backend) loadRoutines(ctx context.Context, db *bun.DB, rr dialects.RoutineReader, maxAge time.Duration) ([]*dialects.Routine, error) {
	b.syncSchemaEpoch()
	if c := b.sync.routines.Load(); c != nil && time.Since(c.at) < maxAge {
		return c.list, nil
	}
	epoch := b.currentEpoch()
	list, err := rr.Routines(ctx, db)
	if err != nil {
		return nil, b.dbError(fmt.Errorf("list routines: %w", err))
	}
	if b.currentEpoch() == epoch {
		b.sync.routines.Store(&cachedRoutines{list: list, at: time.Now()})
	}
	return list, nil
}

func (b *Backend) routineReader() (dialects.RoutineReader, bool) {
	b.mu.Lock()
	d := b.dialect
	b.mu.Unlock()
	rr, ok := d.(dialects.RoutineReader)
	return rr, ok
}

func routineNoun(typ dialects.RoutineType) (noun, title, path string) {
	if typ == dialects.Procedure {
		return "procedure", "Procedure", "_proc"
	}
	return "function", "Function", "_func"
}

// serveRoutine handles _proc and _func: GET lists the routines (names;
// fields=* or ids describe them), GET and POST on one call it.
func (b *Backend) serveRoutine(w http.ResponseWriter, r *http.Request, verb string, typ dialects.RoutineType, rest []string) error {
	noun, title, path := routineNoun(typ)
	if b.kind == dialects.SQLite {
		return apierr.NotImplemented("Stored %ss are not supported by SQLite databases; service '%s' has none.", noun, b.name)
	}
	if len(rest) > 1 || len(rest) == 1 && rest[0] == "" {
		return apierr.NotFound("Resource '%s/%s' not found for service '%s'.", path, strings.Join(rest, "/"), b.name)
	}
	ctx := r.Context()
	db, err := b.pool(ctx)
	if err != nil {
		return err
	}
	rr, ok := b.routineReader()
	if !ok {
		return apierr.NotImplemented("Stored %ss are not supported by this database.", noun)
	}
	if len(rest) == 0 {
		if verb != http.MethodGet {
			return apierr.BadRequest("%s requests for resource '%s' are not currently supported by the '%s' service.", verb, path, b.name)
		}
		list, err := b.loadRoutines(ctx, db, rr, routineMaxAge)
		if err != nil {
			return err
		}
		return listRoutines(w, r, list, typ)
	}
	if verb != http.MethodGet && verb != http.MethodPost {
		return apierr.BadRequest("%s requests for resource '%s/%s' are not currently supported by the '%s' service.", verb, path, rest[0], b.name)
	}
	call, err := readCall(r)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		maxAge := routineMaxAge
		if attempt > 0 {
			maxAge = 0
		}
		list, err := b.loadRoutines(ctx, db, rr, maxAge)
		if err != nil {
			return err
		}
		cands := findRoutines(list, typ, rest[0])
		if len(cands) == 0 && attempt == 0 {
			if list, err = b.loadRoutines(ctx, db, rr, schemaRetryAge); err != nil {
				return err
			}
			cands = findRoutines(list, typ, rest[0])
		}
		if len(cands) == 0 {
			return apierr.NotFound("%s '%s' does not exist in the database.", title, rest[0])
		}
		rt, err := call.choose(cands, title)
		if err != nil {
			return err
		}
		args, err := call.bind(b.kind, rt, title)
		if err != nil {
			return err
		}
		out, err := b.call(ctx, db, rt, args, call)
		// A routine changed behind the cache: read the list again, once.
		if err != nil && attempt == 0 && staleRoutine(err) {
			continue
		}
		if err != nil {
			return b.callError(err, noun)
		}
		return writeRaw(w, out)
	}
}

// findRoutines returns the routines of typ called name: the exact name,
// else those matching without regard to case.
func findRoutines(list []*dialects.Routine, typ dialects.RoutineType, name string) []*dialects.Routine {
	var exact, folded []*dialects.Routine
	for _, r := range list {
		if r.Type != typ {
			continue
		}
		if r.Name == name {
			exact = append(exact, r)
		} else if strings.EqualFold(r.Name, name) {
			folded = append(folded, r)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}

// routineObject describes a routine (DreamFactory's RoutineSchema).
type routineObject struct {
	Alias        any           `json:"alias"`
	Name         string        `json:"name"`
	Label        string        `json:"label"`
	Description  any           `json:"description"`
	Native       []any         `json:"native"`
	ReturnType   any           `json:"return_type"`
	ReturnSchema []any         `json:"return_schema"`
	Params       []paramObject `json:"params"`
	Access       []string      `json:"access"`
}

// paramObject describes a parameter (DreamFactory's ParameterSchema).
type paramObject struct {
	Name      string `json:"name"`
	Position  int    `json:"position"`
	ParamType string `json:"param_type"`
	Type      string `json:"type"`
	DBType    string `json:"db_type"`
	Length    *int   `json:"length"`
	Precision *int   `json:"precision"`
	Scale     *int   `json:"scale"`
	Default   any    `json:"default"`
}

func describeRoutine(r *dialects.Routine) *routineObject {
	o := &routineObject{Name: r.Name, Label: label(r.Name), Description: nullIfEmpty(r.Comment), Native: []any{},
		ReturnSchema: []any{}, Params: make([]paramObject, 0, len(r.Params)), Access: []string{"GET", "POST"}}
	switch {
	case r.Type == dialects.Procedure, r.ReturnsVoid:
	case r.ReturnsSet:
		o.ReturnType = "table"
	case r.ReturnType == "":
		o.ReturnType = "row"
	default:
		o.ReturnType = apiType(r.ReturnType)
	}
	for _, p := range r.Params {
		po := paramObject{Name: p.Name, Position: p.Position, ParamType: string(p.Mode), Type: apiType(p.Type), DBType: p.DBType}
		if p.Length > 0 {
			po.Length = ptr(p.Length)
		}
		if p.Precision > 0 {
			po.Precision, po.Scale = ptr(p.Precision), ptr(p.Scale)
		}
		if p.Default != nil {
			po.Default = *p.Default
		}
		o.Params = append(o.Params, po)
	}
	return o
}

// listRoutines answers GET _proc and _func.
func listRoutines(w http.ResponseWriter, r *http.Request, list []*dialects.Routine, typ dialects.RoutineType) error {
	v := r.URL.Query()
	fields := strings.TrimSpace(v.Get("fields"))
	if fields == "" {
		fields = strings.TrimSpace(v.Get("select"))
	}
	var ids []string
	_, idsGiven := v["ids"]
	if idsGiven {
		ids = splitNames(v.Get("ids"))
	}
	var names []string
	var objs []any
	seen := map[string]bool{}
	for _, rt := range list {
		if rt.Type != typ || idsGiven && !containsFold(ids, rt.Name) {
			continue
		}
		if fields == "" && !idsGiven {
			if !seen[rt.Name] {
				seen[rt.Name] = true
				names = append(names, rt.Name)
			}
			continue
		}
		objs = append(objs, pick(describeRoutine(rt), fields))
	}
	if fields == "" && !idsGiven {
		if names == nil {
			names = []string{}
		}
		return writeList(w, names, r)
	}
	if objs == nil {
		objs = []any{}
	}
	return writeJSON(w, map[string]any{"resource": objs})
}

// callReq is what a call asks: parameters by name and by position, and
// DreamFactory's options.
type callReq struct {
	named map[string]any // lowercased name → value
	// query holds the query string's values by lowercased name; they
	// count only for names that are parameters.
	query      map[string]string
	positional []any
	wrapper    string
	returns    string
}

// readCall reads the parameters: the body's params (a list of {name,
// value}, a list of values by position, or an object of name: value or
// name: {value}), then the query string for the parameters the body did
// not give. wrapper and returns may be in either.
func readCall(r *http.Request) (*callReq, error) {
	c := &callReq{named: map[string]any{}, query: map[string]string{}}
	for k, vs := range r.URL.Query() {
		if len(vs) > 0 {
			c.query[strings.ToLower(k)] = vs[len(vs)-1]
		}
	}
	c.wrapper = c.query["wrapper"]
	c.returns = c.query["returns"]
	var data []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		if data, err = io.ReadAll(r.Body); err != nil {
			return nil, apierr.As(err)
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return c, nil
	}
	var body map[string]any
	if err := apierr.Unmarshal(data, &body, false); err != nil {
		return nil, err
	}
	for k, v := range body {
		switch strings.ToLower(k) {
		case "wrapper":
			if s, ok := v.(string); ok && c.wrapper == "" {
				c.wrapper = s
			}
		case "returns":
			if s, ok := v.(string); ok && c.returns == "" {
				c.returns = s
			}
		case "params":
			if err := c.readParams(v); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func (c *callReq) readParams(v any) error {
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for name, val := range v {
			if m, ok := val.(map[string]any); ok {
				if inner, has := m["value"]; has {
					val = inner
				}
			}
			c.named[strings.ToLower(name)] = val
		}
	case []any:
		for i, it := range v {
			m, ok := it.(map[string]any)
			if !ok {
				c.positional = append(c.positional, it)
				continue
			}
			name, _ := m["name"].(string)
			val, hasValue := m["value"]
			switch {
			case name != "":
				c.named[strings.ToLower(name)] = val
			case hasValue:
				c.positional = append(c.positional, val)
			default:
				return apierr.BadRequest("Parameter %d has neither name nor value.", i)
			}
		}
	default:
		return apierr.BadRequest("params must be a list of {name, value} objects, a list of values or an object.")
	}
	return nil
}

// choose picks the routine the call means among overloads: the one whose
// parameters include every name given and that takes as many positional
// values.
func (c *callReq) choose(cands []*dialects.Routine, title string) (*dialects.Routine, error) {
	if len(cands) == 1 {
		return cands[0], nil
	}
	var fit []*dialects.Routine
	for _, rt := range cands {
		ok := true
		for name := range c.named {
			if p := rt.Param(name); p == nil || !p.IsInput() {
				ok = false
			}
		}
		inputs := 0
		for _, p := range rt.Params {
			if p.IsInput() {
				inputs++
			}
		}
		if len(c.positional) > inputs {
			ok = false
		}
		if ok {
			fit = append(fit, rt)
		}
	}
	if len(fit) == 1 {
		return fit[0], nil
	}
	// Prefer the one version whose inputs are exactly those given (the
	// others having defaults).
	var exact []*dialects.Routine
	for _, rt := range fit {
		all, pos := true, 0
		for _, p := range rt.Params {
			if !p.IsInput() {
				continue
			}
			_, named := c.named[strings.ToLower(p.Name)]
			_, queried := c.query[strings.ToLower(p.Name)]
			given := pos < len(c.positional) || p.Name != "" && (named || queried)
			pos++
			if !given && !p.HasDefault {
				all = false
			}
		}
		if all {
			exact = append(exact, rt)
		}
	}
	if len(exact) == 1 {
		return exact[0], nil
	}
	return nil, apierr.BadRequest("%s '%s' has %d versions with different parameters and the parameters given do not tell which to call; name every parameter.", title, cands[0].Name, len(cands))
}

// arg is the value bound to one parameter.
type arg struct {
	given bool
	value any
}

// bind converts the values given to the parameters' types (positional
// values go to the input parameters in order). Parameters not given are
// left out when they have a default and are NULL otherwise; a value for an
// OUT parameter is ignored.
func (c *callReq) bind(kind dialects.Kind, rt *dialects.Routine, title string) ([]arg, error) {
	args := make([]arg, len(rt.Params))
	conv := &tableReq{kind: kind}
	set := func(i int, v any) error {
		p := rt.Params[i]
		val, err := conv.inputValue(&dialects.Column{Name: p.Name, Type: p.Type}, v)
		if err != nil {
			ae := apierr.As(err)
			return apierr.BadRequest("%s", strings.Replace(ae.Message, "for field", "for parameter", 1)).WithCause(err)
		}
		args[i] = arg{given: true, value: val}
		return nil
	}
	pos := 0
	for i, p := range rt.Params {
		if !p.IsInput() {
			continue
		}
		if pos < len(c.positional) {
			if err := set(i, c.positional[pos]); err != nil {
				return nil, err
			}
			pos++
		}
	}
	if pos < len(c.positional) {
		return nil, apierr.BadRequest("%s '%s' takes %d input parameters; %d values were given.", title, rt.Name, pos, len(c.positional))
	}
	for name, v := range c.named {
		p := rt.Param(name)
		if p == nil {
			return nil, apierr.BadRequest("%s '%s' has no parameter '%s'.", title, rt.Name, name)
		}
		if p.IsInput() {
			if err := set(p.Position-1, v); err != nil {
				return nil, err
			}
		}
	}
	for i, p := range rt.Params {
		if args[i].given || !p.IsInput() || p.Name == "" {
			continue
		}
		if v, ok := c.query[strings.ToLower(p.Name)]; ok {
			if err := set(i, v); err != nil {
				return nil, err
			}
		}
	}
	return args, nil
}

// call runs the routine and returns the JSON response.
func (b *Backend) call(ctx context.Context, db *bun.DB, rt *dialects.Routine, args []arg, c *callReq) ([]byte, error) {
	var res *callResult
	var err error
	switch b.kind {
	case dialects.Postgres:
		res, err = b.callPostgres(ctx, db, rt, args)
	case dialects.MySQL:
		res, err = b.callMySQL(ctx, db, rt, args)
	default:
		return nil, apierr.NotImplemented("Stored routines are not supported by this database.")
	}
	if err != nil {
		return nil, err
	}
	return res.render(rt, c)
}

// callResult is what a call returned.
type callResult struct {
	sets    [][]rowjson.Record // result sets
	outputs rowjson.Record     // OUT and INOUT values by parameter name
	scalar  any                // a scalar function's value
	isValue bool               // scalar is set
}

// render shapes the result as DreamFactory does: a scalar function's value
// bare; rows as {"resource":[…]} (several result sets as a list of lists);
// OUT and INOUT values as an object with the rows under "resource"; the
// wrapper option renames "resource" (and wraps a scalar); returns takes
// the first value of the first row, cast to that simple type.
func (res *callResult) render(rt *dialects.Routine, c *callReq) ([]byte, error) {
	wrapper := strings.TrimSpace(c.wrapper)
	if ret := strings.TrimSpace(c.returns); ret != "" && !strings.EqualFold(ret, "table") {
		t, err := dialects.ParseFieldType(ret)
		if err != nil {
			return nil, apierr.BadRequest("returns: %v.", err)
		}
		var v any
		switch {
		case res.isValue:
			v = res.scalar
		case len(res.sets) > 0 && len(res.sets[0]) > 0 && len(res.sets[0][0]) > 0:
			v = res.sets[0][0][0].Value
		case len(res.outputs) > 0:
			v = res.outputs[0].Value
		}
		res = &callResult{scalar: castValue(t, v), isValue: true}
	}
	if res.isValue {
		if wrapper != "" {
			return json.Marshal(rowjson.Record{{Name: wrapper, Value: res.scalar}})
		}
		return rowjson.AppendGo(nil, res.scalar)
	}
	if wrapper == "" {
		wrapper = "resource"
	}
	var rows any = []rowjson.Record{}
	switch len(res.sets) {
	case 0:
	case 1:
		if res.sets[0] != nil {
			rows = res.sets[0]
		}
	default:
		lists := make([]any, len(res.sets))
		for i, s := range res.sets {
			if s == nil {
				s = []rowjson.Record{}
			}
			lists[i] = s
		}
		rows = lists
	}
	if len(res.outputs) > 0 {
		out := append(rowjson.Record{}, res.outputs...)
		if len(res.sets) > 0 {
			out = append(out, rowjson.Field{Name: wrapper, Value: rows})
		}
		return json.Marshal(out)
	}
	return json.Marshal(rowjson.Record{{Name: wrapper, Value: rows}})
}

// castValue gives a value read back without its declared type (a MySQL
// session variable, a scalar) the JSON type of t.
func castValue(t dialects.FieldType, v any) any {
	var s string
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		s = strings.TrimSpace(x)
	case json.Number:
		s = x.String()
	case []byte:
		s = string(x)
	case int64, uint64, float64:
		s = fmt.Sprint(x)
	case bool:
		if t.IsNumeric() {
			if x {
				return json.Number("1")
			}
			return json.Number("0")
		}
		return v
	default:
		return v
	}
	switch {
	case t == dialects.TypeBoolean:
		switch strings.ToLower(s) {
		case "1", "true", "t", "yes", "y", "on":
			return true
		case "0", "false", "f", "no", "n", "off":
			return false
		}
	case t.IsInteger():
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(s)
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int64(f)) {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
	case t.IsNumeric():
		if isNumber(s) {
			return json.Number(strings.TrimPrefix(s, "+"))
		}
	case t.IsText() || t.IsTemporal():
		if _, ok := v.(string); !ok {
			return s
		}
	}
	return v
}

// readSets reads every result set of rows (closing it).
func readSets(kind dialects.Kind, rows *sql.Rows) ([][]rowjson.Record, error) {
	defer rows.Close()
	var sets [][]rowjson.Record
	for {
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		if len(cols) > 0 {
			rj, err := rowjson.New(kind, rows, rowjson.Options{})
			if err != nil {
				return nil, err
			}
			set := []rowjson.Record{}
			for rj.Next() {
				set = append(set, rj.Record())
			}
			if err := rj.Err(); err != nil {
				return nil, err
			}
			sets = append(sets, set)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	return sets, rows.Err()
}

// callPostgres calls a PostgreSQL routine. Arguments are passed by name
// (positionally when a parameter has no name), each value bound and cast to
// the parameter's type from the catalog, so that overloads resolve as the
// catalog says: CALL p(…) for procedures (OUT parameters take NULL; the
// call returns their values as one row), SELECT f(…) for functions
// returning one value, SELECT * FROM f(…) for functions returning rows or
// a record.
func (b *Backend) callPostgres(ctx context.Context, db *bun.DB, rt *dialects.Routine, args []arg) (*callResult, error) {
	named := true
	for _, p := range rt.Params {
		if p.Name == "" {
			named = false
		}
	}
	// Positionally, only trailing parameters with defaults may be left out.
	last := len(rt.Params) - 1
	if !named {
		for last >= 0 && (rt.Type == dialects.Function && !rt.Params[last].IsInput() ||
			rt.Params[last].IsInput() && !args[last].given && rt.Params[last].HasDefault) {
			last--
		}
	}
	var list []string
	var qargs []any
	for i, p := range rt.Params {
		if i > last {
			break
		}
		if rt.Type == dialects.Function && !p.IsInput() {
			continue // a function's OUT parameters are its result columns
		}
		if p.IsInput() && !args[i].given && p.HasDefault && named {
			continue
		}
		var item string
		if named {
			item = "? => "
			qargs = append(qargs, bun.Ident(p.Name))
		}
		if args[i].given {
			item += "CAST(? AS " + p.DBType + ")"
			qargs = append(qargs, args[i].value)
		} else {
			item += "CAST(NULL AS " + p.DBType + ")"
		}
		list = append(list, item)
	}
	call := "?(" + strings.Join(list, ", ") + ")"
	qargs = append([]any{bun.Ident(rt.Name)}, qargs...)
	switch {
	case rt.Type == dialects.Procedure:
		rows, err := db.QueryContext(ctx, "CALL "+call, qargs...)
		if err != nil {
			return nil, err
		}
		sets, err := readSets(dialects.Postgres, rows)
		if err != nil {
			return nil, err
		}
		res := &callResult{}
		var row rowjson.Record
		if len(sets) > 0 && len(sets[0]) > 0 {
			row = sets[0][0]
		}
		k := 0
		for _, p := range rt.Params {
			if !p.IsOutput() {
				continue
			}
			var v any
			if k < len(row) {
				v = row[k].Value
			}
			k++
			res.outputs = append(res.outputs, rowjson.Field{Name: p.Name, Value: v})
		}
		return res, nil
	case rt.ReturnsVoid:
		if _, err := db.ExecContext(ctx, "SELECT "+call, qargs...); err != nil {
			return nil, err
		}
		return &callResult{isValue: true}, nil
	case rt.ReturnType != "" && !rt.ReturnsSet:
		rows, err := db.QueryContext(ctx, "SELECT "+call+" AS output", qargs...)
		if err != nil {
			return nil, err
		}
		sets, err := readSets(dialects.Postgres, rows)
		if err != nil {
			return nil, err
		}
		res := &callResult{isValue: true}
		if len(sets) > 0 && len(sets[0]) > 0 && len(sets[0][0]) > 0 {
			res.scalar = castValue(rt.ReturnType, sets[0][0][0].Value)
		}
		return res, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+call, qargs...)
	if err != nil {
		return nil, err
	}
	sets, err := readSets(dialects.Postgres, rows)
	if err != nil {
		return nil, err
	}
	return &callResult{sets: sets}, nil
}

// callMySQL calls a MySQL routine on one connection. A function is
// SELECT f(…). A procedure's IN values are bound in CALL p(…); its OUT
// and INOUT parameters are session variables, the INOUT ones first set to
// their bound values, read back after the call's result sets, and cleared
// before the connection returns to the pool.
func (b *Backend) callMySQL(ctx context.Context, db *bun.DB, rt *dialects.Routine, args []arg) (*callResult, error) {
	var list []string
	var qargs []any
	if rt.Type == dialects.Function {
		for i := range rt.Params {
			list = append(list, "?")
			qargs = append(qargs, args[i].value)
		}
		q := "SELECT ?(" + strings.Join(list, ", ") + ") AS output"
		rows, err := db.QueryContext(ctx, q, append([]any{bun.Ident(rt.Name)}, qargs...)...)
		if err != nil {
			return nil, err
		}
		sets, err := readSets(dialects.MySQL, rows)
		if err != nil {
			return nil, err
		}
		res := &callResult{isValue: true}
		if len(sets) > 0 && len(sets[0]) > 0 && len(sets[0][0]) > 0 {
			res.scalar = castValue(rt.ReturnType, sets[0][0][0].Value)
		}
		return res, nil
	}

	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	variable := func(i int) string { return "@_portcullis_p" + strconv.Itoa(i+1) }
	var sets, clear []string
	var setArgs []any
	for i, p := range rt.Params {
		switch {
		case p.Mode == dialects.ParamIn:
			list = append(list, "?")
			qargs = append(qargs, args[i].value)
			continue
		case p.Mode == dialects.ParamInOut && args[i].given:
			sets = append(sets, variable(i)+" = ?")
			setArgs = append(setArgs, args[i].value)
		default:
			sets = append(sets, variable(i)+" = NULL")
		}
		clear = append(clear, variable(i)+" = NULL")
		list = append(list, variable(i))
	}
	if len(clear) > 0 {
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "SET "+strings.Join(clear, ", ")); err != nil {
				b.log.Warn("could not clear session variables after a procedure call", "error", err)
			}
		}()
		if _, err := conn.ExecContext(ctx, "SET "+strings.Join(sets, ", "), setArgs...); err != nil {
			return nil, err
		}
	}
	rows, err := conn.QueryContext(ctx, "CALL ?("+strings.Join(list, ", ")+")", append([]any{bun.Ident(rt.Name)}, qargs...)...)
	if err != nil {
		return nil, err
	}
	res := &callResult{}
	if res.sets, err = readSets(dialects.MySQL, rows); err != nil {
		return nil, err
	}
	if len(clear) == 0 {
		return res, nil
	}
	var cols []string
	var colArgs []any
	for i, p := range rt.Params {
		if p.IsOutput() {
			cols = append(cols, variable(i)+" AS ?")
			colArgs = append(colArgs, bun.Ident(p.Name))
		}
	}
	rows, err = conn.QueryContext(ctx, "SELECT "+strings.Join(cols, ", "), colArgs...)
	if err != nil {
		return nil, err
	}
	outs, err := readSets(dialects.MySQL, rows)
	if err != nil {
		return nil, err
	}
	var row rowjson.Record
	if len(outs) > 0 && len(outs[0]) > 0 {
		row = outs[0][0]
	}
	k := 0
	for _, p := range rt.Params {
		if !p.IsOutput() {
			continue
		}
		var v any
		if k < len(row) {
			v = castValue(p.Type, row[k].Value)
		}
		k++
		res.outputs = append(res.outputs, rowjson.Field{Name: p.Name, Value: v})
	}
	return res, nil
}

// staleRoutine reports whether the database refused a call because the
// routine is not what the cached list says (dropped or redefined).
func staleRoutine(err error) bool {
	var pe *pgconn.PgError
	var me *mysqldrv.MySQLError
	switch {
	case errors.As(err, &pe):
		return pe.Code == "42883" || pe.Code == "42809" // undefined_function, wrong_object_type
	case errors.As(err, &me):
		return me.Number == 1305 || me.Number == 1318 // does not exist, wrong argument count
	}
	return false
}

// callError turns a failed call into an API error: the routine's own
// errors (PostgreSQL RAISE EXCEPTION, MySQL SIGNAL) are 400 with their
// message, meant for the caller; the others as any database error.
func (b *Backend) callError(err error, noun string) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	var pe *pgconn.PgError
	var me *mysqldrv.MySQLError
	switch {
	case errors.As(err, &pe) && (pe.Code == "P0001" || strings.HasPrefix(pe.Code, "45")):
		return apierr.BadRequest("Failed to call database stored %s: %s", noun, pe.Message).WithCause(err)
	case errors.As(err, &me) && (me.Number == 1644 || me.Number == 1318):
		return apierr.BadRequest("Failed to call database stored %s: %s", noun, me.Message).WithCause(err)
	}
	return b.dbError(err)
}
