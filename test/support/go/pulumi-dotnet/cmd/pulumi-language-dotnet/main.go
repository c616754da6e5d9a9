// Command pulumi-language-dotnet is the part of Pulumi's .NET language host that `pulumi package gen-sdk
// --language dotnet` needs, written for keystone-appcred's tests: LanguageRuntime.GeneratePackage with Pulumi's
// .NET code generator (github.com/pulumi/pulumi/pkg/v3/codegen/dotnet of v3.225.0, see go.mod). It binds the schema
// through the engine's schema loader and writes the generator's files where the CLI says, as the official host
// does (test/support/go/pulumi/cmd/pulumi-language-sdkgen does the same for Python and Go with the CLI's release).
// Running programs is not implemented.
//
// The generator fetches the package's icon from the schema's logoUrl, or else from a Pulumi logo on the internet,
// with net/http's default client; this host answers such a request itself with logo.png (embedded) and makes no
// other request, so generating needs no network.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is the Pulumi release whose code generator this host carries.
const version = "3.225.0"

//go:embed logo.png
var logo []byte

// iconTransport answers the generator's icon download with logo.png and refuses every other request.
type iconTransport struct{}

func (iconTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, ".png") {
		return nil, fmt.Errorf("pulumi-language-dotnet (keystone-appcred's test host) makes no request: %s", req.URL)
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"image/png"}}, Body: io.NopCloser(bytes.NewReader(logo)),
		ContentLength: int64(len(logo)), Request: req,
	}, nil
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
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
	if !diags.HasErrors() {
		files, err := dotnet.GeneratePackage("pulumi-language-dotnet", pkg, req.GetExtraFiles(), req.GetLocalDependencies())
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
	}
	return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
}

func main() {
	http.DefaultClient.Transport = iconTransport{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: listen: %v\n", err)
		os.Exit(1)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(400 * 1024 * 1024))
	pulumirpc.RegisterLanguageRuntimeServer(srv, &host{})
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintf(os.Stderr, "fatal: serve: %v\n", err)
		os.Exit(1)
	}
}
