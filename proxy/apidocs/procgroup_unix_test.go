//go:build unix

package apidocs_test

import (
	"os/exec"
	"syscall"
)

// inOwnGroup makes cmd start a process group of its own, so that
// killGroup reaches the helper processes it starts as well.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process and every process of its group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
