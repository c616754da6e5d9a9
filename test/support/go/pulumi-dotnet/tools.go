//go:build tools

// Package tools pins the packages this module builds against.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
