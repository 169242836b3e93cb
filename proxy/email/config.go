package email

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// LocalConfig is the configuration of a local_email service.
type LocalConfig struct {
	// Path is the folder the .eml files are written to: relative to the
	// data directory, or absolute. Default "storage/email".
	Path string `json:"path,omitempty"`
	// Sender defaults used when a message names none.
	Defaults
}

// Defaults are a service's sender settings and replacement parameters.
type Defaults struct {
	FromName     string `json:"from_name,omitempty"`
	FromEmail    string `json:"from_email,omitempty"`
	ReplyToName  string `json:"reply_to_name,omitempty"`
	ReplyToEmail string `json:"reply_to_email,omitempty"`
	// Parameters are replacement fields every message of the service gets
	// (DreamFactory's email_parameters_config); inactive ones are skipped.
	Parameters []Parameter `json:"parameters,omitempty"`
}

// Parameter is one service-level replacement field.
type Parameter struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Active *bool  `json:"active,omitempty"`
}

// DefaultLocalPath is where local_email writes, below the data directory.
const DefaultLocalPath = "storage/email"

var defaultsKeys = []string{"from_name", "from_email", "reply_to_name", "reply_to_email", "parameters"}

// ParseLocalConfig reads and checks a local_email configuration.
func ParseLocalConfig(raw json.RawMessage) (LocalConfig, error) {
	var c LocalConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, append([]string{"path"}, defaultsKeys...)); err != nil {
		errs = append(errs, err)
	}
	if strings.ContainsRune(c.Path, 0) {
		errs = append(errs, errors.New("path: must not contain NUL"))
	} else if !filepath.IsAbs(c.Path) && c.Path != "" {
		clean := filepath.Clean(c.Path)
		if clean == ".." || strings.HasPrefix(clean, "../") {
			errs = append(errs, errors.New("path: a relative path must stay inside the data directory"))
		}
	}
	errs = append(errs, c.Defaults.check()...)
	return c, errors.Join(errs...)
}

// Dir resolves the folder against the data directory.
func (c LocalConfig) Dir(dataDir string) string {
	switch {
	case c.Path == "":
		return filepath.Join(dataDir, DefaultLocalPath)
	case filepath.IsAbs(c.Path):
		return filepath.Clean(c.Path)
	}
	return filepath.Join(dataDir, c.Path)
}

// SMTPConfig is the configuration of an smtp_email service, with
// DreamFactory's keys.
type SMTPConfig struct {
	Host string `json:"host"`
	// Port is a number or a numeric string (DreamFactory stores a string);
	// default 587, or 465 with encryption "ssl".
	Port Port `json:"port,omitempty"`
	// Encryption is "tls" (STARTTLS, required), "ssl" (TLS from the first
	// byte), or empty/"none" (plain, STARTTLS not attempted).
	Encryption string `json:"encryption,omitempty"`
	// Username and Password sign in when both are set.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// Timeout bounds connecting and sending, in seconds (default 30).
	Timeout int `json:"timeout,omitempty"`
	Defaults
}

// Port is a TCP port given as a JSON number or numeric string.
type Port int

// UnmarshalJSON accepts 587 and "587".
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

// ParseSMTPConfig reads and checks an smtp_email configuration, reporting
// every problem at once.
func ParseSMTPConfig(raw json.RawMessage) (SMTPConfig, error) {
	var c SMTPConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, append([]string{"host", "port", "encryption", "username", "password", "timeout"}, defaultsKeys...)); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(c.Host) == "" {
		errs = append(errs, errors.New("host: required"))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, errors.New("port: must be between 1 and 65535"))
	}
	switch strings.ToLower(c.Encryption) {
	case "", "none", "tls", "ssl", "starttls":
	default:
		errs = append(errs, fmt.Errorf("encryption: %q is not one of tls, ssl, none", c.Encryption))
	}
	if (c.Username == "") != (c.Password == "") {
		errs = append(errs, errors.New("username and password: give both or neither"))
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("timeout: must not be negative"))
	}
	errs = append(errs, c.Defaults.check()...)
	return c, errors.Join(errs...)
}

func (d Defaults) check() []error {
	var errs []error
	for _, a := range []struct{ key, v string }{{"from_email", d.FromEmail}, {"reply_to_email", d.ReplyToEmail}} {
		if a.v != "" {
			if _, err := parseAddress(a.v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", a.key, err))
			}
		}
	}
	for i, p := range d.Parameters {
		if strings.TrimSpace(p.Name) == "" {
			errs = append(errs, fmt.Errorf("parameters[%d]: name required", i))
		}
	}
	return errs
}
