package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/portcullis-dev/portcullis/handlers"
	scriptstage "github.com/portcullis-dev/portcullis/handlers/script"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// Event scripts in the root: one script.Engine per configuration state,
// built from the snapshot's active event scripts (compiled scripts are
// cached by content, so a reload recompiles only what changed), and the
// handlers/script stage reading the engine in force.

// Scripts returns the event-script engine in force (nil before the first
// load).
func (s *Server) Scripts() *script.Engine {
	if st := s.state.Load(); st != nil {
		return st.scripts
	}
	return nil
}

// scriptEngine builds the engine of snap's active event scripts.
func (s *Server) scriptEngine(snap *store.Snapshot) *script.Engine {
	var list []script.Script
	for _, rec := range snap.EventScripts {
		if !rec.IsActive {
			continue
		}
		list = append(list, script.Script{Name: rec.Name, Type: rec.Type, Content: rec.Content,
			AllowModification: rec.AllowEventModification})
	}
	if len(list) == 0 {
		return nil
	}
	return script.New(list, script.Options{Timeout: s.cfg.ScriptTimeout})
}

// scriptStage builds the event-script stage over the engine in force.
func (s *Server) scriptStage() (handlers.Stage, error) {
	return scriptstage.New(scriptstage.Options{
		Engine:      s.Scripts,
		API:         s.Handler,
		Logger:      s.logger,
		MaxResponse: s.cfg.MaxBodyBytes,
		Queue:       s.scriptQueue,
	})
}

// newScriptQueue builds the queue of queued event scripts, counting the
// ones a full queue drops in portcullis_script_queue_dropped_total.
func newScriptQueue(cfg Config, reg prometheus.Registerer) *scriptstage.Queue {
	dropped := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "portcullis_script_queue_dropped_total",
		Help: "Queued event scripts dropped because the script queue was full.",
	})
	reg.MustRegister(dropped)
	return scriptstage.NewQueue(scriptstage.QueueOptions{Workers: cfg.ScriptQueueWorkers, Size: cfg.ScriptQueueSize,
		Dropped: dropped.Inc, Logger: cfg.Logger})
}
