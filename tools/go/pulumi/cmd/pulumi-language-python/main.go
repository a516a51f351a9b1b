// Command pulumi-language-python is the Python language host used by kubeshift's
// engine tests.
//
// Why it exists: the upstream language host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3), which the
// Go module proxy reachable here does not serve at any version. Everything it
// needs is in the sdk/v3 module (the gRPC protocol, the Python toolchain
// resolution that honours `virtualenv`/`toolchain` and PULUMI_PYTHON_CMD, and the
// `pulumi-language-python-exec` shim it launches), so this host reimplements the
// upstream contract on top of sdk/v3 at the same version as the CLI:
//
//   - started by the engine with the engine address as its last argument, it
//     prints its gRPC port on stdout and serves LanguageRuntime;
//   - Run starts `python <exec-shim> --monitor … --engine … PROGRAM ARGS` with the
//     project's toolchain, passing config through PULUMI_CONFIG and
//     PULUMI_CONFIG_SECRET_KEYS; exit code 32 means "error already shown" (bail);
//   - GetRequiredPackages reports the resource plugins named by the
//     pulumi-plugin.json files of the installed Python packages, as upstream does.
//
// Not implemented (the engine treats them as unsupported): program/SDK code
// generation, Pack, Link, RunPlugin (Python plugins), templates.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// bailExitCode is the shim's exit code for "a message was already shown to the user".
const bailExitCode = 32

// healthInterval is how often the host checks that the engine is still alive.
const healthInterval = 10 * time.Second

func main() {
	var tracing, virtualenv, toolchainName, executor, root string
	flag.StringVar(&tracing, "tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint")
	flag.StringVar(&virtualenv, "virtualenv", "", "Virtual environment path (overridden by the project's runtime options)")
	flag.StringVar(&toolchainName, "toolchain", "", "Python toolchain: pip, poetry or uv")
	flag.StringVar(&executor, "use-executor", "", "Path of the pulumi-language-python-exec shim to use")
	flag.StringVar(&root, "root", "", "Project root directory (unused; accepted for compatibility)")
	flag.String("typechecker", "", "Unsupported by this build; accepted for compatibility")
	flag.Parse()
	logging.InitLogging(false, 0, false)

	engineAddress := ""
	if args := flag.Args(); len(args) > 0 {
		engineAddress = args[len(args)-1]
	}
	if executor == "" {
		found, err := findExecutor()
		if err != nil {
			cmdutil.Exit(err)
		}
		executor = found
	}

	host := &languageHost{
		exec:          executor,
		engineAddress: engineAddress,
		tracing:       tracing,
		defaults:      map[string]any{"virtualenv": virtualenv, "toolchain": toolchainName},
	}
	// Stop serving when the engine goes away (as upstream hosts do), so a killed
	// `pulumi` does not leave this process behind.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	stop := make(chan bool)
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	if engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, engineAddress, healthInterval, cancel); err != nil {
			cmdutil.Exit(fmt.Errorf("could not start health check against the engine: %w", err))
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
		Cancel:  stop,
		Options: rpcutil.TracingServerInterceptorOptions(nil),
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}

// findExecutor locates the exec shim next to this binary, then on PATH.
func findExecutor() (string, error) {
	const name = "pulumi-language-python-exec"
	if self, err := os.Executable(); err == nil {
		candidate := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("could not find %s next to the language host or on $PATH: %w", name, err)
	}
	return path, nil
}

type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	exec     string
	tracing  string
	defaults map[string]any

	mu            sync.Mutex
	engineAddress string
}

func (h *languageHost) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *languageHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// resolveToolchain builds the Python toolchain from the project's runtime options
// (Pulumi.yaml `runtime.options`), falling back to the command-line defaults.
func (h *languageHost) resolveToolchain(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, error) {
	opts := map[string]any{}
	for k, v := range h.defaults {
		if s, ok := v.(string); ok && s != "" {
			opts[k] = s
		}
	}
	if info.GetOptions() != nil {
		for k, v := range info.GetOptions().AsMap() {
			opts[k] = v
		}
	}
	py := toolchain.PythonOptions{Root: info.GetRootDirectory(), ProgramDir: info.GetProgramDirectory()}
	if v, ok := opts["virtualenv"].(string); ok {
		py.Virtualenv = v
	}
	switch name, _ := opts["toolchain"].(string); name {
	case "", "auto":
		py.Toolchain = toolchain.Auto
	case "pip":
		py.Toolchain = toolchain.Pip
	case "poetry":
		py.Toolchain = toolchain.Poetry
	case "uv":
		py.Toolchain = toolchain.Uv
	default:
		return nil, fmt.Errorf("unsupported python toolchain %q (expected pip, poetry or uv)", name)
	}
	if tc, ok := opts["typechecker"].(string); ok && tc != "" {
		return nil, fmt.Errorf("runtime option typechecker=%q is not supported by this language host build", tc)
	}
	return toolchain.ResolveToolchain(py)
}

func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	tc, err := h.resolveToolchain(req.GetInfo())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	config, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("failed to serialize configuration: %w", err)
	}
	secretKeys, err := json.Marshal(append([]string{}, req.GetConfigSecretKeys()...))
	if err != nil {
		return nil, fmt.Errorf("failed to serialize configuration secret keys: %w", err)
	}

	cmd, err := tc.Command(ctx, append([]string{h.exec}, h.runArguments(req)...)...)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env,
		"PULUMI_CONFIG="+string(config),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys),
		"PYTHONUNBUFFERED=1",
	)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	logging.V(5).Infof("language host launching: %s", strings.Join(cmd.Args, " "))

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == bailExitCode {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Problem executing program (could not run language executor): %v", err),
		}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// runArguments builds the exec shim's command line from a RunRequest.
