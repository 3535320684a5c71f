// Package deploy holds no code: its tests check the files that run walkfuzz elsewhere, the
// GitHub Actions workflows, the Kubernetes manifests, the image recipe and their scripts.
package deploy

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifest is one file's objects, decoded strictly into the Kubernetes API types (an unknown
// or misspelt field, or a wrong type, fails): the schema check kubectl would do, without a
// cluster (kubectl apply --dry-run=client still asks a server for its API groups).
type manifest struct {
	kinds      []string
	namespaces []corev1.Namespace
	configMaps []corev1.ConfigMap
	claims     []corev1.PersistentVolumeClaim
	jobs       []batchv1.Job
}

func load(t *testing.T, file string) manifest {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var m manifest
	for i, doc := range strings.Split(string(b), "\n---\n") {
		var head struct{ APIVersion, Kind string }
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head), "%s document %d", file, i)
		switch head.APIVersion + " " + head.Kind {
		case "v1 Namespace":
			m.namespaces = append(m.namespaces, strict[corev1.Namespace](t, doc, file))
		case "v1 ConfigMap":
			m.configMaps = append(m.configMaps, strict[corev1.ConfigMap](t, doc, file))
		case "v1 PersistentVolumeClaim":
			m.claims = append(m.claims, strict[corev1.PersistentVolumeClaim](t, doc, file))
		case "batch/v1 Job":
			o := strict[batchv1.Job](t, doc, file)
			require.NotEmpty(t, o.Spec.Template.Spec.Containers, "%s: %s has no container", file, o.Name)
			m.jobs = append(m.jobs, o)
		default:
			t.Fatalf("%s document %d: unexpected %q %q", file, i, head.APIVersion, head.Kind)
		}
		m.kinds = append(m.kinds, head.Kind)
	}
	return m
}

// strict decodes one document into T, failing on any field T does not have.
func strict[T any](t *testing.T, doc, file string) T {
	t.Helper()
	var o T
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o), "%s: %T", file, o)
	return o
}

func TestManifestsMatchTheAPI(t *testing.T) {
	ns := load(t, "namespace.yaml")
	pvc := load(t, "results-pvc.yaml")
	shards := load(t, "shards.yaml")
	merge := load(t, "merge.yaml")

	// The merge is in a file of its own: applying the shards does not start it.
	assert.Equal(t, []string{"ConfigMap", "Job"}, shards.kinds)
	assert.Equal(t, []string{"Job"}, merge.kinds)
	require.Len(t, ns.namespaces, 1)
	assert.Equal(t, "privileged", ns.namespaces[0].Labels["pod-security.kubernetes.io/enforce"],
		"added capabilities and an Unconfined seccomp profile need the privileged Pod Security level")

	cm, job := shards.configMaps[0], shards.jobs[0]
	n, err := strconv.Atoi(cm.Data["SHARDS"])
	require.NoError(t, err)
	assert.Equal(t, batchv1.IndexedCompletion, *job.Spec.CompletionMode)
	assert.EqualValues(t, n, *job.Spec.Completions, "SHARDS must equal the Job's completions")
	assert.Contains(t, cm.Data["FLAGS"], "--jdks all", "the image's JDKs, whichever they are")

	// The pod security the signal modes and the ebpf walker need.
	pod := job.Spec.Template.Spec
	require.NotNil(t, pod.SecurityContext)
	assert.Equal(t, corev1.SeccompProfileTypeUnconfined, pod.SecurityContext.SeccompProfile.Type)
	assert.EqualValues(t, 0, *pod.SecurityContext.RunAsUser, "added capabilities take effect for root")
	caps := pod.Containers[0].SecurityContext.Capabilities.Add
	assert.ElementsMatch(t, []corev1.Capability{"PERFMON", "BPF"}, caps)

	claim := pvc.claims[0].Name
	for _, j := range append(shards.jobs, merge.jobs...) {
		assert.Equal(t, "walkfuzz", j.Namespace, j.Name)
		assert.Equal(t, "walkfuzz:COMMIT", j.Spec.Template.Spec.Containers[0].Image, "%s: campaign.sh puts the built image here", j.Name)
		assert.Equal(t, claim, j.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, j.Name)
	}
	assert.Nil(t, merge.jobs[0].Spec.Template.Spec.SecurityContext, "the merge needs no privileges")
}
