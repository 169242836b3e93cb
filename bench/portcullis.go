package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Credentials of the instance the harness starts.
const (
	adminEmail   = "admin@bench.local"
	adminPass    = "bench-admin-password"
	userEmail    = "reader@bench.local"
	userPass     = "bench-reader-password"
	rwsService   = "upstream"
	limitRate    = 1_000_000_000 // per minute: counted, never reached
	paddingLimit = 30            // limits that do not apply to the bench requests
)

// instance is a running Portcullis with a non-administrator client: an
// app whose role reaches the data services and the remote service, a user
// signed in through that app, and limits that count every request.
type instance struct {
	srv      *proxy.Server
	http     *http.Server
	url      string
	adminKey string
	admin    string // administrator session token
	appKey   string // the bench app's API key
	session  string // the bench user's session token
	// services maps each engine to its data service's name.
	services map[dialects.Kind]string
	// limits is how many limits exist; applying is how many count a
	// request to a data service (checked through limit_cache).
	limits, applying int
}

// instanceReloadInterval is the instances' configuration polling interval
// (0: the default). The in-process benchmarks set an hour, so that under
// callgrind the polling (which grows with the run's duration, not with its
// requests) is not counted; the instance reloads its own changes at once.
var instanceReloadInterval time.Duration

// startInstance initialises a data directory (SQLite system database),
// starts Portcullis on a loopback port and configures it through its own
// system API, as an operator would.
func startInstance(ctx context.Context, dir string, dbs []*database, upstreamURL string, accessLog bool) (*instance, error) {
	level := slog.LevelWarn
	if accessLog {
		level = slog.LevelInfo
	}
	cfg := proxy.Config{
		DataDir:        dir,
		Logger:         slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: level})),
		ReloadInterval: instanceReloadInterval,
	}
	res, err := proxy.Init(ctx, cfg, store.InitOptions{Email: adminEmail, Password: adminPass, Name: "Bench Admin"})
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	srv, err := proxy.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start Portcullis: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	in := &instance{srv: srv, http: hs, url: "http://" + ln.Addr().String(), adminKey: res.AdminAPIKey,
		services: map[dialects.Kind]string{}}
	if err := in.configure(ctx, dbs, upstreamURL); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

func (in *instance) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = in.http.Shutdown(ctx)
	_ = in.srv.Close()
}

