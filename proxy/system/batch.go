package system

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// batchOpts are the contract's batch modes.
type batchOpts struct {
	// rollback writes the whole batch in one transaction, undone on the
	// first failure.
	rollback bool
	// cont goes on past failures (each record in its own transaction).
	cont bool
}

func batchOptsOf(p *params) batchOpts {
	return batchOpts{rollback: p.flag("rollback"), cont: p.flag("continue")}
}

// now is the time written into audit columns.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// errorObject is the envelope body of err, for a failed record of a batch.
func errorObject(err error) object {
	e := apierr.As(err)
	code := e.Code
	if code == 0 {
		code = e.Status
	}
	return object{{"error", object{{"code", code}, {"message", e.Message}, {"context", e.Context}, {"status_code", e.Status}}}}
}

type paramsKey struct{}

// withParams returns ctx carrying the request's parameters for the
// writers of inTx.
func withParams(ctx context.Context, p *params) context.Context {
	return context.WithValue(ctx, paramsKey{}, p)
}

// inTx runs fn in one write transaction that also bumps the configuration
// version, then runs the writer's after-commit hooks.
func (b *Backend) inTx(ctx context.Context, fn func(w *writer) error) error {
	id := caller.IdentityFrom(ctx)
	p, _ := ctx.Value(paramsKey{}).(*params)
	var w *writer
	err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		w = &writer{ctx: ctx, tx: tx, b: b, id: id, now: now(), params: p}
		if err := fn(w); err != nil {
			return err
		}
		return store.Touch(ctx, tx)
	})
	if err != nil {
		return err
	}
	for _, f := range w.after {
		f(context.WithoutCancel(ctx))
	}
	return nil
}

// runBatch runs n record operations with the contract's batch semantics
// and returns each one's result. verb completes "Not all requested records
// could be …". A request of one record fails with that record's own error;
// a larger one with a batch error listing the failed indexes. The registry
// is reloaded once when anything was written.
func (b *Backend) runBatch(ctx context.Context, opts batchOpts, verb string, n int, fn func(w *writer, i int) (object, error)) ([]object, error) {
	results := make([]object, 0, n)
	if opts.rollback {
		failed := -1
		err := b.inTx(ctx, func(w *writer) error {
			for i := range n {
				o, err := fn(w, i)
				if err != nil {
					failed = i
					return err
				}
				results = append(results, o)
			}
			return nil
		})
		if err != nil {
			if n == 1 || failed < 0 {
				return nil, err
			}
			return nil, apierr.Batch(fmt.Sprintf("Batch Error: Not all requested records could be %s. All changes rolled back.", verb),
				[]apierr.BatchItem{{Index: failed, Message: apierr.As(err).Message}}, nil)
		}
		b.reload(ctx)
		return results, nil
	}
	var items []apierr.BatchItem
	var first error
	written := 0
	for i := range n {
		var o object
		err := b.inTx(ctx, func(w *writer) error {
			var err error
			o, err = fn(w, i)
			return err
		})
		if err != nil {
			if first == nil {
				first = err
			}
			items = append(items, apierr.BatchItem{Index: i, Message: apierr.As(err).Message})
			results = append(results, errorObject(err))
			if !opts.cont {
				break
			}
			continue
		}
		written++
		results = append(results, o)
	}
	if written > 0 {
		b.reload(ctx)
	}
	if first != nil {
		if n == 1 {
			return nil, first
		}
		return nil, apierr.Batch(fmt.Sprintf("Batch Error: Not all requested records could be %s.", verb), items, results)
	}
	return results, nil
}

// reload makes the writer's registry pick the change up now (the other
// instances notice the version bump on their own).
func (b *Backend) reload(ctx context.Context) {
	if b.deps.Registry == nil {
		return
	}
	if err := b.deps.Registry.Reload(context.WithoutCancel(ctx)); err != nil {
		b.log.Warn("reload after a configuration write failed", "error", err)
	}
}
