// Package recoverer is the outermost pipeline stage: it turns a panic in any
// later stage or backend into a 500 in the error envelope and logs the
// stack, so one bad request never takes the process down.
package recoverer