func (h *languageHost) runArguments(req *pulumirpc.RunRequest) []string {
	h.mu.Lock()
	engine := h.engineAddress
	h.mu.Unlock()

	var args []string
	add := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", engine)
	add("project", req.GetProject())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	add("dry_run", fmt.Sprint(req.GetDryRun()))
	add("parallel", fmt.Sprint(req.GetParallel()))
	add("tracing", h.tracing)
	add("organization", req.GetOrganization())
	add("root_directory", req.GetInfo().GetRootDirectory())

	program := req.GetInfo().GetEntryPoint()
	if program == "" {
		program = req.GetProgram() //nolint:staticcheck // older engines send only this field
	}
	if program == "" {
		program = "."
	}
	return append(append(args, program), req.GetArgs()...)
}

// pluginManifest is the subset of a package's pulumi-plugin.json that matters here.
type pluginManifest struct {
	Package          string `json:"package"`
	Resource         bool   `json:"resource"`
	Name             string `json:"name"`
	Version          string `json:"version"`
	Server           string `json:"server"`
	Parameterization *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Value   string `json:"value"`
	} `json:"parameterization"`
}

// listManifests prints, for every installed distribution shipping a
// pulumi-plugin.json, one JSON object: the manifest plus the distribution version.
const listManifests = `
import importlib.metadata as md, json
for dist in md.distributions():
    for f in dist.files or ():
        if f.name == "pulumi-plugin.json" and len(f.parts) == 2:
            try:
                data = json.loads(f.read_text() or "{}")
            except (OSError, ValueError):
                continue
            data["package"] = dist.metadata["Name"]
            data.setdefault("version", dist.version)
            print(json.dumps(data))
`

func (h *languageHost) requiredPackages(
	ctx context.Context, info *pulumirpc.ProgramInfo,
) ([]*pulumirpc.PackageDependency, error) {
	tc, err := h.resolveToolchain(info)
	if err != nil {
		return nil, err
	}
	cmd, err := tc.Command(ctx, "-c", listManifests)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing installed Pulumi packages: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var deps []*pulumirpc.PackageDependency
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var m pluginManifest
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, fmt.Errorf("parsing pulumi-plugin.json: %w", err)
		}
		if !m.Resource {
			continue
		}
		name := m.Name
		if name == "" {
			name = strings.TrimPrefix(strings.ReplaceAll(strings.ToLower(m.Package), "_", "-"), "pulumi-")
		}
		dep := &pulumirpc.PackageDependency{
			Name: name, Kind: "resource", Version: m.Version, Server: m.Server,
		}
		if p := m.Parameterization; p != nil {
			value, err := base64.StdEncoding.DecodeString(p.Value)
			if err != nil {
				return nil, fmt.Errorf("package %s: bad parameterization value: %w", m.Package, err)
			}
			dep.Parameterization = &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: value}
		}
		deps = append(deps, dep)
	}
	return deps, nil
}

func (h *languageHost) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	deps, err := h.requiredPackages(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: deps}, nil
}

func (h *languageHost) GetRequiredPlugins(
	ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	deps, err := h.requiredPackages(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	plugins := make([]*pulumirpc.PluginDependency, 0, len(deps))
	for _, d := range deps {
		if d.Parameterization != nil {
			continue // parameterized packages are only expressible through GetRequiredPackages
		}
		plugins = append(plugins, &pulumirpc.PluginDependency{
			Name: d.Name, Kind: d.Kind, Version: d.Version, Server: d.Server,
		})
	}
	return &pulumirpc.GetRequiredPluginsResponse{Plugins: plugins}, nil
}

func (h *languageHost) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	tc, err := h.resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	info, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: info.PythonExecutable,
		Version:    info.PythonVersion.String(),
	}, nil
}

func (h *languageHost) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	tc, err := h.resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	pkgs, err := tc.ListPackages(ctx, req.GetTransitiveDependencies())
	if err != nil {
		return nil, err
	}
	deps := make([]*pulumirpc.DependencyInfo, 0, len(pkgs))
	for _, p := range pkgs {
		deps = append(deps, &pulumirpc.DependencyInfo{Name: p.Name, Version: p.Version})
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}

// streamWriter forwards InstallDependencies output to the engine.
type streamWriter struct {
	server pulumirpc.LanguageRuntime_InstallDependenciesServer
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	msg := &pulumirpc.InstallDependenciesResponse{}
	if w.stderr {
		msg.Stderr = append([]byte{}, p...)
	} else {
		msg.Stdout = append([]byte{}, p...)
	}
	if err := w.server.Send(msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *languageHost) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	tc, err := h.resolveToolchain(req.GetInfo())
	if err != nil {
		return err
	}
	var stdout, stderr io.Writer = streamWriter{server: server}, streamWriter{server: server, stderr: true}
	return tc.InstallDependencies(server.Context(), req.GetInfo().GetProgramDirectory(),
		req.GetUseLanguageVersionTools(), true, stdout, stderr)
}

func (h *languageHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}
