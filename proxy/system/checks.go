package system

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// text checks a string field: trimmed of surrounding blanks, required when
// asked, at most max characters.
func text(p *problems, name string, v *string, required bool, max int) {
	*v = strings.TrimSpace(*v)
	if *v == "" {
		if required {
			p.add(name, "%s is required", name)
		}
		return
	}
	if max > 0 && utf8.RuneCountInString(*v) > max {
		p.add(name, "%s must have at most %d characters", name, max)
	}
	if !utf8.ValidString(*v) || strings.ContainsRune(*v, 0) {
		p.add(name, "%s must be valid UTF-8 text without NUL characters", name)
	}
}

// email checks an e-mail address field.
func email(p *problems, name string, v *string, required bool) {
	text(p, name, v, required, 255)
	if *v == "" {
		return
	}
	a, err := mail.ParseAddress(*v)
	if err != nil || a.Address != *v {
		p.add(name, "'%s' is not a valid e-mail address", *v)
	}
}

// exists reports whether a row of model M matches where.
func exists[M any](w *writer, where string, args ...any) (bool, error) {
	ok, err := w.tx.NewSelect().Model((*M)(nil)).Where(where, args...).Exists(w.ctx)
	if err != nil {
		return false, dbError(err)
	}
	return ok, nil
}

// reference checks that an optional key field names an existing record of
// model M.
func reference[M any](w *writer, p *problems, name, what string, id *int64) error {
	if id == nil {
		return nil
	}
	if *id <= 0 {
		p.add(name, "%s must be a positive id", name)
		return nil
	}
	ok, err := exists[M](w, "id = ?", *id)
	if err != nil {
		return err
	}
	if !ok {
		p.add(name, "%s %d does not exist", what, *id)
	}
	return nil
}

// conflict is the 409 for a duplicate unique value.
func conflict(format string, args ...any) error {
	return apierr.Conflict(format, args...)
}

// jsonText is a codec for a text column holding JSON: the column's JSON is
// returned as is (empty as empty), and any JSON is accepted and stored
// compactly.
func jsonTextCodec(empty any) fieldOpt {
	return withCodec(func(v reflect.Value) (any, error) {
		s := v.String()
		if strings.TrimSpace(s) == "" {
			return empty, nil
		}
		if !json.Valid([]byte(s)) {
			return s, nil
		}
		return json.RawMessage(s), nil
	}, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return fmt.Errorf("is not valid JSON")
		}
		v.SetString(b.String())
		return nil
	})
}

// stringListCodec stores a list of strings as a JSON array in a text
// column. It accepts an array of strings or a comma-separated string, and
// returns an array (empty when none).
func stringListCodec() fieldOpt {
	return withCodec(func(v reflect.Value) (any, error) {
		list, err := parseStringList(v.String())
		if err != nil {
			return nil, err
		}
		return list, nil
	}, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return fmt.Errorf("must be an array of strings or a comma-separated string")
			}
			list = splitList(s)
		}
		clean := make([]string, 0, len(list))
		for _, x := range list {
			if x = strings.TrimSpace(x); x != "" {
				clean = append(clean, x)
			}
		}
		if len(clean) == 0 {
			v.SetString("")
			return nil
		}
		b, _ := json.Marshal(clean)
		v.SetString(string(b))
		return nil
	})
}

// parseStringList reads a stored list: a JSON array, or (data written by
// other tools) a comma-separated string.
func parseStringList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []string{}, nil
	}
	if strings.HasPrefix(s, "[") {
		var list []string
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("stored list is not a JSON array of strings: %w", err)
		}
		return list, nil
	}
	return splitList(s), nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
