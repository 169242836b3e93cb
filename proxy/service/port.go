package service

import (
	"fmt"
	"strconv"
	"strings"
)

// Port is a TCP port in a service's configuration, given as a JSON number
// or a numeric string (DreamFactory stores ports as strings). Zero means
// "not set": the type's default applies.
type Port int

// UnmarshalJSON accepts 6379 and "6379"; null and "" leave the port unset.
func (p *Port) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*p = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("port: %q is not a number", s)
	}
	*p = Port(n)
	return nil
}

// Check reports a port outside 0..65535 (0 is "unset").
func (p Port) Check() error {
	if p < 0 || p > 65535 {
		return fmt.Errorf("port: %d is not between 1 and 65535", int(p))
	}
	return nil
}

// Or returns p, or def when p is unset.
func (p Port) Or(def int) int {
	if p == 0 {
		return def
	}
	return int(p)
}
