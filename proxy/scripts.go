package proxy

import (
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portcullis-dev/portcullis/handlers"
	scriptstage "github.com/portcullis-dev/portcullis/handlers/script"
	"github.com/portcullis-dev/portcullis/proxy/scriptevent"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// Event scripts in the root: one script.Engine per configuration state,
// built from the snapshot's active event scripts and the script files of
// DataDir/scripts (compiled scripts are cached by content, so a reload
// recompiles only what changed), and the handlers/script stage reading the
// engine in force. A record wins over a file of the same name, active or
// not (an inactive record switches the file off); a file script is active
// and may modify the event only when it says so in a directive comment at
// its top (// portcullis: allow_event_modification; see
// script.Directives), as a record needs allow_event_modification. The directory is polled (script.DefaultPoll), and a
// change swaps in a new engine without a configuration reload.

// Scripts returns the event-script engine in force (nil before the first
// load).
func (s *Server) Scripts() *script.Engine {
	if st := s.state.Load(); st != nil {
		return st.scripts
	}
	return nil
}

// openScriptDir starts watching DataDir/scripts.
func (s *Server) openScriptDir() {
	s.scriptDir = script.WatchDir(filepath.Join(s.cfg.DataDir, "scripts"),
		script.DirOptions{OnChange: s.scriptFilesChanged, Logger: s.logger})
}

// ScriptFile returns the script file DataDir/scripts/{name}.{lua,js,py,php}
// in force: an event's, or a scripted service's when name is a service
// name. Files are read again within script.DefaultPoll of a change.
func (s *Server) ScriptFile(name string) (script.File, bool) {
	if s.scriptDir == nil {
		return script.File{}, false
	}
	return s.scriptDir.File(name)
}

// scriptFilesChanged swaps in an engine built over the files now in
// DataDir/scripts; the rest of the state stays.
func (s *Server) scriptFilesChanged() {
	for _, f := range s.scriptDir.Files() {
		if f.IsEvent() {
			if err := script.Check(f.Type, f.Content); err != nil {
				s.logger.Warn("script file does not compile; its event fails until it is fixed", "path", f.Path, "error", err)
			}
		}
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.state.Load()
	if old == nil {
		return
	}
	next := *old
	next.scripts = s.scriptEngine(old.snap)
	s.state.Store(&next)
	s.logger.Info("script files reloaded", "dir", s.scriptDir.Path())
}

// scriptEngine builds the engine of snap's active event scripts and the
// event script files no record overrides.
func (s *Server) scriptEngine(snap *store.Snapshot) *script.Engine {
	var list []script.Script
	records := make(map[string]bool, len(snap.EventScripts))
	for _, rec := range snap.EventScripts {
		records[rec.Name] = true
		if !rec.IsActive {
			continue
		}
		list = append(list, script.Script{Name: rec.Name, Type: rec.Type, Content: rec.Content,
			AllowModification: rec.AllowEventModification})
	}
	for _, f := range s.scriptDir.Files() {
		if f.IsEvent() && !records[f.Name] {
			list = append(list, script.Script{Name: f.Name, Type: f.Type, Content: f.Content, AllowModification: f.AllowModification})
		}
	}
	if len(list) == 0 {
		return nil
	}
	return script.New(list, script.Options{Timeout: s.cfg.ScriptTimeout, HasLookups: scriptevent.HasLookups})
}

// scriptStage builds the event-script stage over the engine in force.
func (s *Server) scriptStage() (handlers.Stage, error) {
	return scriptstage.New(scriptstage.Options{
		Engine:      s.Scripts,
		API:         s.Handler,
		Logger:      s.logger,
		MaxResponse: s.cfg.MaxBodyBytes,
		Queue:       s.scriptQueue,
		Snapshot:    s.Snapshot,
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
