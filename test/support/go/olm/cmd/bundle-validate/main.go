// Command bundle-validate checks an OLM registry+v1 bundle directory as `operator-sdk bundle validate DIR
// --select-optional suite=operatorframework` does, with the same library: github.com/operator-framework/api's
// validators. operator-sdk itself is not served by the Go module proxy these machines reach, and the validators are
// all that command adds to its format check, so this program runs them over the bundle:
//
//   - the bundle's format, as operator-registry's ValidateBundleFormat checks it: metadata/annotations.yaml names the
//     registry+v1 media type, the manifests/ and metadata/ directories, the package and its channels (the default
//     among them), and manifests/ holds only kinds registry+v1 supports;
//   - the default validators (operator-sdk's ValidateBundleContent): every object's metadata, the bundle, the CSV and
//     the CRDs (BundleValidator, ClusterServiceVersionValidator, CustomResourceDefinitionValidator);
//   - the optional suite `operatorframework` (operator-sdk's optional.go labels these and only these with it):
//     operatorhubv2, capabilities, categories, alpha-deprecated-apis and good-practices.
//
// Usage: bundle-validate [--optional-values k8s-version=1.37] DIR. It prints each finding as `LEVEL [validator]
// object: detail` and exits 1 when any is an error (operator-sdk's rule: warnings alone pass).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	k8svalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// The annotations a registry+v1 bundle's metadata/annotations.yaml carries (operator-registry's bundle package).
const (
	mediaTypeKey      = "operators.operatorframework.io.bundle.mediatype.v1"
	manifestsKey      = "operators.operatorframework.io.bundle.manifests.v1"
	metadataKey       = "operators.operatorframework.io.bundle.metadata.v1"
	packageKey        = "operators.operatorframework.io.bundle.package.v1"
	channelsKey       = "operators.operatorframework.io.bundle.channels.v1"
	defaultChannelKey = "operators.operatorframework.io.bundle.channel.default.v1"
	registryV1        = "registry+v1"
)

// supportedKinds are the kinds a registry+v1 bundle may hold (operator-registry's bundle.supportedResources).
var supportedKinds = map[string]bool{
	"ClusterServiceVersion": true, "CustomResourceDefinition": true, "Secret": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "ConfigMap": true, "ServiceAccount": true, "Service": true, "Role": true,
	"RoleBinding": true, "PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true, "NetworkPolicy": true,
}

// suite is `--select-optional suite=operatorframework`: the optional validators operator-sdk labels with it.
var suite = []struct {
	name      string
	validator interfaces.Validator
}{
	{"operatorhubv2", apivalidation.OperatorHubV2Validator},
	{"capabilities", apivalidation.StandardCapabilitiesValidator},
	{"categories", apivalidation.StandardCategoriesValidator},
	{"alpha-deprecated-apis", apivalidation.AlphaDeprecatedAPIsValidator},
	{"good-practices", apivalidation.GoodPracticesValidator},
}

type finding struct {
	level, validator, object, detail string
}

func main() {
	optional := flag.String("optional-values", "", "key=value,... for the optional validators, e.g. k8s-version=1.37")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: bundle-validate [--optional-values k8s-version=1.37] BUNDLE_DIR")
		os.Exit(2)
	}
	findings, err := validate(flag.Arg(0), parseValues(*optional))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundle-validate: %v\n", err)
		os.Exit(1)
	}
	failed := false
	for _, f := range findings {
		fmt.Printf("%s [%s] %s: %s\n", f.level, f.validator, f.object, f.detail)
		failed = failed || f.level == "ERROR"
	}
	if failed {
		os.Exit(1)
	}
	fmt.Println("All validation tests have completed successfully")
}

