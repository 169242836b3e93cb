package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/portcullis-dev/portcullis/dialects"
)

// The script scenarios measure what an empty event script adds to a
// request: both sides are Portcullis, answering the same GET by id; on the
// "portcullis" side an empty pre_process script (Lua or JavaScript) is
// attached to the table's by-id event, on the "baseline" side no script
// is. The script is attached or removed through the system API (and the
// configuration reloaded) before each side's load, so the two states
// alternate like the two servers of the other scenarios.

// scriptScenario returns the scenario of one engine's empty hook.
func scriptScenario(engine string) scenario {
	return scenario{
		name:  "script-" + engine,
		title: "GET by id, empty " + engine + " pre_process hook vs none",
		targets: func(e *env, kind dialects.Kind) ([]reqSpec, []reqSpec) {
			r := rng()
			var p []reqSpec
			for range 256 {
				id := strconv.Itoa(1 + r.IntN(e.rows))
				p = append(p, e.get(e.api(kind, "/_table/item/"+id), e.inst.headers()))
			}
			return p, p
		},
		prepare: func(ctx context.Context, e *env, kind dialects.Kind, side string) error {
			return e.inst.setHook(ctx, e.inst.services[kind]+"._table.item.{id}.get.pre_process", engine, side == "portcullis")
		},
	}
}

// setHook attaches an empty script of type engine to event (on) or
// removes it (off), and reloads the configuration.
func (in *instance) setHook(ctx context.Context, event, engine string, on bool) error {
	_, attached := in.srv.Scripts().Lookup(event)
	if attached == on {
		return nil
	}
	path := "/api/v2/system/event_script/" + event
	var err error
	if on {
		err = in.adminCall(ctx, http.MethodPost, path, map[string]any{"type": engine, "content": "return",
			"is_active": true}, http.StatusCreated, nil)
	} else {
		err = in.adminCall(ctx, http.MethodDelete, path, nil, http.StatusOK, nil)
	}
	if err != nil {
		return fmt.Errorf("script hook: %w", err)
	}
	return in.srv.Reload(ctx)
}
