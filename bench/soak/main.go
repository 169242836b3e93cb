// Command soak is Portcullis's cluster soak (make soak): a bounded load test
// (a request count and a duration) of three `portcullis serve` instances on
// loopback sharing a PostgreSQL system database and a Redis of their own,
// with faults injected on a schedule:
//
//   - stalled clients (ask for a page and never read it) and slow clients
//     (send their headers a byte at a time) for most of the run;
//   - one instance killed with SIGKILL mid-request, restarted;
//   - the service database stopped (new connections refused, open ones
//     terminated) and restarted;
//   - Redis (it counts a rate limit every request passes) killed and
//     restarted;
//   - one instance stopped with SIGTERM (it must exit 0), restarted.
//
// Writes go to a PostgreSQL pgsql service through an app key whose role
// grants the table; each write acknowledged with 200 is remembered and
// looked up in the database at the end. It prints what was sent, what
// succeeded, what was lost (must be zero acknowledged writes), the error
// mix and latency percentiles, and exits 1 when anything was lost, an
// instance did not exit 0 on SIGTERM or did not come back, or fewer than
// half of the requests succeeded.
//
//	go run ./bench/soak -bin bin/portcullis                # 30 s, at most 20,000 requests
//	go run ./bench/soak -bin bin/portcullis -duration 5m -requests 0
//
// It needs PostgreSQL (-pg, default $PORTCULLIS_TEST_PG) with the right to
// create databases, and redis-server on the PATH.
package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

