package guard_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/handlers/guard"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

func newGuard(t *testing.T, o guard.Options) *guard.Guard {
	t.Helper()
	g, err := guard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestInFlightCap(t *testing.T) {
	g := newGuard(t, guard.Options{MaxInFlight: 2, RetryAfter: 3 * time.Second})
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	srv := httptest.NewServer(g.Stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	})))
	defer srv.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := http.Get(srv.URL); err == nil {
				resp.Body.Close()
			}
		}()
	}
	<-started
	<-started
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(b), `"status_code":503`) {
		t.Fatalf("third request = %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	close(release)
	wg.Wait()
	if g.InFlight() != 0 {
		t.Fatalf("in flight after all ended = %d", g.InFlight())
	}
	resp, err = http.Get(srv.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after release: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestBodyBytesCap(t *testing.T) {
	g := newGuard(t, guard.Options{MaxBodyInFlight: 1000, MaxBody: 800})
	hold := make(chan struct{})
	srv := httptest.NewServer(g.Stage(apierr.Handler(func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return apierr.As(err)
		}
		if string(b) == "hold" || len(b) == 600 {
			<-hold
		}
		fmt.Fprintf(w, "%d", len(b))
		return nil
	})))
	defer srv.Close()
	post := func(body io.Reader, n int64) (int, string, string) {
		req, _ := http.NewRequest("POST", srv.URL, body)
		req.ContentLength = n
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	done := make(chan int)
	go func() {
		s, _, _ := post(strings.NewReader(strings.Repeat("x", 600)), 600)
		done <- s
	}()
	for g.BodyBytes() < 600 {
		time.Sleep(5 * time.Millisecond)
	}
	// A declared length that does not fit next to the 600 held: refused unread.
	if s, ra, b := post(strings.NewReader(strings.Repeat("y", 500)), 500); s != 503 || ra != "1" {
		t.Fatalf("declared 500 with 600 held = %d %q %s", s, ra, b)
	}
	// A chunked body is counted as it arrives and fails past the cap.
	if s, _, b := post(io.MultiReader(strings.NewReader(strings.Repeat("z", 450))), -1); s != 503 {
		t.Fatalf("chunked 450 with 600 held = %d %s", s, b)
	}
	// A small one fits.
	if s, _, b := post(strings.NewReader("ok"), 2); s != 200 || b != "2" {
		t.Fatalf("small body = %d %s", s, b)
	}
	close(hold)
	if s := <-done; s != 200 {
		t.Fatalf("held request = %d", s)
	}
	if g.BodyBytes() != 0 {
		t.Fatalf("bytes reserved after all ended = %d", g.BodyBytes())
	}
}

// TestWriteTimeoutReleasesHandler: a client that never reads makes the
// handler's writes fail within the timeout, so it returns.
func TestWriteTimeoutReleasesHandler(t *testing.T) {
	g := newGuard(t, guard.Options{WriteTimeout: 300 * time.Millisecond})
	returned := make(chan error, 1)
	srv := httptest.NewServer(g.Stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("a", 64<<10))
		for range 10000 { // 640 MB: far more than socket buffers hold
			if _, err := w.Write(chunk); err != nil {
				returned <- err
				return
			}
		}
		returned <- nil
	})))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	// Read the status line only, then stop reading.
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-returned:
		if err == nil {
			t.Fatal("handler wrote 640 MB to a client that does not read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler still blocked on a client that does not read")
	}
}

// TestWriteTimeoutAllowsSlowSteadyReader: a response that keeps moving is
// not cut, however long it takes in total.
func TestWriteTimeoutAllowsSlowSteadyReader(t *testing.T) {
	g := newGuard(t, guard.Options{WriteTimeout: 200 * time.Millisecond})
	srv := httptest.NewServer(g.Stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range 8 {
			w.Write([]byte("tick\n"))
			http.NewResponseController(w).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(b), "tick") != 8 {
		t.Fatalf("slow steady response = %q, %v", b, err)
	}
	// The same connection serves a later request after a pause longer than
	// the timeout: the deadline of the first response does not linger.
	time.Sleep(300 * time.Millisecond)
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Count(string(b), "tick") != 8 {
		t.Fatalf("second response on the connection = %q", b)
	}
}

func TestSlots(t *testing.T) {
	ctx := t.Context()
	s := guard.NewSlots(2, 0)
	first, second, third := s.Acquire(ctx, "a"), s.Acquire(ctx, "a"), s.Acquire(ctx, "a")
	if !first || !second || third {
		t.Fatalf("slots of a granted: %v %v %v, want the first two only", first, second, third)
	}
	if !s.Acquire(ctx, "b") {
		t.Fatal("b refused because of a")
	}
	s.Release("a")
	if !s.Acquire(ctx, "a") {
		t.Fatal("released slot not reusable")
	}
	var none *guard.Slots
	if !none.Acquire(ctx, "x") || !guard.NewSlots(0, 0).Acquire(ctx, "x") {
		t.Fatal("no cap refused")
	}
	// With a wait, a slot freed meanwhile is taken instead of refusing.
	q := guard.NewSlots(1, 2*time.Second)
	q.Acquire(ctx, "a")
	time.AfterFunc(100*time.Millisecond, func() { q.Release("a") })
	if !q.Acquire(ctx, "a") {
		t.Fatal("waiting request refused though a slot came free")
	}
}

// TestSlotsEnter: Enter counts against the same cap as Acquire, and its
// Slot gives the slot back.
func TestSlotsEnter(t *testing.T) {
	ctx := t.Context()
	s := guard.NewSlots(2, 0)
	a, ok1 := s.Enter(ctx, "a")
	ok2 := s.Acquire(ctx, "a")
	if _, ok3 := s.Enter(ctx, "a"); !ok1 || !ok2 || ok3 {
		t.Fatalf("slots of a granted: %v %v %v, want the first two only", ok1, ok2, ok3)
	}
	a.Release()
	b, ok := s.Enter(ctx, "a")
	if !ok {
		t.Fatal("slot given back by Release not reusable")
	}
	b.Release()
	s.Release("a")
	var none *guard.Slots
	for _, sl := range []*guard.Slots{none, guard.NewSlots(0, 0)} {
		slot, ok := sl.Enter(ctx, "x")
		if !ok {
			t.Fatal("no cap refused")
		}
		slot.Release() // releases nothing
	}
}

// TestAbandonedUploadIsClientClosed: a body cut short by the client reads
// as apierr.ClientClosed (499), not as a server error.
func TestAbandonedUploadIsClientClosed(t *testing.T) {
	g := newGuard(t, guard.Options{})
	status := make(chan int, 1)
	srv := httptest.NewServer(g.Stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		status <- apierr.As(err).Status
	})))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"resource\":")
	time.Sleep(50 * time.Millisecond)
	c.Close()
	select {
	case s := <-status:
		if s != apierr.StatusClientClosed {
			t.Fatalf("abandoned upload = %d; want 499", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler never saw the upload end")
	}
}
