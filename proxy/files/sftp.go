package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// SFTPConfig is the configuration of an sftp_file service, with
// DreamFactory's keys.
type SFTPConfig struct {
	// Host and Port of the SSH server (port 22 by default).
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
	// Username, and Password or PrivateKey (PEM text) to sign in.
	Username   string `json:"username"`
	Password   string `json:"password,omitempty"`
	PrivateKey string `json:"private_key,omitempty"`
	// HostFingerprint pins the server's host key: "SHA256:…" as ssh-keygen
	// -l prints it, or the legacy colon-separated MD5 hex. Empty accepts any
	// host key (as DreamFactory does), and a warning is logged.
	HostFingerprint string `json:"host_fingerprint,omitempty"`
	// Timeout bounds connecting and each operation, in seconds (default 30).
	Timeout int `json:"timeout,omitempty"`
	// Container is the root folder on the server (required).
	Container string `json:"container"`
	// PublicPath lists files and folders served without credentials at
	// /storage/{service}/{path} (see the package doc).
	PublicPath []string `json:"public_path,omitempty"`
}

// ParseSFTPConfig reads and checks an sftp_file configuration, reporting
// every problem at once.
func ParseSFTPConfig(raw json.RawMessage) (SFTPConfig, error) {
	var c SFTPConfig
	var errs []error
	if err := service.DecodeConfig(raw, &c, []string{"host", "port", "username", "password", "private_key", "host_fingerprint", "timeout", "container", "public_path"}); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(c.Host) == "" {
		errs = append(errs, errors.New("host: required"))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, errors.New("port: must be between 1 and 65535"))
	}
	if c.Username == "" {
		errs = append(errs, errors.New("username: required"))
	}
	if c.Password == "" && c.PrivateKey == "" {
		errs = append(errs, errors.New("password or private_key: one is required"))
	}
	if c.PrivateKey != "" {
		if _, err := ssh.ParsePrivateKey([]byte(c.PrivateKey)); err != nil {
			errs = append(errs, fmt.Errorf("private_key: must be an unencrypted private key in PEM or OpenSSH form: %v", err))
		}
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("timeout: must not be negative"))
	}
	if strings.TrimSpace(c.Container) == "" {
		errs = append(errs, errors.New("container: required (the root folder on the server)"))
	} else if err := checkRemoteContainer(c.Container); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// checkRemoteContainer refuses a container with "." or ".." segments or
// control characters.
func checkRemoteContainer(c string) error {
	for _, seg := range strings.Split(strings.Trim(c, "/"), "/") {
		if seg == "." || seg == ".." || strings.ContainsAny(seg, "\x00\\") {
			return errors.New("container: must not contain '.' or '..' segments, backslashes or NUL")
		}
	}
	return nil
}

// SFTP is a [Storage] on an SSH server's file system, below a container
// folder. It connects on first use, keeps one connection, and connects
// again after the connection breaks; a server it cannot reach is
// [ErrUnavailable]. Paths stay below the container as far as names go;
// links on the server are the server's (its chroot is the real boundary).
type SFTP struct {
	cfg    SFTPConfig
	logger *slog.Logger
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)

	mu     sync.Mutex
	conn   *ssh.Client
	client *sftp.Client
}

var _ Storage = (*SFTP)(nil)

