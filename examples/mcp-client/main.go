package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// credentials adds the platform's API key and session token to every
// request.
type credentials struct {
	key, session string
}

func (c credentials) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Platform-API-Key", c.key)
	if c.session != "" {
		r.Header.Set("X-Platform-Session-Token", c.session)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-client:", err)
		os.Exit(1)
	}
}

// run connects, lists the tools, and calls one when -tool is given.
func run(ctx context.Context, argv []string, out io.Writer) error {
	fs := flag.NewFlagSet("mcp-client", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080/api/v2/ai", "the mcp service's URL")
	key := fs.String("key", os.Getenv("K"), "the platform API key (default $K)")
	session := fs.String("session", "", "a session token, to act as a signed-in user")
	sse := fs.Bool("sse", false, "use the older HTTP+SSE transport (for an mcp service proxying such a server)")
	tool := fs.String("tool", "", "a tool to call, e.g. list_tables")
	args := fs.String("args", "{}", "the tool's arguments as a JSON object")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	if *key == "" {
		return errors.New("give the API key with -key or $K")
	}
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*args), &arguments); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	hc := &http.Client{Transport: credentials{key: *key, session: *session}}
	var transport sdk.Transport = &sdk.StreamableClientTransport{Endpoint: *url, HTTPClient: hc, MaxRetries: -1}
	if *sse {
		transport = &sdk.SSEClientTransport{Endpoint: *url, HTTPClient: hc}
	}
	s, err := sdk.NewClient(&sdk.Implementation{Name: "portcullis-example", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connect %s: %w", *url, err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	for _, t := range tools.Tools {
		fmt.Fprintf(out, "tool %s: %s\n", t.Name, t.Title)
	}
	if *tool == "" {
		return nil
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: *tool, Arguments: arguments})
	if err != nil {
		return fmt.Errorf("call %s: %w", *tool, err)
	}
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			fmt.Fprintln(out, t.Text)
		}
	}
	if res.IsError {
		return fmt.Errorf("%s answered a tool error", *tool)
	}
	return nil
}
