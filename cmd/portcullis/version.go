package main

import (
	"fmt"

	"github.com/portcullis-dev/portcullis/proxy"
)

type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Println(proxy.Version)
	return nil
}
