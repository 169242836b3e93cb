package service

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// CheckHost checks the host key of a service's configuration: required,
// and a host name or address (no scheme, path, credentials or spaces).
func CheckHost(h string) error {
	h = strings.TrimSpace(h)
	switch {
	case h == "":
		return errors.New("host: required")
	case strings.ContainsAny(h, " /?#@"):
		return fmt.Errorf("host: %q is not a host name or address", h)
	}
	return nil
}

// CheckHTTPURL checks that s is an absolute http(s) URL with a host.
func CheckHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	return nil
}

// GenericInfo returns the entry of [Generic] called name, or fallback
// when the list has none.
func GenericInfo(name string, fallback Info) Info {
	for _, i := range Generic {
		if i.Name == name {
			return i
		}
	}
	return fallback
}