func parseValues(text string) map[string]string {
	values := map[string]string{}
	for _, pair := range strings.Split(text, ",") {
		if k, v, ok := strings.Cut(pair, "="); ok {
			values[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return values
}

func validate(dir string, values map[string]string) ([]finding, error) {
	var out []finding
	add := func(validator string, results []apierrors.ManifestResult) {
		for _, r := range results {
			for _, e := range append(append([]apierrors.Error{}, r.Errors...), r.Warnings...) {
				level := "WARN"
				if e.Level == apierrors.LevelError {
					level = "ERROR"
				}
				out = append(out, finding{level, validator, r.Name, e.Error()})
			}
		}
	}
	manifests, formatFindings, err := checkFormat(dir)
	if err != nil {
		return nil, err
	}
	out = append(out, formatFindings...)
	bundle, err := apimanifests.GetBundleFromDir(manifests)
	if err != nil {
		return nil, fmt.Errorf("loading the bundle from %s: %w", manifests, err)
	}
	for _, u := range bundle.Objects {
		kind := u.GetKind()
		if kind == "ClusterServiceVersion" || kind == "CustomResourceDefinition" {
			continue
		}
		if !supportedKinds[kind] {
			out = append(out, finding{"ERROR", "format", u.GetName(), fmt.Sprintf("kind %s is not supported in a registry+v1 bundle", kind)})
		}
		if errs := validateObjectMeta(u); len(errs) > 0 {
			out = append(out, finding{"ERROR", "object", u.GetName(), errs.ToAggregate().Error()})
		}
	}
	add("bundle", apivalidation.BundleValidator.Validate(bundle))
	if bundle.CSV == nil {
		out = append(out, finding{"ERROR", "bundle", bundle.Name, "no ClusterServiceVersion in the bundle"})
	} else {
		add("csv", apivalidation.ClusterServiceVersionValidator.Validate(bundle.CSV))
	}
	var crds []interface{}
	for _, crd := range bundle.V1CRDs {
		crds = append(crds, crd)
	}
	if len(crds) > 0 {
		add("crd", apivalidation.CustomResourceDefinitionValidator.Validate(crds...))
	}
	// As operator-sdk passes them: the objects to validate, every object again, and the optional values.
	objs := bundle.ObjectsToValidate()
	for _, o := range bundle.Objects {
		objs = append(objs, o)
	}
	objs = append(objs, values)
	for _, v := range suite {
		add(v.name, v.validator.Validate(objs...))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].level < out[j].level })
	return out, nil
}

func validateObjectMeta(u *unstructured.Unstructured) field.ErrorList {
	return k8svalidation.ValidateObjectMetaAccessor(u, false, func(string, bool) []string { return nil }, field.NewPath("metadata"))
}

// checkFormat reads metadata/annotations.yaml and returns the manifests directory it names, with what is wrong.
func checkFormat(dir string) (string, []finding, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return "", nil, fmt.Errorf("reading the bundle's annotations: %w", err)
	}
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(raw, &file); err != nil {
		return "", nil, fmt.Errorf("parsing metadata/annotations.yaml: %w", err)
	}
	a := file.Annotations
	var out []finding
	bad := func(detail string) {
		out = append(out, finding{"ERROR", "format", "metadata/annotations.yaml", detail})
	}
	if a[mediaTypeKey] != registryV1 {
		bad(fmt.Sprintf("%s is %q, not %q", mediaTypeKey, a[mediaTypeKey], registryV1))
	}
	for _, key := range []string{manifestsKey, metadataKey, packageKey, channelsKey} {
		if a[key] == "" {
			bad(key + " is missing")
		}
	}
	if a[metadataKey] != "" && strings.Trim(a[metadataKey], "/") != "metadata" {
		bad(fmt.Sprintf("%s is %q, not metadata/", metadataKey, a[metadataKey]))
	}
	if d := a[defaultChannelKey]; d != "" {
		found := false
		for _, c := range strings.Split(a[channelsKey], ",") {
			found = found || strings.TrimSpace(c) == d
		}
		if !found {
			bad(fmt.Sprintf("the default channel %q is not among the channels %q", d, a[channelsKey]))
		}
	}
	manifests := filepath.Join(dir, strings.Trim(a[manifestsKey], "/"))
	if a[manifestsKey] == "" {
		manifests = filepath.Join(dir, "manifests")
	}
	entries, err := os.ReadDir(manifests)
	if err != nil {
		return "", nil, fmt.Errorf("reading the manifests directory: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			bad(fmt.Sprintf("manifests/%s is a directory: a bundle's manifests are files only", e.Name()))
		}
	}
	return manifests, out, nil
}
