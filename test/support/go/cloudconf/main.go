// Command cloudconf reads a cloud.conf as the OpenStack cloud controller manager and Cinder CSI read it, and
// authenticates with it as they do: gcfg (gopkg.in/gcfg.v1, the parser kubernetes/cloud-provider-openstack uses, with
// gcfg.FatalOnly, so unknown variables are warnings and syntax errors are fatal) into the [Global] section's fields
// under the same gcfg names as that project's client.AuthOpts, then gophercloud v2 (the same client library) issues a
// token from the application credential. It prints what it read and what Keystone said as one JSON object; never the
// secret, only its SHA-256, so the test can check the round trip of quoting without seeing it.
//
// Usage: cloudconf FILE
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	gcfg "gopkg.in/gcfg.v1"
)

// global holds the [Global] variables an application credential uses, named as the cloud controller manager's
// client.AuthOpts names them (a field without a gcfg tag matches its name, ignoring case).
type global struct {
	AuthURL                     string `gcfg:"auth-url"`
	Region                      string
	EndpointType                string `gcfg:"os-endpoint-type"`
	ApplicationCredentialID     string `gcfg:"application-credential-id"`
	ApplicationCredentialName   string `gcfg:"application-credential-name"`
	ApplicationCredentialSecret string `gcfg:"application-credential-secret"`
}

type config struct {
	Global global
}

type report struct {
	AuthURL                 string `json:"authURL"`
	Region                  string `json:"region"`
	EndpointType            string `json:"endpointType"`
	ApplicationCredentialID string `json:"applicationCredentialID"`
	SecretSHA256            string `json:"secretSHA256"`
	Authenticated           bool   `json:"authenticated"`
	ProjectID               string `json:"projectID,omitempty"`
	Error                   string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cloudconf FILE")
		os.Exit(2)
	}
	file, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer file.Close()
	var cfg config
	if err := gcfg.FatalOnly(gcfg.ReadInto(&cfg, file)); err != nil {
		fmt.Fprintln(os.Stderr, "gcfg:", err)
		os.Exit(3)
	}
	g := cfg.Global
	sum := sha256.Sum256([]byte(g.ApplicationCredentialSecret))
	out := report{AuthURL: g.AuthURL, Region: g.Region, EndpointType: g.EndpointType, ApplicationCredentialID: g.ApplicationCredentialID, SecretSHA256: hex.EncodeToString(sum[:])}
	provider, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint:            g.AuthURL,
		ApplicationCredentialID:     g.ApplicationCredentialID,
		ApplicationCredentialName:   g.ApplicationCredentialName,
		ApplicationCredentialSecret: g.ApplicationCredentialSecret,
	})
	if err != nil {
		out.Error = err.Error()
	} else if result, ok := provider.GetAuthResult().(tokens.CreateResult); ok {
		out.Authenticated = true
		if project, err := result.ExtractProject(); err == nil && project != nil {
			out.ProjectID = project.ID
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
	if !out.Authenticated {
		os.Exit(1)
	}
}
