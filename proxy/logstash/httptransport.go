package logstash

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// httpTransport POSTs each message as JSON, as Graylog's GELF HTTP input
// takes it.
type httpTransport struct {
	url    string
	client *http.Client
	buf    bytes.Buffer
	enc    logship.Encoder
}

func newHTTPTransport(cfg logship.Config, path string, allow upstream.AllowList) *httpTransport {
	if path == "" {
		path = "/gelf"
	}
	tr := allow.Transport()
	tr.MaxIdleConnsPerHost = 2
	return &httpTransport{
		url:    "http://" + net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)) + path,
		client: &http.Client{Transport: tr, Timeout: cfg.Timeout},
	}
}

func (t *httpTransport) Send(m *gelf.Message) error {
	t.buf.Reset()
	if err := t.enc.Encode(&t.buf, m); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, t.url, bytes.NewReader(t.buf.Bytes()))
	if err != nil {
		return fmt.Errorf("logstash: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("logstash: http: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("logstash: http: collector answered %s", resp.Status)
	}
	return nil
}

func (t *httpTransport) Close() error {
	t.client.CloseIdleConnections()
	return nil
}
