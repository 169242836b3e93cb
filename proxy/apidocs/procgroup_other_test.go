//go:build !unix

package apidocs_test

import "os/exec"

// inOwnGroup does nothing where process groups are not available.
func inOwnGroup(*exec.Cmd) {}

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
