package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/dialects"
)

// scenario is one kind of call, made to Portcullis and to its baseline.
type scenario struct {
	name  string
	title string
	// perEngine scenarios run once per database engine; the others once.
	perEngine bool
	// targets returns the requests of each side: the same calls, in the
	// same order, cycled by the load generator.
	targets func(e *env, kind dialects.Kind) (portcullis, baseline []reqSpec)
	// posted marks a write: the answers hold new ids, so they are compared
	// with the ids masked.
	posted bool
	// prepare, when set, puts the instance in the state of one side
	// ("portcullis" or "baseline") before that side's load, for scenarios
	// that compare two states of Portcullis itself (see scriptscenario.go).
	prepare func(ctx context.Context, e *env, kind dialects.Kind, side string) error
}

// scenarios in the order they run (writes last, so reads see the seeded
// table only).
var scenarios = []scenario{
	{name: "pipeline", title: "full pipeline, trivial call", targets: pipelineTargets},
	{name: "byid", title: "table GET by id", perEngine: true, targets: byIDTargets},
	{name: "page25", title: "page of 25 rows", perEngine: true, targets: pageTargets(25)},
	{name: "page1000", title: "page of 1000 rows", perEngine: true, targets: pageTargets(1000)},
	{name: "filtered", title: "filtered query, 25 rows", perEngine: true, targets: filteredTargets},
	{name: "post", title: "POST one record", perEngine: true, targets: postTargets, posted: true},
	{name: "rws", title: "rws call vs upstream", targets: rwsTargets},
	{name: "rwsproxy", title: "rws call vs a hand-written proxy", targets: rwsProxyTargets},
	scriptScenario("lua"),
	scriptScenario("javascript"),
}

func scenarioNames() []string {
	var out []string
	for _, s := range scenarios {
		out = append(out, s.name)
	}
	return out
}

// env is what the scenarios need to build their requests.
type env struct {
	inst     *instance
	baseURL  string // the baseline server
	upstream string // the upstream the rws service fronts
	rows     int    // seeded rows
}

// rng returns a deterministic generator, so that both sides and every run
// get the same request sequence.
func rng() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func (e *env) api(kind dialects.Kind, path string) string {
	return e.inst.url + "/api/v2/" + e.inst.services[kind] + path
}

func (e *env) get(url string, h http.Header) reqSpec {
	return reqSpec{Method: http.MethodGet, URL: url, Header: h}
}

// pipelineTargets: the database service's root, which the backend answers
// without touching the database, against a server that writes the same
// bytes. The difference is the pipeline: routing, API key, session token,
// RBAC, limits, request id, metrics.
func pipelineTargets(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
	return []reqSpec{e.get(e.api(kind, ""), e.inst.headers())}, []reqSpec{e.get(e.baseURL+"/trivial", nil)}
}

func byIDTargets(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
	r := rng()
	var p, b []reqSpec
	for range 256 {
		id := strconv.Itoa(1 + r.IntN(e.rows))
		p = append(p, e.get(e.api(kind, "/_table/item/"+id), e.inst.headers()))
		b = append(b, e.get(e.baseURL+"/"+string(kind)+"/item/"+id, nil))
	}
	return p, b
}

func pageTargets(size int) func(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
	return func(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
		r := rng()
		var p, b []reqSpec
		for range 64 {
			q := "?limit=" + strconv.Itoa(size) + "&offset=" + strconv.Itoa(r.IntN(max(e.rows-size, 1)))
			p = append(p, e.get(e.api(kind, "/_table/item"+q), e.inst.headers()))
			b = append(b, e.get(e.baseURL+"/"+string(kind)+"/item"+q, nil))
		}
		return p, b
	}
}

// filteredTargets: a filter on an indexed column and a range, ordered by
// another column, first page of 25 (one target per category).
func filteredTargets(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
	var p, b []reqSpec
	for _, cat := range categories {
		filter := fmt.Sprintf("(category = '%s') and (price > %d)", cat, filteredMinPrice)
		q := url.Values{"filter": {filter}, "order": {"price desc, id asc"}, "limit": {"25"}}
		p = append(p, e.get(e.api(kind, "/_table/item?"+q.Encode()), e.inst.headers()))
		bq := url.Values{"category": {cat}, "min_price": {strconv.Itoa(filteredMinPrice)}, "limit": {"25"}}
		b = append(b, e.get(e.baseURL+"/"+string(kind)+"/filtered?"+bq.Encode(), nil))
	}
	return p, b
}

func postTargets(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
	var p, b []reqSpec
	h := e.inst.headers()
	h.Set("Content-Type", "application/json")
	bh := http.Header{"Content-Type": {"application/json"}}
	for i := range 64 {
		rec := map[string]any{"name": fmt.Sprintf("posted %d", i), "category": postedCategory,
			"price": json.Number(fmt.Sprintf("%d.%02d", 5+i, i%100)), "qty": i, "active": i%2 == 0,
			"created": "2024-06-01 12:00:00", "notes": "posted by the bench"}
		body, _ := json.Marshal(map[string]any{"resource": []any{rec}})
		p = append(p, reqSpec{Method: http.MethodPost, URL: e.api(kind, "/_table/item"), Header: h, Body: body})
		b = append(b, reqSpec{Method: http.MethodPost, URL: e.baseURL + "/" + string(kind) + "/item", Header: bh, Body: body})
	}
	return p, b
}

// rwsTargets: a GET through the rws service against the same GET sent
// straight to the upstream.
func rwsTargets(e *env, _ dialects.Kind) ([]reqSpec, []reqSpec) {
	return rwsCalls(e, e.upstream)
}

// rwsProxyTargets: the rws scenario's calls against the same calls
// through the baseline's hand-written net/http proxy (baseline.proxy).
func rwsProxyTargets(e *env, _ dialects.Kind) ([]reqSpec, []reqSpec) {
	return rwsCalls(e, e.baseURL+"/proxy")
}

// rwsCalls returns the rws scenarios' orders through the rws service and,
// for the baseline, the same paths under other.
func rwsCalls(e *env, other string) (p, b []reqSpec) {
	for i := range 16 {
		path := "/orders/" + strconv.Itoa(100+i) + "?expand=lines"
		p = append(p, e.get(e.inst.url+"/api/v2/"+rwsService+path, e.inst.headers()))
		b = append(b, e.get(other+path, nil))
	}
	return p, b
}

// upstreamHandler is the remote service behind rws: a small JSON document
// per order, as a typical internal API answers.
func upstreamHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/orders/")
		n, err := strconv.Atoi(id)
		if err != nil {
			writeError(w, http.StatusNotFound, "no such order")
			return
		}
		buf := getBuf()
		defer putBuf(buf)
		out := append((*buf)[:0], `{"id":`...)
		out = strconv.AppendInt(out, int64(n), 10)
		out = append(out, `,"status":"shipped","currency":"EUR","total":129.90,"customer":{"id":42,"name":"Ada Lovelace","email":"ada@example.com"},"lines":[`...)
		for i := range 3 {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"sku":"SKU-`...)
			out = strconv.AppendInt(out, int64(n*10+i), 10)
			out = append(out, `","qty":2,"price":21.65}`...)
		}
		out = append(out, "]}\n"...)
		*buf = out
		writeBody(w, http.StatusOK, out)
	})
}