// NewSFTP returns the storage for cfg (checked by ParseSFTPConfig). dial,
// when set, replaces the network dialer (an allow list, say).
func NewSFTP(cfg SFTPConfig, logger *slog.Logger, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *SFTP {
	if cfg.Port == 0 {
		cfg.Port = 22
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if dial == nil {
		d := &net.Dialer{}
		dial = d.DialContext
	}
	return &SFTP{cfg: cfg, logger: logger, dial: dial}
}

func (s *SFTP) timeout() time.Duration { return time.Duration(s.cfg.Timeout) * time.Second }

// hostKey checks the server's key against the pinned fingerprint.
func (s *SFTP) hostKey(_ string, _ net.Addr, key ssh.PublicKey) error {
	want := strings.TrimSpace(s.cfg.HostFingerprint)
	if want == "" {
		s.logger.Warn("sftp: host key accepted without a pinned host_fingerprint", "host", s.cfg.Host, "fingerprint", ssh.FingerprintSHA256(key))
		return nil
	}
	if want == ssh.FingerprintSHA256(key) || strings.EqualFold(strings.ReplaceAll(want, ":", ""), strings.ReplaceAll(strings.TrimPrefix(ssh.FingerprintLegacyMD5(key), "MD5:"), ":", "")) {
		return nil
	}
	return fmt.Errorf("sftp: host key %s does not match host_fingerprint", ssh.FingerprintSHA256(key))
}

// get returns a connected client, connecting when there is none.
func (s *SFTP) get(ctx context.Context) (*sftp.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		return s.client, nil
	}
	var auth []ssh.AuthMethod
	if s.cfg.PrivateKey != "" {
		signer, err := ssh.ParsePrivateKey([]byte(s.cfg.PrivateKey))
		if err != nil {
			return nil, fmt.Errorf("sftp: private key: %w", err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if s.cfg.Password != "" {
		auth = append(auth, ssh.Password(s.cfg.Password))
	}
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	dctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	raw, err := s.dial(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: sftp: dial %s: %w", ErrUnavailable, addr, err)
	}
	_ = raw.SetDeadline(time.Now().Add(s.timeout()))
	c, chans, reqs, err := ssh.NewClientConn(raw, addr, &ssh.ClientConfig{
		User: s.cfg.Username, Auth: auth, HostKeyCallback: s.hostKey, Timeout: s.timeout(),
	})
	if err != nil {
		raw.Close()
		return nil, fmt.Errorf("%w: sftp: ssh handshake with %s: %w", ErrUnavailable, addr, err)
	}
	_ = raw.SetDeadline(time.Time{})
	conn := ssh.NewClient(c, chans, reqs)
	client, err := sftp.NewClient(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: sftp: start subsystem: %w", ErrUnavailable, err)
	}
	s.conn, s.client = conn, client
	go func() {
		// Forget the connection once it ends, so the next call connects
		// again.
		_ = conn.Wait()
		s.mu.Lock()
		if s.conn == conn {
			s.conn, s.client = nil, nil
		}
		s.mu.Unlock()
	}()
	return client, nil
}

// full is the server path of a storage name.
func (s *SFTP) full(name string) string { return path.Join(s.cfg.Container, name) }

// sftpErr maps the SFTP package's errors onto the Storage errors; a broken
// connection is ErrUnavailable.
func (s *SFTP) sftpErr(err error) error {
	if err == nil {
		return nil
	}
	var se *sftp.StatusError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	case errors.As(err, &se):
		switch se.FxCode() {
		case sftp.ErrSSHFxNoSuchFile:
			return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		case sftp.ErrSSHFxPermissionDenied:
			return fmt.Errorf("%w: %w", fs.ErrPermission, err)
		}
		return err
	case errors.Is(err, ErrUnavailable):
		return err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, sftp.ErrSSHFxConnectionLost):
		s.reset()
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		s.reset()
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// reset drops the connection so the next call connects again.
func (s *SFTP) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
	}
	s.conn, s.client = nil, nil
}

// Stat describes name.
func (s *SFTP) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	c, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	fi, err := c.Stat(s.full(name))
	return fi, s.sftpErr(err)
}

// ReadDir lists the folder name, sorted by name.
func (s *SFTP) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	c, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	fi, err := c.Stat(s.full(name))
	if err != nil {
		return nil, s.sftpErr(err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder", fs.ErrNotExist, name)
	}
	infos, err := c.ReadDir(s.full(name))
	if err != nil {
		return nil, s.sftpErr(err)
	}
	out := infos[:0]
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), tempPrefix) || fi.Name() == "." || fi.Name() == ".." {
			continue
		}
		out = append(out, fi)
	}
	slices.SortFunc(out, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Open opens the file name for reading.
func (s *SFTP) Open(ctx context.Context, name string) (File, error) {
	c, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	fi, err := c.Stat(s.full(name))
	if err != nil {
		return nil, s.sftpErr(err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a folder", fs.ErrNotExist, name)
	}
	f, err := c.Open(s.full(name))
	return f, s.sftpErr(err)
}

// Write uploads to a hidden file next to name and renames it into place.
func (s *SFTP) Write(ctx context.Context, name string, r io.Reader, exclusive bool) (int64, error) {
	c, err := s.get(ctx)
	if err != nil {
		return 0, err
	}
	if fi, err := c.Stat(s.full(parent(name))); err != nil || !fi.IsDir() {
		if err = s.sftpErr(err); err == nil || errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%w: folder of %s", fs.ErrNotExist, name)
		}
		return 0, err
	}
	if fi, err := c.Stat(s.full(name)); err == nil && (exclusive || fi.IsDir()) {
		return 0, fmt.Errorf("%w: %s", fs.ErrExist, name)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := s.full(join(parent(name), tempPrefix+hex.EncodeToString(rnd[:])))
	f, err := c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return 0, s.sftpErr(err)
	}
	n, err := io.Copy(f, contextReader{ctx, r})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = c.Remove(tmp)
		return n, s.sftpErr(err)
	}
	if exclusive {
		if _, err := c.Stat(s.full(name)); err == nil {
			_ = c.Remove(tmp)
			return n, fmt.Errorf("%w: %s", fs.ErrExist, name)
		}
	}
	if err := c.PosixRename(tmp, s.full(name)); err != nil {
		// Servers without the posix-rename extension: plain rename, which
		// fails over an existing file, so remove that first.
		_ = c.Remove(s.full(name))
		if err := c.Rename(tmp, s.full(name)); err != nil {
			_ = c.Remove(tmp)
			return n, s.sftpErr(err)
		}
	}
	return n, nil
}

