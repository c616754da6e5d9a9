// Command pulumi-language-sdkgen is the part of a Pulumi language host that `pulumi package gen-sdk` needs,
// written for keystone-appcred's tests: it serves LanguageRuntime.GeneratePackage with Pulumi's own code
// generator of the language it is installed as (its executable's name: pulumi-language-python or
// pulumi-language-go), from github.com/pulumi/pulumi/pkg/v3/codegen of the CLI's release.
//
// Pulumi's Python and Go language hosts live in nested Go modules that the Go module proxy does not serve
// (403), and `pulumi package gen-sdk` asks the language host to generate; the code generators themselves are
// packages of pkg/v3, which it does serve. GeneratePackage here does what the official hosts do: bind the
// schema (resolving references through the engine's schema loader) and write the generator's files into the
// directory the CLI names. Everything else (running programs) is not implemented.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is the Pulumi release whose code generators this host carries.
const version = "3.276.0"

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	language string
}

func (h *host) Handshake(context.Context, *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

func (h *host) GeneratePackage(_ context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
	}
	tool := "pulumi-language-" + h.language
	var files map[string][]byte
	switch h.language {
	case "python":
		files, err = python.GeneratePackage(tool, pkg, req.GetExtraFiles(), loader)
	case "go":
		files, err = gogen.GeneratePackage(tool, pkg, req.GetLocalDependencies())
	default:
		err = fmt.Errorf("this host generates python and go, not %q", h.language)
	}
	if err != nil {
		return nil, err
	}
	for name, data := range files {
		path := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
	}
	return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
}

func main() {
	language := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: listen: %v\n", err)
		os.Exit(1)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(400 * 1024 * 1024))
	pulumirpc.RegisterLanguageRuntimeServer(srv, &host{language: language})
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintf(os.Stderr, "fatal: serve: %v\n", err)
		os.Exit(1)
	}
}
