// Command pulumi-language-nodejs is a small Node.js language host for the Pulumi CLI, written for
// keystone-appcred's test environment.
//
// Pulumi's own Node.js language host lives in a nested Go module
// (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3) that the Go module proxy does
// not serve, so it cannot be built from a registry. This host implements the part of the
// LanguageRuntime gRPC service that `pulumi preview/up/refresh/destroy` need for a plain
// JavaScript program: it runs the program with the `cmd/run` entry point of the @pulumi/pulumi npm
// package that the program itself resolves, passing the engine's settings as flags and the stack
// configuration in the PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS environment variables.
//
// Not implemented (the CLI does not need them for these commands): dependency installation,
// plugin discovery from node_modules (plugins are found on PATH / beside the CLI), TypeScript
// (ts-node) handling, code generation, `pulumi new` prompts.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version reports the @pulumi/pulumi release this host is meant to run beside.
const version = "3.276.0"

// bailExitCode is the exit code @pulumi/pulumi's cmd/run uses after it has already reported an
// error to the user (so the host must not add another message).
const bailExitCode = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
}

func (h *host) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

func (h *host) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.mu.Lock()
		h.engineAddress = req.GetEngineAddress()
		h.mu.Unlock()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) InstallDependencies(
	_ *pulumirpc.InstallDependenciesRequest, _ grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	// Dependencies are installed by the test suite (npm), never by the engine.
	return nil
}

// nodeBinary is the Node.js executable: $PULUMI_NODEJS_NODE if set, else `node` from PATH.
func nodeBinary() (string, error) {
	if n := os.Getenv("PULUMI_NODEJS_NODE"); n != "" {
		return n, nil
	}
	return exec.LookPath("node")
}

// resolveRunScript asks Node, started in the program's directory, where @pulumi/pulumi/cmd/run is,
// so the program and the run script share one copy of @pulumi/pulumi.
func resolveRunScript(ctx context.Context, node, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, node, "-e", "process.stdout.write(require.resolve('@pulumi/pulumi/cmd/run'))")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("cannot resolve @pulumi/pulumi/cmd/run from %s: %s", dir, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("cannot resolve @pulumi/pulumi/cmd/run from %s: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	programDir := req.GetPwd()
	rootDir := programDir
	entry := req.GetProgram()
	if info != nil {
		if info.GetProgramDirectory() != "" {
			programDir = info.GetProgramDirectory()
		}
		if info.GetRootDirectory() != "" {
			rootDir = info.GetRootDirectory()
		}
		if info.GetEntryPoint() != "" {
			entry = info.GetEntryPoint()
		}
	}
	// cmd/run treats the program argument "." specially (it then honours package.json "exports"/"main") and
	// resolves a relative program against --pwd; anything else is passed as an absolute path.
	switch {
	case (entry == "" || entry == ".") && filepath.Clean(req.GetPwd()) == filepath.Clean(programDir):
		entry = "."
	case entry == "" || entry == ".":
		entry = programDir
	case !filepath.IsAbs(entry):
		entry = filepath.Join(programDir, entry)
	}

	node, err := nodeBinary()
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "node not found: %v", err)
	}
	runScript, err := resolveRunScript(ctx, node, programDir)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	var args []string
	if extra := os.Getenv("PULUMI_NODEJS_NODE_ARGS"); extra != "" {
		args = append(args, strings.Fields(extra)...)
	}
	if opts := info.GetOptions(); opts != nil {
		if v, ok := opts.GetFields()["nodeargs"]; ok && v.GetStringValue() != "" {
			args = append(args, strings.Fields(v.GetStringValue())...)
		}
	}
	args = append(args, runScript,
		"--monitor="+req.GetMonitorAddress(),
		"--project="+req.GetProject(),
		"--stack="+req.GetStack(),
		"--pwd="+req.GetPwd(),
		"--root-directory="+rootDir,
	)
	if e := h.engine(); e != "" {
		args = append(args, "--engine="+e)
	}
	if req.GetOrganization() != "" {
		args = append(args, "--organization="+req.GetOrganization())
	}
	if req.GetParallel() > 0 {
		args = append(args, "--parallel="+strconv.Itoa(int(req.GetParallel())))
	}
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	config := req.GetConfig()
	if config == nil {
		config = map[string]string{}
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding config: %v", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding secret keys: %v", err)
	}

	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(),
		"PULUMI_CONFIG="+string(configJSON),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON),
	)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() == bailExitCode {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", ee.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Problem executing program (could not run language executor): %v", err)}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// watchEngine ends the host when the engine's address stops accepting connections, so a crashed
// CLI does not leave the host behind.
func watchEngine(addr string) {
	failures := 0
	for {
		time.Sleep(2 * time.Second)
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			failures++
			if failures >= 3 {
				os.Exit(0)
			}
			continue
		}
		failures = 0
		_ = conn.Close()
	}
}

func main() {
	// The engine passes logging/tracing flags first and its own address as the last argument.
	var engineAddress string
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-") {
			engineAddress = a
		}
	}
	h := &host{engineAddress: engineAddress}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: listen: %v\n", err)
		os.Exit(1)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(400 * 1024 * 1024))
	pulumirpc.RegisterLanguageRuntimeServer(srv, h)

	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)

	if engineAddress != "" {
		go watchEngine(engineAddress)
	}
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintf(os.Stderr, "fatal: serve: %v\n", err)
		os.Exit(1)
	}
}
