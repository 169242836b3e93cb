package iot

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// AMQPConfig is the configuration of an amqp service, with DreamFactory's
// keys.
type AMQPConfig struct {
	Host string       `json:"host"`
	Port service.Port `json:"port,omitempty"`
	// Username and Password sign in (default guest/guest, RabbitMQ's).
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// VHost is the virtual host (default "/").
	VHost string `json:"vhost,omitempty"`
	// TLS connects with amqps, verifying the server against the system's
	// roots.
	TLS bool `json:"tls,omitempty"`
}

var amqpKeys = []string{"host", "port", "username", "password", "vhost", "tls"}

// ParseAMQPConfig reads and checks an amqp configuration, reporting every
// problem at once.
func ParseAMQPConfig(raw json.RawMessage) (AMQPConfig, error) {
	var c AMQPConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, amqpKeys); err != nil {
		errs = append(errs, err)
	}
	if err := service.CheckHost(c.Host); err != nil {
		errs = append(errs, err)
	}
	if err := c.Port.Check(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// URL is the broker's amqp:// (or amqps://) address with credentials.
func (c AMQPConfig) URL() string {
	scheme, port := "amqp", 5672
	if c.TLS {
		scheme, port = "amqps", 5671
	}
	user, pass := c.Username, c.Password
	if user == "" && pass == "" {
		user, pass = "guest", "guest"
	}
	vhost := c.VHost
	if vhost == "" {
		vhost = "/"
	}
	u := url.URL{Scheme: scheme, User: url.UserPassword(user, pass), Host: net.JoinHostPort(c.Host, strconv.Itoa(c.Port.Or(port)))}
	return u.String() + "/" + url.PathEscape(vhost)
}

// MQTTConfig is the configuration of an mqtt service, with DreamFactory's
// keys.
type MQTTConfig struct {
	Host string       `json:"host"`
	Port service.Port `json:"port,omitempty"`
	// ClientID starts every connection's client id; a random suffix makes
	// each one unique (default "portcullis").
	ClientID string `json:"client_id,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// UseTLS connects with TLS (DreamFactory stores 0 or 1).
	UseTLS Flag `json:"use_tls,omitempty"`
	// CAPath is a folder of PEM certificates (or one PEM file) trusted for
	// the broker's TLS; empty: the system's roots.
	CAPath string `json:"capath,omitempty"`
}

var mqttKeys = []string{"host", "port", "client_id", "username", "password", "use_tls", "capath"}

// ParseMQTTConfig reads and checks an mqtt configuration, reporting every
// problem at once.
func ParseMQTTConfig(raw json.RawMessage) (MQTTConfig, error) {
	var c MQTTConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, mqttKeys); err != nil {
		errs = append(errs, err)
	}
	if err := service.CheckHost(c.Host); err != nil {
		errs = append(errs, err)
	}
	if err := c.Port.Check(); err != nil {
		errs = append(errs, err)
	}
	if strings.ContainsAny(c.ClientID, "\x00") || len(c.ClientID) > 64 {
		errs = append(errs, errors.New("client_id: at most 64 characters, no NUL"))
	}
	if c.UseTLS && c.CAPath != "" {
		if _, err := os.Stat(c.CAPath); err != nil {
			errs = append(errs, fmt.Errorf("capath: %q cannot be read", c.CAPath))
		}
	}
	return c, errors.Join(errs...)
}

// Broker is the broker's address for the MQTT client.
func (c MQTTConfig) Broker() string {
	scheme, port := "tcp", 1883
	if c.UseTLS {
		scheme, port = "ssl", 8883
	}
	return scheme + "://" + net.JoinHostPort(c.Host, strconv.Itoa(c.Port.Or(port)))
}

// TLSConfig is the client's TLS configuration (nil without use_tls).
func (c MQTTConfig) TLSConfig() (*tls.Config, error) {
	if !c.UseTLS {
		return nil, nil
	}
	t := &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	if c.CAPath == "" {
		return t, nil
	}
	pool := x509.NewCertPool()
	files := []string{c.CAPath}
	if fi, err := os.Stat(c.CAPath); err == nil && fi.IsDir() {
		files, _ = filepath.Glob(filepath.Join(c.CAPath, "*"))
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(data)
		}
	}
	t.RootCAs = pool
	return t, nil
}

// Flag is a boolean given as true/false, 0/1 or "0"/"1".
type Flag bool

// UnmarshalJSON accepts true, false, 0, 1, "0", "1", "true", "false".
func (f *Flag) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	switch strings.ToLower(s) {
	case "true", "1":
		*f = true
	case "false", "0", "", "null":
		*f = false
	default:
		return fmt.Errorf("use_tls: %q is not a boolean", s)
	}
	return nil
}
