package main

import (
	"context"
	"fmt"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

type initCmd struct {
	Data        string `help:"Data directory." default:"./data" type:"path"`
	Email       string `help:"E-mail of the first administrator." required:""`
	Password    string `help:"Password of the first administrator (at least 8 characters)." required:""`
	Name        string `help:"Display name of the first administrator." default:"Administrator"`
	SystemDB    string `help:"System database DSN (sqlite://, postgres://, mysql://). Default: SQLite in the data directory."`
	AdminAPIKey string `help:"Use this key (64 hex characters) for the admin app instead of generating one."`
}

func (c initCmd) Run(g *globals) error {
	res, err := proxy.Init(context.Background(), proxy.Config{DataDir: c.Data, SystemDB: c.SystemDB, Logger: g.logger()},
		store.InitOptions{Email: c.Email, Password: c.Password, Name: c.Name, AdminAPIKey: c.AdminAPIKey})
	if err != nil {
		return err
	}
	fmt.Println(res.AdminAPIKey)
	return nil
}
