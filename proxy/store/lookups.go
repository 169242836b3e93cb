package store

// LookupsFor merges the named lookups that apply to an app, a role and a
// user (zero ids for none) with DreamFactory's precedence: global, then the
// app's, then the role's, then the user's, a later level overwriting an
// earlier one. With private false, a name whose winning lookup is private is
// left out (a private lookup at a higher level hides a public one of the
// same name); with private true, private values are included (service
// configuration and scripts may use them).
func (s *Snapshot) LookupsFor(appID, roleID, userID int64, private bool) map[string]string {
	if s == nil || len(s.Lookups) == 0 {
		return map[string]string{}
	}
	levels := [...]func(l *Lookup) bool{
		func(l *Lookup) bool { return l.AppID == nil && l.RoleID == nil && l.UserID == nil },
		func(l *Lookup) bool { return appID != 0 && l.AppID != nil && *l.AppID == appID },
		func(l *Lookup) bool { return roleID != 0 && l.RoleID != nil && *l.RoleID == roleID },
		func(l *Lookup) bool { return userID != 0 && l.UserID != nil && *l.UserID == userID },
	}
	merged := map[string]*Lookup{}
	for _, at := range levels {
		for _, l := range s.Lookups {
			if at(l) {
				merged[l.Name] = l
			}
		}
	}
	m := make(map[string]string, len(merged))
	for name, l := range merged {
		if private || !l.Private {
			m[name] = l.Value
		}
	}
	return m
}
