//go:build tools

// Package tools pins the programs this module builds.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
