package system

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// attachedScript is a script attached to an event, as GET /event lists
// it: a record of /system/event_script or a file of DIR/scripts.
type attachedScript struct {
	name, typ, source, path string
	active, modify, inForce bool
}

func (a attachedScript) object() object {
	o := object{{"name", a.name}, {"type", a.typ}, {"source", a.source}, {"is_active", a.active},
		{"allow_event_modification", a.modify}, {"in_force", a.inForce}}
	if a.path != "" {
		o = append(o, member{"path", a.path})
	}
	return o
}

// attachedScripts lists the event scripts by service: every record, and
// every event script file of DIR/scripts. A record is in force when it is
// active; a file when no record has its name (a record wins over a file,
// active or not).
func (b *Backend) attachedScripts(snap *store.Snapshot) map[string][]attachedScript {
	out := map[string][]attachedScript{}
	add := func(a attachedScript) {
		svc, _, _ := strings.Cut(a.name, ".")
		out[svc] = append(out[svc], a)
	}
	records := map[string]bool{}
	for _, rec := range snap.EventScripts {
		records[rec.Name] = true
		add(attachedScript{name: rec.Name, typ: script.Canonical(rec.Type), source: "record", active: rec.IsActive,
			modify: rec.AllowEventModification, inForce: rec.IsActive})
	}
	if b.deps.DataDir != "" {
		files, _ := script.ReadDir(filepath.Join(b.deps.DataDir, "scripts"))
		for _, f := range files {
			if f.IsEvent() {
				add(attachedScript{name: f.Name, typ: f.Type, source: "file", path: f.Path, active: true, modify: f.AllowModification,
					inForce: !records[f.Name]})
			}
		}
	}
	for _, l := range out {
		sort.SliceStable(l, func(i, j int) bool { return l[i].name < l[j].name })
	}
	return out
}

// eventPattern matches the script names attached to one endpoint
// (db._table.{table_name}.get): the endpoint itself (the event fired after
// the response) and its .pre_process, .post_process and .queued events,
// each placeholder matching the placeholder itself or any one segment
// (db._table.contact.get.pre_process).
func eventPattern(endpoint string) *regexp.Regexp {
	q := regexp.QuoteMeta(endpoint)
	q = regexp.MustCompile(`\\\{[A-Za-z0-9_]+\\\}`).ReplaceAllString(q, `[^.]+`)
	return regexp.MustCompile(`^` + q + `(\.(pre_process|post_process|queued))?$`)
}

// scriptsOf takes from scripts those attached to one of endpoints
// (unsuffixed event names) and returns them; the rest stay in *scripts.
func scriptsOf(endpoints []string, scripts *[]attachedScript) []object {
	if len(*scripts) == 0 {
		return nil
	}
	pats := make([]*regexp.Regexp, len(endpoints))
	for i, e := range endpoints {
		pats[i] = eventPattern(e)
	}
	var out []object
	rest := (*scripts)[:0:0]
	for _, a := range *scripts {
		matched := false
		for _, p := range pats {
			if p.MatchString(a.name) {
				matched = true
				break
			}
		}
		if matched {
			out = append(out, a.object())
		} else {
			rest = append(rest, a)
		}
	}
	*scripts = rest
	return out
}

// eventOf splits a script's name into its event path and its endpoint
// (db._table.contact.{id}.get.pre_process: db._table.contact.{id} and
// db._table.contact.{id}.get).
func eventOf(name string) (path, endpoint string) {
	endpoint = name
	for _, s := range []string{".pre_process", ".post_process", ".queued"} {
		if e, ok := strings.CutSuffix(name, s); ok {
			endpoint = e
			break
		}
	}
	path = endpoint
	if i := strings.LastIndex(endpoint, "."); i > 0 {
		path = endpoint[:i]
	}
	return path, endpoint
}