// call sends a request to the instance with the given key and session and
// decodes a JSON answer into out (when not nil). It fails on any status
// other than want.
func (in *instance) call(ctx context.Context, method, path, key, session string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, in.url+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Platform-API-Key", key)
	}
	if session != "" {
		req.Header.Set("X-Platform-Session-Token", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// admin calls the system API as the administrator.
func (in *instance) adminCall(ctx context.Context, method, path string, body any, want int, out any) error {
	return in.call(ctx, method, path, in.adminKey, in.admin, body, want, out)
}

// ids is the answer of a create.
type ids struct {
	Resource []struct {
		ID     int64  `json:"id"`
		APIKey string `json:"api_key"`
	} `json:"resource"`
}

// createOne creates one system record and returns its id (and api_key
// when asked for).
func (in *instance) createOne(ctx context.Context, resource string, rec map[string]any) (int64, string, error) {
	var out ids
	if err := in.adminCall(ctx, http.MethodPost, "/api/v2/system/"+resource, map[string]any{"resource": []any{rec}}, http.StatusCreated, &out); err != nil {
		return 0, "", err
	}
	if len(out.Resource) != 1 || out.Resource[0].ID == 0 {
		return 0, "", fmt.Errorf("create %s: no id in the answer", resource)
	}
	return out.Resource[0].ID, out.Resource[0].APIKey, nil
}

func (in *instance) configure(ctx context.Context, dbs []*database, upstreamURL string) error {
	var tok struct {
		SessionToken string `json:"session_token"`
	}
	if err := in.call(ctx, http.MethodPost, "/api/v2/system/admin/session", in.adminKey, "",
		map[string]string{"email": adminEmail, "password": adminPass}, http.StatusOK, &tok); err != nil {
		return fmt.Errorf("administrator sign-in: %w", err)
	}
	in.admin = tok.SessionToken

	// Services: one per engine, and the remote HTTP service.
	svcIDs := map[string]int64{}
	for _, d := range dbs {
		name := "bench_" + string(d.kind)
		id, _, err := in.createOne(ctx, "service", map[string]any{"name": name, "label": "Bench " + string(d.kind),
			"type": string(d.kind), "is_active": true, "config": map[string]any{"dsn": d.dsn}})
		if err != nil {
			return fmt.Errorf("create %s service: %w", d.kind, err)
		}
		svcIDs[name] = id
		in.services[d.kind] = name
	}
	upID, _, err := in.createOne(ctx, "service", map[string]any{"name": rwsService, "label": "Upstream",
		"type": "rws", "is_active": true, "config": map[string]any{"base_url": upstreamURL}})
	if err != nil {
		return fmt.Errorf("create rws service: %w", err)
	}
	svcIDs[rwsService] = upID

	// A role as an application would have: the tables it reads and writes
	// on each data service, the root, the remote service, and entries for
	// tables it does not use.
	const api = 1 // requestor mask: API calls
	var access []any
	for name, id := range svcIDs {
		if name == rwsService {
			access = append(access, map[string]any{"service_id": id, "component": "*", "verb_mask": 1, "requestor_mask": api})
			continue
		}
		access = append(access,
			map[string]any{"service_id": id, "component": "", "verb_mask": 1, "requestor_mask": api},
			map[string]any{"service_id": id, "component": "_table/item/*", "verb_mask": 1 | 2, "requestor_mask": api},
			map[string]any{"service_id": id, "component": "_table/customer/*", "verb_mask": 1 | 2 | 4 | 8, "requestor_mask": api},
			map[string]any{"service_id": id, "component": "_table/audit/*", "verb_mask": 0, "requestor_mask": api},
			map[string]any{"service_id": id, "component": "_schema/*", "verb_mask": 1, "requestor_mask": api})
	}
	roleID, _, err := in.createOne(ctx, "role", map[string]any{"name": "bench reader", "is_active": true,
		"role_service_access_by_role_id": access})
	if err != nil {
		return fmt.Errorf("create role: %w", err)
	}
	otherRole, _, err := in.createOne(ctx, "role", map[string]any{"name": "bench other", "is_active": true})
	if err != nil {
		return fmt.Errorf("create role: %w", err)
	}
	appID, key, err := in.createOne(ctx, "app?fields=id,api_key", map[string]any{"name": "bench", "role_id": roleID, "is_active": true})
	if err != nil {
		return fmt.Errorf("create app: %w", err)
	}
	_ = appID
	if key == "" {
		return errors.New("create app: no api_key in the answer")
	}
	in.appKey = key
	userID, _, err := in.createOne(ctx, "user", map[string]any{"email": userEmail, "name": "Bench Reader", "password": userPass, "is_active": true})
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}

	// Limits: every type that can apply to the bench user's requests, and
	// padding that applies to other users, roles, services and verbs, so
	// that the engine matches against a realistic configuration.
	var limits []any
	add := func(typ string, extra map[string]any) {
		rec := map[string]any{"name": fmt.Sprintf("bench %d %s", len(limits)+1, typ), "type": typ,
			"rate": limitRate, "period": "minute", "is_active": true}
		for k, v := range extra {
			rec[k] = v
		}
		limits = append(limits, rec)
	}
	add("instance", nil)
	add("instance.user", map[string]any{"user_id": userID})
	add("instance.each_user", nil)
	add("instance.role", map[string]any{"role_id": roleID})
	for name, id := range svcIDs {
		add("instance.service", map[string]any{"service_id": id})
		add("instance.each_user.service", map[string]any{"service_id": id})
		if name != rwsService {
			add("instance.user.service.endpoint", map[string]any{"user_id": userID, "service_id": id, "endpoint": "_table/item"})
		}
	}
	otherUser, _, err := in.createOne(ctx, "user", map[string]any{"email": "other@bench.local", "name": "Other", "password": userPass, "is_active": true})
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	dataID := svcIDs[in.services[dbs[0].kind]]
	for i := range paddingLimit {
		n := strconv.Itoa(i)
		switch i % 5 {
		case 0:
			add("instance.service.endpoint", map[string]any{"service_id": dataID, "endpoint": "_table/customer" + n})
		case 1:
			add("instance.user.service.endpoint", map[string]any{"user_id": otherUser, "service_id": dataID, "endpoint": "_table/item" + n})
		case 2:
			add("instance.each_user.service.endpoint", map[string]any{"service_id": dataID, "endpoint": "_table/order" + n})
		case 3:
			add("instance.service.endpoint", map[string]any{"service_id": upID, "endpoint": "archive" + n})
		case 4:
			add("instance.role", map[string]any{"role_id": otherRole, "verb": []string{"GET", "POST", "PUT", "PATCH", "DELETE", "GET"}[i/5], "period": []string{"minute", "minute", "minute", "minute", "minute", "hour"}[i/5]})
		}
	}
	if err := in.adminCall(ctx, http.MethodPost, "/api/v2/system/limit", map[string]any{"resource": limits}, http.StatusCreated, nil); err != nil {
		return fmt.Errorf("create limits: %w", err)
	}
	in.limits = len(limits)

	// The user signs in through the bench app, as a client application does.
	if err := in.call(ctx, http.MethodPost, "/api/v2/user/session", in.appKey, "",
		map[string]string{"email": userEmail, "password": userPass}, http.StatusOK, &tok); err != nil {
		return fmt.Errorf("user sign-in: %w", err)
	}
	in.session = tok.SessionToken
	return in.checkLive(ctx)
}

// checkLive waits until the configuration is live (services reachable by
// the bench client, limits loaded) and counts the limits that apply to a
// read of the item table.
func (in *instance) checkLive(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	var name string
	for _, n := range in.services {
		name = n
		break
	}
	for {
		err := in.call(ctx, http.MethodGet, "/api/v2/"+name+"/_table/item/1", in.appKey, in.session, nil, http.StatusOK, nil)
		snap := in.srv.Snapshot()
		if err == nil && snap != nil && len(snap.Limits) == in.limits {
			break
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("%d limits loaded, want %d", len(snap.Limits), in.limits)
			}
			return fmt.Errorf("configuration not live: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var cache struct {
		Resource []struct {
			Attempts int64 `json:"attempts"`
		} `json:"resource"`
	}
	if err := in.adminCall(ctx, http.MethodGet, "/api/v2/system/limit_cache", nil, http.StatusOK, &cache); err != nil {
		return fmt.Errorf("read limit counters: %w", err)
	}
	for _, c := range cache.Resource {
		if c.Attempts > 0 {
			in.applying++
		}
	}
	return nil
}

// headers returns the bench client's credentials as request headers.
func (in *instance) headers() http.Header {
	return http.Header{"X-Platform-Api-Key": {in.appKey}, "X-Platform-Session-Token": {in.session}}
}

// learnTrivial hands the baseline the bytes of Portcullis's answer to the
// pipeline scenario's call.
func (in *instance) learnTrivial(ctx context.Context, kind dialects.Kind, b *baseline) error {
	status, body, err := fetch(ctx, reqSpec{Method: http.MethodGet, URL: in.url + "/api/v2/" + in.services[kind], Header: in.headers()})
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET /api/v2/%s: %d %s", in.services[kind], status, bytes.TrimSpace(body))
	}
	b.trivialBody.Store(&body)
	return nil
}
