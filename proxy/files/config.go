package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// LocalConfig is the configuration of a local_file service.
type LocalConfig struct {
	// Container is the root folder: relative to the data directory, or
	// absolute. Empty means DIR/storage.
	Container string `json:"container"`
	// PublicPath lists files and folders served without credentials at
	// /storage/{service}/{path} (see the package doc).
	PublicPath []string `json:"public_path,omitempty"`
}

// forbiddenRoots are the system folders a local_file container may not
// be, nor be below (DreamFactory's list).
var forbiddenRoots = []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/dev", "/etc", "/proc", "/sys", "/boot"}

// ParseLocalConfig reads and checks a local_file configuration, reporting
// every problem at once.
func ParseLocalConfig(raw json.RawMessage) (LocalConfig, error) {
	var c LocalConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, []string{"container", "public_path"}); err != nil {
		errs = append(errs, err)
	}
	c.Container = strings.TrimSpace(c.Container)
	if strings.ContainsRune(c.Container, 0) {
		errs = append(errs, errors.New("container: must not contain NUL"))
	}
	if filepath.IsAbs(c.Container) {
		clean := filepath.Clean(c.Container)
		if clean == "/" {
			errs = append(errs, errors.New("container: Invalid root directory: / is not allowed"))
		}
		for _, f := range forbiddenRoots {
			if clean == f || strings.HasPrefix(clean, f+"/") {
				errs = append(errs, fmt.Errorf("container: Invalid root directory: %s is not allowed", f))
			}
		}
	} else if c.Container != "" {
		clean := filepath.Clean(c.Container)
		if clean == ".." || strings.HasPrefix(clean, "../") {
			errs = append(errs, errors.New("container: a relative container must stay inside the data directory"))
		}
	}
	for i, p := range c.PublicPath {
		if _, err := CleanPath(p); err != nil {
			errs = append(errs, fmt.Errorf("public_path[%d]: %v", i, err))
		}
	}
	return c, errors.Join(errs...)
}

// Root resolves the container against the data directory.
func (c LocalConfig) Root(dataDir string) string {
	switch {
	case c.Container == "":
		return filepath.Join(dataDir, "storage")
	case filepath.IsAbs(c.Container):
		return filepath.Clean(c.Container)
	}
	return filepath.Join(dataDir, c.Container)
}

// isAbs reports whether a container is an absolute path.
func isAbs(container string) bool { return filepath.IsAbs(container) }
