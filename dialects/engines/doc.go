// Package engines picks the [dialects.Dialect] for a kind and opens pools
// from the contract's DSN forms. It is the one place that knows all three
// engine packages.
package engines
