package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/alecthomas/kong"
)

// globals are the flags every command shares.
type globals struct {
	LogLevel  string `help:"Log level: debug, info, warn, error." default:"info" enum:"debug,info,warn,error"`
	LogFormat string `help:"Log format: text or json." default:"text" enum:"text,json"`
}

func (g globals) logger() *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(g.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if g.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

type cli struct {
	globals

	Init    initCmd    `cmd:"" help:"Create the system database, built-in services and apps, and the first administrator; print the admin API key."`
	Serve   serveCmd   `cmd:"" help:"Serve the API."`
	Demo    demoCmd    `cmd:"" help:"Run a throw-away instance with a sample SQLite database."`
	Version versionCmd `cmd:"" help:"Print the version."`

	SchemaContractsDescribe describeCmd `cmd:"" name:"schema-contracts:describe" help:"Print the canonical JSON schema of a SQL service's tables."`
	SchemaContractsPrune    pruneCmd    `cmd:"" name:"schema-contracts:prune" help:"Delete archived schema snapshots beyond each service's archive_retention_count."`
}

func main() {
	var c cli
	ctx := kong.Parse(&c,
		kong.Name("portcullis"),
		kong.Description("Portcullis turns databases and remote services into secured REST APIs."),
		kong.DefaultEnvars("PORTCULLIS"),
		kong.UsageOnError(),
		kong.Bind(&c.globals),
	)
	if err := ctx.Run(&c.globals); err != nil {
		fmt.Fprintln(os.Stderr, "portcullis:", strings.TrimSpace(err.Error()))
		os.Exit(1)
	}
}
