package proxy

import (
	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/enforce"
	"github.com/portcullis-dev/portcullis/proxy/contract"
)

// contractStage is schema-contract runtime enforcement, reading settings
// and active snapshots from the configuration in force and live shapes
// from the services' backends.
func (s *Server) contractStage() (handlers.Stage, error) {
	return enforce.New(enforce.Options{
		Snapshot: s.Snapshot,
		Source: func(name string) (contract.Source, bool) {
			b, ok := s.Backend(name)
			if !ok {
				return nil, false
			}
			src, ok := b.(contract.Source)
			return src, ok
		},
		MaxAge: s.cfg.ContractMaxAge,
		Logger: s.logger,
	})
}
