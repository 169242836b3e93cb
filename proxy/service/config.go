package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// DecodeConfig decodes a service's configuration into v (a struct with
// json tags). An empty or null configuration leaves v as it is. Keys
// outside known are reported together, and so are values of the wrong
// type, so a type's ValidateConfig can list every problem in one 400;
// what did decode stays in v.
func DecodeConfig(raw json.RawMessage, v any, known []string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("config: must be a JSON object: %w", err)
	}
	var unknown []string
	for k := range keys {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	var errs []error
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("config: unknown keys %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			errs = append(errs, fmt.Errorf("%s: expected %s", ute.Field, ute.Type))
		} else {
			errs = append(errs, fmt.Errorf("config: %w", err))
		}
	}
	return errors.Join(errs...)
}
