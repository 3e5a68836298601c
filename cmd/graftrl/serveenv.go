package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
	"github.com/graftrl/graftrl/internal/strict"
)

// tokenEnvVar holds the bearer token when --token is not given, so that it stays out of the
// process list.
const tokenEnvVar = "GRAFTRL_SERVE_TOKEN"

// serveEnvOptions are the flags of `graftrl serve-env`.
type serveEnvOptions struct {
	env             string
	addr            string
	sets            []string
	maxSessions     int
	token           string
	idleTimeout     time.Duration
	callTimeout     time.Duration
	maxMessageBytes int64
	bodyTimeout     time.Duration
	maxConnections  int
	allowRemote     bool
	insecure        bool
	verbose         bool
}

func newServeEnvCmd() *cobra.Command {
	o := &serveEnvOptions{}
	cmd := &cobra.Command{
		Use:   "serve-env --env NAME [--addr 127.0.0.1:8000] [--set key=value ...]",
		Short: "Serve an environment over OpenEnv (WebSocket /ws) to OpenEnv clients such as TRL",
		Long: `Serve a registered environment over the OpenEnv protocol (see envs/openenv/README.md): one
environment instance per WebSocket session on /ws, plus GET /health, /schema, /metadata, /state and
the stateless POST /reset and /step. --set gives env options as in the env section of a config
(--set size=6 --set traps=2). The server listens on loopback unless --allow-remote is given, and
then answers only requests whose Host header names loopback (localhost, 127.0.0.1, [::1]), so that
a web page whose domain was rebound to 127.0.0.1 cannot reach it. With --token (or
$` + tokenEnvVar + `) every route but /health needs "Authorization: Bearer <token>";
--allow-remote needs a token, or --insecure to serve anyone who reaches the address.
It runs until interrupted.`,
		Example: `  # the maze on loopback, OpenEnv's usual port; then train on it with env: {name: openenv, url: ws://127.0.0.1:8000}
  graftrl serve-env --env maze
  # a 7×7 maze on another port, room for 128 sessions
  graftrl serve-env --env maze --set size=7 --addr 127.0.0.1:8765 --max-sessions 128
  # reachable from other machines, behind a bearer token taken from the environment
  GRAFTRL_SERVE_TOKEN=change-me graftrl serve-env --env sokoban --addr 0.0.0.0:8000 --allow-remote`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := o.serverOptions()
			if err != nil {
				return err
			}
			return serveEnvRun(cmd.Context(), opts, cmd.ErrOrStderr(), o.verbose)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.env, "env", "", "environment to serve (graftrl envs list)")
	f.StringVar(&o.addr, "addr", openenv.DefaultAddr, "listen address host:port")
	f.StringArrayVar(&o.sets, "set", nil, "env option key=value (repeatable)")
	f.IntVar(&o.maxSessions, "max-sessions", openenv.DefaultMaxSessions, "concurrent WebSocket sessions; more get CAPACITY_REACHED")
	f.StringVar(&o.token, "token", "", "bearer token required on every route but /health (default $"+tokenEnvVar+")")
	f.DurationVar(&o.idleTimeout, "idle-timeout", openenv.DefaultIdleTimeout, "close sessions that send no complete message for this long (0: never)")
	f.DurationVar(&o.callTimeout, "call-timeout", openenv.DefaultCallTimeout, "bound on one env call; a session past it is closed (0: none)")
	f.Int64Var(&o.maxMessageBytes, "max-message-bytes", openenv.DefaultMaxMessageBytes, "largest WebSocket message or request body")
	f.DurationVar(&o.bodyTimeout, "body-timeout", openenv.DefaultBodyTimeout, "bound on receiving a whole HTTP request, its body included, or WebSocket message, all its frames, from its first byte; a later request gets 408 and its connection is closed, a later message closes its session (0: none)")
	f.IntVar(&o.maxConnections, "max-connections", 0, fmt.Sprintf("open TCP connections, sessions included; more are answered 503 and closed (default --max-sessions + %d)", openenv.DefaultExtraConnections))
	f.BoolVar(&o.allowRemote, "allow-remote", false, "allow a listen address reachable from other machines, and any Host header (needs --token, or --insecure)")
	f.BoolVar(&o.insecure, "insecure", false, "with --allow-remote, serve without a token: anyone who reaches the address may run the env")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every session")
	return cmd
}