func main() {
	var o opts
	flag.StringVar(&o.bin, "bin", "bin/portcullis", "the portcullis binary (make build)")
	flag.StringVar(&o.pg, "pg", envOr("PORTCULLIS_TEST_PG", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL DSN of a role that may create databases")
	flag.StringVar(&o.redis, "redis-server", "redis-server", "the redis-server binary")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long the load runs")
	flag.IntVar(&o.requests, "requests", 20000, "most requests sent (0: no cap)")
	flag.IntVar(&o.workers, "workers", 12, "concurrent clients")
	flag.BoolVar(&o.keep, "keep", false, "keep the databases, data directories and logs")
	flag.Parse()
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		fmt.Println("\nsoak: FAIL")
		os.Exit(1)
	}
	fmt.Println("\nsoak: PASS")
}

type opts struct {
	bin, pg, redis string
	duration       time.Duration
	requests       int
	workers        int
	keep           bool
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// cluster is what the soak runs: the instances, Redis and the databases.
type cluster struct {
	o        opts
	dir      string
	sysDSN   string
	dataDSN  string
	dataDB   string
	admin    *sql.DB
	redisBin string
	redisP   int
	redis    *exec.Cmd
	inst     []*instance
	adminKey string
	session  string
	appKey   string
	mu       sync.Mutex
	problems []string
}

func (c *cluster) problem(f string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	msg := fmt.Sprintf(f, a...)
	c.problems = append(c.problems, msg)
	fmt.Println("  PROBLEM:", msg)
}

type instance struct {
	n    int
	addr string
	data string
	log  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan error
}

func run(o opts) (bool, error) {
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(bin); err != nil {
		return false, fmt.Errorf("no binary at %s (run make build or pass -bin): %w", bin, err)
	}
	o.bin = bin
	if _, err := exec.LookPath(o.redis); err != nil {
		return false, fmt.Errorf("redis-server not found (install the redis-server package): %w", err)
	}
	dir, err := os.MkdirTemp("", "portcullis-soak-")
	if err != nil {
		return false, err
	}
	c := &cluster{o: o, dir: dir, redisBin: o.redis}
	defer c.cleanup()
	if err := c.setupDatabases(); err != nil {
		return false, err
	}
	if err := c.startRedis(); err != nil {
		return false, err
	}
	if err := c.initAndStart(); err != nil {
		return false, err
	}
	if err := c.configure(); err != nil {
		return false, err
	}
	fmt.Printf("soak: 3 instances (%s, %s, %s), system database and service database on PostgreSQL, Redis on 127.0.0.1:%d\n",
		c.inst[0].addr, c.inst[1].addr, c.inst[2].addr, c.redisP)
	fmt.Printf("soak: %d clients for %s (at most %d requests); logs in %s\n\n", o.workers, o.duration, o.requests, dir)
	st := c.load()
	return c.verify(st), nil
}

// --- databases and processes ---

func (c *cluster) setupDatabases() error {
	db, err := sql.Open("pgx", c.o.pg)
	if err != nil {
		return err
	}
	if err := db.Ping(); err != nil {
		return fmt.Errorf("PostgreSQL at %s: %w", c.o.pg, err)
	}
	c.admin = db
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().Unix()%100000)
	sysDB, dataDB := "soak_sys_"+suffix, "soak_data_"+suffix
	for _, name := range []string{sysDB, dataDB} {
		if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	c.dataDB = dataDB
	c.sysDSN, c.dataDSN = withDB(c.o.pg, sysDB), withDB(c.o.pg, dataDB)
	data, err := sql.Open("pgx", c.dataDSN)
	if err != nil {
		return err
	}
	defer data.Close()
	_, err = data.Exec(`CREATE TABLE item (id SERIAL PRIMARY KEY, k VARCHAR(64) NOT NULL UNIQUE, v TEXT, n INTEGER)`)
	return err
}

func withDB(dsn, db string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.Path = "/" + db
	return u.String()
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (c *cluster) startRedis() error {
	if c.redisP == 0 {
		c.redisP = freePort()
	}
	cmd := exec.Command(c.redisBin, "--port", fmt.Sprint(c.redisP), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	lf, _ := os.OpenFile(filepath.Join(c.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	c.redis = cmd
	for i := 0; i < 100; i++ {
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", c.redisP), time.Second); err == nil {
			fmt.Fprint(conn, "PING\r\n")
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "+PONG") {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("redis-server did not start")
}

func (c *cluster) initAndStart() error {
	d0 := filepath.Join(c.dir, "data0")
	out, err := exec.Command(c.o.bin, "init", "--data", d0, "--system-db", c.sysDSN,
		"--email", "soak@example.com", "--password", "soak-password-1", "--log-level", "warn").Output()
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	c.adminKey = strings.TrimSpace(string(out))
	for n := 0; n < 3; n++ {
		in := &instance{n: n, addr: fmt.Sprintf("127.0.0.1:%d", freePort()), data: filepath.Join(c.dir, fmt.Sprintf("data%d", n)),
			log: filepath.Join(c.dir, fmt.Sprintf("instance%d.log", n))}
		c.inst = append(c.inst, in)
		if err := c.start(in); err != nil {
			return err
		}
	}
	return nil
}

func (c *cluster) start(in *instance) error {
	cmd := exec.Command(c.o.bin, "serve", "--data", in.data, "--addr", in.addr, "--system-db", c.sysDSN,
		"--redis", fmt.Sprintf("redis://127.0.0.1:%d/0", c.redisP), "--shutdown-wait", "5s", "--write-timeout", "3s", "--log-level", "warn")
	lf, err := os.OpenFile(in.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); lf.Close() }()
	in.mu.Lock()
	in.cmd, in.done = cmd, done
	in.mu.Unlock()
	return waitHealthy(in.addr, 30*time.Second)
}

func waitHealthy(addr string, d time.Duration) error {
	cl := &http.Client{Timeout: time.Second}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if r, err := cl.Get("http://" + addr + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy after %s", addr, d)
}

func (c *cluster) cleanup() {
	for _, in := range c.inst {
		in.mu.Lock()
		if in.cmd != nil && in.cmd.ProcessState == nil {
			in.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-in.done:
			case <-time.After(10 * time.Second):
				in.cmd.Process.Kill()
			}
		}
		in.mu.Unlock()
	}
	if c.redis != nil && c.redis.Process != nil {
		c.redis.Process.Kill()
	}
	if c.admin != nil && !c.o.keep {
		for _, db := range []string{c.sysDSN, c.dataDSN} {
			if db == "" {
				continue
			}
			u, _ := url.Parse(db)
			name := strings.TrimPrefix(u.Path, "/")
			c.admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
			c.admin.Exec("DROP DATABASE IF EXISTS " + name)
		}
		c.admin.Close()
	}
	if !c.o.keep && len(c.problems) == 0 {
		os.RemoveAll(c.dir)
	}
}

// --- configuration through the system API ---

func (c *cluster) api(method, addr, key, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+addr+path, rd)
	req.Header.Set("X-Platform-API-Key", key)
	if key == c.adminKey && c.session != "" {
		req.Header.Set("X-Platform-Session-Token", c.session)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	if resp.StatusCode >= 300 {
		return resp.StatusCode, out, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, out, nil
}

func first(m map[string]any) map[string]any {
	if l, ok := m["resource"].([]any); ok && len(l) > 0 {
		r, _ := l[0].(map[string]any)
		return r
	}
	return m
}

func (c *cluster) configure() error {
	a := c.inst[0].addr
	_, sess, err := c.api("POST", a, c.adminKey, "/api/v2/system/admin/session", map[string]any{"email": "soak@example.com", "password": "soak-password-1"})
	if err != nil {
		return err
	}
	c.session, _ = sess["session_token"].(string)
	_, svc, err := c.api("POST", a, c.adminKey, "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "soak", "label": "Soak", "type": "pgsql", "config": map[string]any{"dsn": c.dataDSN}}}})
	if err != nil {
		return err
	}
	_, role, err := c.api("POST", a, c.adminKey, "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "soak", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": first(svc)["id"], "component": "*", "verb_mask": 31, "requestor_mask": 1}}}}})
	if err != nil {
		return err
	}
	_, app, err := c.api("POST", a, c.adminKey, "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "soak", "is_active": true, "role_id": first(role)["id"]}}})
	if err != nil {
		return err
	}
	c.appKey, _ = first(app)["api_key"].(string)
	// A limit no client reaches: every request is counted in Redis.
	if _, _, err := c.api("POST", a, c.adminKey, "/api/v2/system/limit", map[string]any{"resource": []any{map[string]any{
		"name": "soak", "type": "instance", "rate": 100000000, "period": "minute", "is_active": true}}}); err != nil {
		return err
	}
	for _, in := range c.inst {
		end := time.Now().Add(15 * time.Second)
		for {
			_, _, err := c.api("GET", in.addr, c.appKey, "/api/v2/soak/_table/item?limit=1", nil)
			if err == nil {
				break
			}
			if time.Now().After(end) {
				return fmt.Errorf("instance %d does not see the soak service: %w", in.n, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// --- load and faults ---

type stats struct {
	mu        sync.Mutex
	sent      int64
	ok        int64
	acked     []string
	mix       map[string]int
	latencies []time.Duration
}

func (s *stats) add(kind string, d time.Duration, ok bool, acked string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent++
	s.mix[kind]++
	if ok {
		s.ok++
		s.latencies = append(s.latencies, d)
	}
	if acked != "" {
		s.acked = append(s.acked, acked)
	}
}

func classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset/closed"
	case errors.As(err, &ne) && ne.Timeout():
		return "client timeout"
	}
	return "transport error"
}

func (c *cluster) load() *stats {
	st := &stats{mix: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), c.o.duration)
	defer cancel()
	var budget atomic.Int64
	budget.Store(int64(c.o.requests))
	tr := &http.Transport{MaxIdleConnsPerHost: c.o.workers}
	cl := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	var wg sync.WaitGroup
	start := time.Now()
	// The request count is spread over the run, so every fault meets load.
	var every time.Duration
	if c.o.requests > 0 {
		every = time.Duration(float64(c.o.duration) * float64(c.o.workers) / float64(c.o.requests))
	}
	for w := 0; w < c.o.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if c.o.requests > 0 && budget.Add(-1) < 0 {
					return
				}
				if wait := time.Until(start.Add(time.Duration(i) * every)); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				in := c.inst[(w+i)%len(c.inst)]
				write := i%10 < 7
				var req *http.Request
				key := fmt.Sprintf("w%d-%d", w, i)
				if write {
					b, _ := json.Marshal(map[string]any{"resource": []any{map[string]any{"k": key, "v": strings.Repeat("v", 200), "n": i}}})
					req, _ = http.NewRequest("POST", "http://"+in.addr+"/api/v2/soak/_table/item", bytes.NewReader(b))
					req.Header.Set("Content-Type", "application/json")
				} else {
					req, _ = http.NewRequest("GET", "http://"+in.addr+"/api/v2/soak/_table/item?limit=20&order=id%20desc", nil)
				}
				req.Header.Set("X-Platform-API-Key", c.appKey)
				t0 := time.Now()
				resp, err := cl.Do(req)
				if err != nil {
					st.add(classify(err), 0, false, "")
					time.Sleep(20 * time.Millisecond) // a balancer would route around it
					continue
				}
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				if rerr != nil {
					st.add(classify(rerr), 0, false, "")
					continue
				}
				acked := ""
				if write && resp.StatusCode == 200 {
					var out struct {
						Resource []struct {
							ID json.Number `json:"id"`
						} `json:"resource"`
					}
					if json.Unmarshal(body, &out) == nil && len(out.Resource) == 1 && out.Resource[0].ID != "" {
						acked = key
					}
				}
				st.add(fmt.Sprint(resp.StatusCode), d, resp.StatusCode < 300, acked)
				if resp.StatusCode >= 500 {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}(w)
	}
	go c.faults(ctx, start)
	wg.Wait()
	return st
}

func (c *cluster) say(start time.Time, f string, a ...any) {
	fmt.Printf("  %6.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(f, a...))
}

// faults injects the schedule at fractions of the run.
func (c *cluster) faults(ctx context.Context, start time.Time) {
	d := c.o.duration
	at := func(frac float64) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(start.Add(time.Duration(frac * float64(d))))):
			return true
		}
	}
	if !at(0.10) {
		return
	}
	c.say(start, "stalled and slow clients start (4 never read a page, 2 send headers a byte at a time)")
	for i := 0; i < 4; i++ {
		go c.stalled(ctx, c.inst[i%3].addr)
	}
	for i := 0; i < 2; i++ {
		go slowloris(ctx, c.inst[(i+1)%3].addr)
	}
	if !at(0.20) {
		return
	}
	c.say(start, "instance 2 killed (SIGKILL)")
	c.inst[2].mu.Lock()
	c.inst[2].cmd.Process.Kill()
	<-c.inst[2].done
	c.inst[2].mu.Unlock()
	if !at(0.30) {
		return
	}
	if err := c.start(c.inst[2]); err != nil {
		c.problem("instance 2 did not come back: %v", err)
	} else {
		c.say(start, "instance 2 restarted and healthy")
	}
	if !at(0.40) {
		return
	}
	c.say(start, "service database stopped (connections refused, open ones terminated)")
	c.admin.Exec("ALTER DATABASE " + c.dataDB + " ALLOW_CONNECTIONS false")
	c.admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", c.dataDB)
	if !at(0.50) {
		c.admin.Exec("ALTER DATABASE " + c.dataDB + " ALLOW_CONNECTIONS true")
		return
	}
	c.admin.Exec("ALTER DATABASE " + c.dataDB + " ALLOW_CONNECTIONS true")
	c.say(start, "service database back")
	if !at(0.60) {
		return
	}
	c.say(start, "Redis killed")
	c.redis.Process.Kill()
	time.Sleep(time.Duration(0.05 * float64(d)))
	if err := c.startRedis(); err != nil {
		c.problem("redis did not restart: %v", err)
	} else {
		c.say(start, "Redis restarted (empty)")
	}
	if !at(0.75) {
		return
	}
	c.say(start, "instance 1 stopped (SIGTERM)")
	in := c.inst[1]
	in.mu.Lock()
	in.cmd.Process.Signal(syscall.SIGTERM)
	t0 := time.Now()
	select {
	case err := <-in.done:
		if err != nil {
			c.problem("instance 1 exited with %v after SIGTERM", err)
		} else {
			c.say(start, "instance 1 exited 0 after %s", time.Since(t0).Round(time.Millisecond))
		}
	case <-time.After(15 * time.Second):
		c.problem("instance 1 still running 15s after SIGTERM")
		in.cmd.Process.Kill()
		<-in.done
	}
	in.mu.Unlock()
	if err := c.start(in); err != nil {
		c.problem("instance 1 did not come back: %v", err)
	} else {
		c.say(start, "instance 1 restarted and healthy")
	}
}

// stalled asks for a large page and never reads the answer, over and over.
func (c *cluster) stalled(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		fmt.Fprintf(conn, "GET /api/v2/soak/_table/item?limit=1000 HTTP/1.1\r\nHost: %s\r\nX-Platform-API-Key: %s\r\n\r\n", addr, c.appKey)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetReadBuffer(1024)
		}
		select {
		case <-ctx.Done():
		case <-time.After(8 * time.Second):
		}
		conn.Close()
	}
}

// slowloris sends a request's headers a byte at a time.
func slowloris(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, b := range []byte("GET /api/v2 HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 200)) {
			if ctx.Err() != nil {
				break
			}
			if _, err := conn.Write([]byte{b}); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		conn.Close()
	}
}

// --- verification and report ---

func (c *cluster) verify(st *stats) bool {
	for _, in := range c.inst {
		if err := waitHealthy(in.addr, 20*time.Second); err != nil {
			c.problem("instance %d not healthy at the end: %v", in.n, err)
		}
	}
	data, err := sql.Open("pgx", c.dataDSN)
	if err != nil {
		c.problem("open the service database: %v", err)
		return false
	}
	defer data.Close()
	present := map[string]bool{}
	rows, err := data.Query("SELECT k FROM item")
	if err != nil {
		c.problem("read back: %v", err)
		return false
	}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		present[k] = true
	}
	rows.Close()
	lost := 0
	for _, k := range st.acked {
		if !present[k] {
			lost++
			if lost <= 10 {
				fmt.Println("  lost:", k)
			}
		}
	}
	fmt.Printf("\nsent %d requests, %d succeeded (%.1f%%); %d writes acknowledged, %d rows in the table, %d acknowledged writes lost\n",
		st.sent, st.ok, 100*float64(st.ok)/float64(max(st.sent, 1)), len(st.acked), len(present), lost)
	keys := make([]string, 0, len(st.mix))
	for k := range st.mix {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return st.mix[b] - st.mix[a] })
	fmt.Print("outcomes:")
	for _, k := range keys {
		fmt.Printf("  %s: %d", k, st.mix[k])
	}
	fmt.Println()
	slices.Sort(st.latencies)
	pct := func(p float64) time.Duration {
		if len(st.latencies) == 0 {
			return 0
		}
		return st.latencies[min(len(st.latencies)-1, int(p*float64(len(st.latencies))))].Round(10 * time.Microsecond)
	}
	fmt.Printf("latency of successes: p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	// Redis was restarted empty: keys in it now mean the instances
	// reconnected by themselves and count again.
	if n, err := c.redisKeys(); err != nil || n == 0 {
		c.problem("rate limits are not counted in Redis after its restart (%d keys, %v)", n, err)
	} else {
		fmt.Printf("rate limits counted in Redis again after its restart (%d keys)\n", n)
	}
	if lost > 0 {
		c.problem("%d acknowledged writes lost", lost)
	}
	if st.ok*2 < st.sent {
		c.problem("fewer than half of the requests succeeded")
	}
	return len(c.problems) == 0
}

// redisKeys is Redis's DBSIZE.
func (c *cluster) redisKeys() (int, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", c.redisP), time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	fmt.Fprint(conn, "DBSIZE\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscanf(line, ":%d", &n)
	return n, err
}
