package contract

import "strings"

// Keys returns the names a record of t may carry under its contract: its
// fields, their aliases and its relationships, lowercased (responses
// lowercase field names).
func (t *Table) Keys() map[string]bool {
	keys := make(map[string]bool, len(t.Fields)+len(t.Relationships))
	for _, f := range t.Fields {
		keys[strings.ToLower(f.Name)] = true
		if f.Alias != nil {
			keys[strings.ToLower(*f.Alias)] = true
		}
	}
	for _, r := range t.Relationships {
		keys[strings.ToLower(r.Name)] = true
	}
	return keys
}

// Shaper drops from records the keys their table's contract does not
// have. Lookup returns the contract of a related table, or nil when that
// table has none (its records are then left as they are).
type Shaper struct {
	Lookup func(table string) *Table
	keys   map[*Table]map[string]bool
}

func (s *Shaper) keysOf(t *Table) map[string]bool {
	if s.keys == nil {
		s.keys = map[*Table]map[string]bool{}
	}
	k, ok := s.keys[t]
	if !ok {
		k = t.Keys()
		s.keys[t] = k
	}
	return k
}

// Record shapes one record of t in place, and the related records it
// embeds by their own table's contract, one level deep. It reports
// whether anything was dropped.
func (s *Shaper) Record(rec map[string]any, t *Table) bool {
	return s.record(rec, t, true)
}

func (s *Shaper) record(rec map[string]any, t *Table, deep bool) bool {
	keys := s.keysOf(t)
	changed := false
	for k, v := range rec {
		lk := strings.ToLower(k)
		if !keys[lk] {
			delete(rec, k)
			changed = true
			continue
		}
		if !deep || s.Lookup == nil {
			continue
		}
		rel := relationshipFold(t, lk)
		if rel == nil {
			continue
		}
		rt := s.Lookup(rel.RefTable)
		if rt == nil {
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			changed = s.record(v, rt, false) || changed
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					changed = s.record(m, rt, false) || changed
				}
			}
		}
	}
	return changed
}

func relationshipFold(t *Table, lower string) *Relationship {
	for i := range t.Relationships {
		if strings.ToLower(t.Relationships[i].Name) == lower {
			return &t.Relationships[i]
		}
	}
	return nil
}

// Body shapes a table response body as decoded JSON: {"resource": [...]}
// with any other keys (meta) kept, a list of records, or one record. It
// reports whether anything was dropped.
func (s *Shaper) Body(body any, t *Table) bool {
	switch b := body.(type) {
	case []any:
		changed := false
		for _, e := range b {
			if m, ok := e.(map[string]any); ok {
				changed = s.Record(m, t) || changed
			}
		}
		return changed
	case map[string]any:
		if list, ok := b["resource"].([]any); ok {
			return s.Body(list, t)
		}
		_, res := b["resource"]
		_, meta := b["meta"]
		if res || meta && len(b) == 1 {
			return false // count_only, or a resource that is not a list
		}
		return s.Record(b, t)
	}
	return false
}