// Mkdir creates the folder name.
func (s *SFTP) Mkdir(ctx context.Context, name string) error {
	c, err := s.get(ctx)
	if err != nil {
		return err
	}
	if _, err := c.Stat(s.full(name)); err == nil {
		return fmt.Errorf("%w: %s", fs.ErrExist, name)
	}
	if fi, err := c.Stat(s.full(parent(name))); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: folder of %s", fs.ErrNotExist, name)
	}
	return s.sftpErr(c.Mkdir(s.full(name)))
}

// MkdirAll creates the folder name and its missing parents.
func (s *SFTP) MkdirAll(ctx context.Context, name string) error {
	c, err := s.get(ctx)
	if err != nil {
		return err
	}
	return s.sftpErr(c.MkdirAll(s.full(name)))
}

// Remove deletes a file or an empty folder.
func (s *SFTP) Remove(ctx context.Context, name string) error {
	c, err := s.get(ctx)
	if err != nil {
		return err
	}
	fi, err := c.Lstat(s.full(name))
	if err != nil {
		return s.sftpErr(err)
	}
	if fi.IsDir() {
		infos, err := c.ReadDir(s.full(name))
		if err != nil {
			return s.sftpErr(err)
		}
		if len(infos) > 0 {
			return fmt.Errorf("%w: %s", ErrNotEmpty, name)
		}
		return s.sftpErr(c.RemoveDirectory(s.full(name)))
	}
	return s.sftpErr(c.Remove(s.full(name)))
}

// RemoveAll deletes name and everything below it.
func (s *SFTP) RemoveAll(ctx context.Context, name string) error {
	c, err := s.get(ctx)
	if err != nil {
		return err
	}
	if _, err := c.Lstat(s.full(name)); err != nil {
		return s.sftpErr(err)
	}
	if name == "" {
		return errors.New("sftp: refusing to remove the container itself")
	}
	return s.sftpErr(c.RemoveAll(s.full(name)))
}

// Close closes the connection.
func (s *SFTP) Close() error {
	s.reset()
	return nil
}
