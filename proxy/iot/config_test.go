package iot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/iot"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name, typ, config string
		want              []string
	}{
		{"amqp minimal", "amqp", `{"host":"127.0.0.1"}`, nil},
		{"amqp full", "amqp", `{"host":"mq.local","port":"5673","username":"u","password":"p","vhost":"/prod","tls":true}`, nil},
		{"amqp everything wrong", "amqp", `{"port":-1,"queue":"x"}`, []string{"host: required", "port: -1", "unknown keys queue"}},
		{"mqtt minimal", "mqtt", `{"host":"127.0.0.1"}`, nil},
		{"mqtt DreamFactory's flags", "mqtt", `{"host":"h","port":"1883","client_id":"df","use_tls":0,"capath":"/etc/ssl/certs"}`, nil},
		{"mqtt everything wrong", "mqtt", `{"host":"a b","use_tls":"maybe","topic":"x"}`, []string{`host: "a b"`, "use_tls", "unknown keys topic"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.typ == "amqp" {
				err = iot.AMQPType{}.ValidateConfig(json.RawMessage(tc.config))
			} else {
				err = iot.MQTTType{}.ValidateConfig(json.RawMessage(tc.config))
			}
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid config accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestConfigAddresses(t *testing.T) {
	a, _ := iot.ParseAMQPConfig(json.RawMessage(`{"host":"mq","vhost":"/"}`))
	if got := a.URL(); got != "amqp://guest:guest@mq:5672/%2F" {
		t.Errorf("amqp url = %s", got)
	}
	a, _ = iot.ParseAMQPConfig(json.RawMessage(`{"host":"mq","port":5000,"username":"u","password":"p?w","vhost":"prod","tls":true}`))
	if got := a.URL(); got != "amqps://u:p%3Fw@mq:5000/prod" {
		t.Errorf("amqp url = %s", got)
	}
	m, _ := iot.ParseMQTTConfig(json.RawMessage(`{"host":"b","use_tls":"1"}`))
	if got := m.Broker(); got != "ssl://b:8883" {
		t.Errorf("mqtt broker = %s", got)
	}
}

func TestDocumentsValidate(t *testing.T) {
	for _, kind := range []string{"amqp", "mqtt"} {
		data, err := json.Marshal(iot.Document(kind))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			t.Fatalf("%s: load: %v", kind, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("%s: validate: %v", kind, err)
		}
		for _, p := range []string{"/", "/pub", "/sub", "/consume"} {
			if doc.Paths.Find(p) == nil {
				t.Errorf("%s: no path %s", kind, p)
			}
		}
	}
}

// TestConfigSchemaMatchesKeys checks that each type's config_schema names
// exactly the keys its configuration accepts.
func TestConfigSchemaMatchesKeys(t *testing.T) {
	for _, typ := range []interface {
		ValidateConfig(json.RawMessage) error
		ConfigSchema() []service.ConfigField
	}{iot.AMQPType{}, iot.MQTTType{}} {
		var names []string
		for _, f := range typ.ConfigSchema() {
			names = append(names, f.Name)
		}
		sort.Strings(names)
		err := typ.ValidateConfig(json.RawMessage(`{"zz_unknown":1}`))
		_, known, ok := strings.Cut(fmt.Sprint(err), "(known: ")
		known, _, _ = strings.Cut(known, ")")
		keys := strings.Split(known, ", ")
		sort.Strings(keys)
		if !ok || strings.Join(keys, ",") != strings.Join(names, ",") {
			t.Errorf("%T: schema %v, accepted keys %v", typ, names, keys)
		}
	}
}
