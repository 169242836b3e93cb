package mail

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// fakeRegistry is the part of service.Registry the mailer uses.
type fakeRegistry struct {
	service.Registry
	snap     *store.Snapshot
	backends map[string]service.Backend
}

func (f *fakeRegistry) Snapshot() *store.Snapshot { return f.snap }
func (f *fakeRegistry) Backend(name string) (service.Backend, bool) {
	b, ok := f.backends[name]
	return b, ok
}

// sentMail is one SendTemplate call.
type sentMail struct {
	Template int64
	Data     map[string]string
}

// mailBackend is an e-mail backend: it records what it is asked to send.
type mailBackend struct {
	http.Handler
	sent []sentMail
}

func (m *mailBackend) Close() error { return nil }
func (m *mailBackend) SendTemplate(_ context.Context, id int64, data map[string]string) error {
	m.sent = append(m.sent, sentMail{id, data})
	return nil
}

// plainBackend sends no mail.
type plainBackend struct{ http.Handler }

func (plainBackend) Close() error { return nil }

func TestRegistryMailer(t *testing.T) {
	mail, other := &mailBackend{}, &mailBackend{}
	snap := store.NewSnapshot([]*store.Service{
		{ID: 6, Name: "email", Type: "local_email", IsActive: true},
		{ID: 7, Name: "mailer2", Type: "smtp_email", IsActive: true},
		{ID: 8, Name: "off", Type: "smtp_email", IsActive: false},
		{ID: 9, Name: "db", Type: "sqlite", IsActive: true},
	}, nil, nil)
	m := New(&fakeRegistry{snap: snap, backends: map[string]service.Backend{
		"email": mail, "mailer2": other, "off": &mailBackend{}, "db": plainBackend{},
	}}, "")
	cases := []struct {
		id   int64
		can  bool
		into *mailBackend
	}{
		{0, true, mail}, {6, true, mail}, {7, true, other}, {8, false, nil}, {9, false, nil}, {99, false, nil},
	}
	for _, tc := range cases {
		if got := m.CanSend(tc.id); got != tc.can {
			t.Errorf("CanSend(%d) = %v", tc.id, got)
		}
		err := m.SendMail(t.Context(), identity.Mail{ServiceID: tc.id, To: "a@b.c", Subject: "S", Text: "T"})
		if !tc.can {
			if !errors.Is(err, identity.ErrNoMailer) {
				t.Errorf("SendMail(%d) = %v, want ErrNoMailer", tc.id, err)
			}
			continue
		}
		if err != nil || len(tc.into.sent) == 0 {
			t.Fatalf("SendMail(%d) = %v, sent %v", tc.id, err, tc.into.sent)
		}
		want := sentMail{0, map[string]string{"to": "a@b.c", "subject": "S", "body_text": "T"}}
		if diff := cmp.Diff(want, tc.into.sent[len(tc.into.sent)-1]); diff != "" {
			t.Errorf("SendMail(%d) (-want +got):\n%s", tc.id, diff)
		}
	}

	// With a template, the template's subject and body stay: only the data
	// and the recipient are sent.
	err := m.SendMail(t.Context(), identity.Mail{TemplateID: 3, To: "a@b.c", Subject: "S", Text: "T",
		Data: map[string]string{"confirm_code": "C", "link": "/reset?code=C"}})
	if err != nil {
		t.Fatal(err)
	}
	want := sentMail{3, map[string]string{"to": "a@b.c", "confirm_code": "C", "link": "/reset?code=C"}}
	if diff := cmp.Diff(want, mail.sent[len(mail.sent)-1]); diff != "" {
		t.Errorf("template mail (-want +got):\n%s", diff)
	}
}