// serverOptions turns the flags into server options; bad flags are usage errors (exit 2).
func (o *serveEnvOptions) serverOptions() (openenv.ServerOptions, error) {
	if o.env == "" {
		return openenv.ServerOptions{}, &usageError{"serve-env: --env NAME is required"}
	}
	if o.maxSessions < 1 || o.maxMessageBytes < 256 || o.idleTimeout < 0 || o.callTimeout < 0 || o.bodyTimeout < 0 {
		return openenv.ServerOptions{}, &usageError{"serve-env: --max-sessions must be >= 1, --max-message-bytes >= 256, and timeouts >= 0"}
	}
	if err := checkListenAddr(o.addr); err != nil {
		return openenv.ServerOptions{}, err
	}
	if o.maxConnections != 0 && o.maxConnections < o.maxSessions {
		return openenv.ServerOptions{}, &usageError{fmt.Sprintf("serve-env: --max-connections %d is below --max-sessions %d (each session holds a connection)", o.maxConnections, o.maxSessions)}
	}
	envOpts := envs.Options{}
	for _, s := range o.sets {
		key, value, ok := strings.Cut(s, "=")
		if !ok || key == "" || strings.ContainsAny(key, ". ") {
			return openenv.ServerOptions{}, &usageError{fmt.Sprintf("serve-env: --set %q: want key=value with an env option key", s)}
		}
		// A YAML scalar, as in a config file: 6 is a number, true a bool, [a, b] a list.
		// strict.ParseAt bounds its depth (one level below the options) and refuses a second
		// document, as for a run config's --set.
		var v any = value
		if value != "" {
			n, err := strict.ParseAt([]byte(value), 1)
			if err == nil && n.Kind != 0 {
				err = n.Decode(&v)
			}
			if err != nil {
				return openenv.ServerOptions{}, &usageError{fmt.Sprintf("serve-env: --set %s: %v", s, err)}
			}
		}
		envOpts[key] = v
	}
	token := o.token
	if token == "" {
		token = os.Getenv(tokenEnvVar)
	}
	if o.insecure && !o.allowRemote {
		return openenv.ServerOptions{}, &usageError{"serve-env: --insecure only applies with --allow-remote (a loopback server needs no token)"}
	}
	if o.allowRemote && token == "" && !o.insecure {
		return openenv.ServerOptions{}, &usageError{"serve-env: --allow-remote without a bearer token would let anyone who reaches " + o.addr +
			" open sessions and run the env; set --token or $" + tokenEnvVar + " (clients then send it: token or token_env in their env section), " +
			"or add --insecure to serve without one"}
	}
	// 0 means "never" on the command line; the package reads 0 as "default" and negative as never.
	never := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	return openenv.ServerOptions{Env: o.env, EnvOptions: envOpts, Addr: o.addr, AllowRemote: o.allowRemote, Insecure: o.insecure,
		MaxSessions: o.maxSessions, Token: token, IdleTimeout: never(o.idleTimeout), CallTimeout: never(o.callTimeout),
		MaxMessageBytes: o.maxMessageBytes, BodyTimeout: never(o.bodyTimeout), MaxConnections: o.maxConnections}, nil
}

// checkListenAddr refuses a --addr that no listener could take (a usage error, exit status 2):
// it must be host:port with a port from 0 to 65535. Whether the port is free is the machine's
// business (exit status 1).
func checkListenAddr(addr string) error {
	const allowed = "allowed: host:port with a port from 0 to 65535, 0 picking a free one; e.g. 127.0.0.1:8000"
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &usageError{fmt.Sprintf("serve-env: --addr %q is not host:port (%s)", addr, allowed)}
	}
	if n, err := strconv.ParseUint(port, 10, 64); err != nil || n > 65535 {
		return &usageError{fmt.Sprintf("serve-env: --addr %q: port %q is out of range (%s)", addr, port, allowed)}
	}
	return nil
}

// serveEnvRun serves until ctx is done or the process is interrupted.
func serveEnvRun(ctx context.Context, opts openenv.ServerOptions, out io.Writer, verbose bool) error {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	opts.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	srv, err := openenv.NewServer(opts)
	if err != nil {
		// Unknown env, bad options or an address the flags do not allow: refused before serving.
		return &usageError{"serve-env: " + err.Error()}
	}
	ln, err := srv.Listen()
	if err != nil {
		return fmt.Errorf("serve-env: %w", err)
	}
	// A stop signal shuts the server down; later ones are ignored while it closes its sessions.
	ctx, stop := notifyStop(ctx, nil, func(os.Signal) {})
	defer stop()
	auth := "no token"
	if opts.Token != "" {
		auth = "bearer token required"
	}
	addr := ln.Addr().String()
	if opts.AllowRemote && opts.Token == "" {
		// Said before the banner and in capitals: scripts and logs show the first lines.
		fmt.Fprintf(out, "graftrl: WARNING: --insecure: serving %s on %s to anyone who can reach it, with NO TOKEN; "+
			"any client may open sessions and run the env; set --token or $%s to require one\n", opts.Env, addr, tokenEnvVar)
	}
	fmt.Fprintf(out, "graftrl: serving %s over OpenEnv on ws://%s/ws (HTTP http://%s; up to %d sessions; %s)\n",
		opts.Env, addr, addr, opts.MaxSessions, auth)
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve-env: %w", err)
	}
	fmt.Fprintln(out, "graftrl: serve-env stopped")
	return nil
}
