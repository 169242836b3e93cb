package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/portcullis-dev/portcullis/proxy"
)

// describeCmd is schema-contracts:describe.
type describeCmd struct {
	Service  string `arg:"" help:"Name of the SQL service."`
	Table    string `help:"Print this table's canonical schema alone."`
	Pretty   bool   `help:"Indent the JSON."`
	Data     string `help:"Data directory." default:"./data" type:"path"`
	SystemDB string `help:"System database DSN (sqlite://, postgres://, mysql://). Default: SQLite in the data directory."`
}

func (c describeCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return proxy.DescribeSchema(ctx, proxy.Config{DataDir: c.Data, SystemDB: c.SystemDB, Logger: g.logger()},
		proxy.DescribeOptions{Service: c.Service, Table: c.Table, Pretty: c.Pretty}, os.Stdout)
}

// pruneCmd is schema-contracts:prune.
type pruneCmd struct {
	Service  string `help:"Prune this service only."`
	DryRun   bool   `help:"Report what would be deleted; delete nothing."`
	Data     string `help:"Data directory." default:"./data" type:"path"`
	SystemDB string `help:"System database DSN (sqlite://, postgres://, mysql://). Default: SQLite in the data directory."`
}

func (c pruneCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return proxy.PruneSnapshots(ctx, proxy.Config{DataDir: c.Data, SystemDB: c.SystemDB, Logger: g.logger()},
		proxy.PruneOptions{Service: c.Service, DryRun: c.DryRun}, os.Stdout)
}
