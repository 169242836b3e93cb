package script

// Aliases returns the other type names a script may give for engine
// name (v8js for javascript, python for python3), as DreamFactory spells
// them.
func Aliases(name string) []string {
	switch name {
	case "javascript":
		return []string{"v8js"}
	case "python3":
		return []string{"python"}
	}
	return nil
}

// Canonical returns the engine a script type names: "v8js" and "js" are
// javascript, "python" is python3; other names are returned lower-cased.
func Canonical(typ string) string { return canonical(typ) }
