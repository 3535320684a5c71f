package deploy

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setupPackages is what scripts/setup.sh installs by default: its unconditional want lines and
// scripts/apps-packages.txt (the clang line needs WALKFUZZ_SETUP_CLANG=1, not set in the image).
func setupPackages(t *testing.T) map[string]bool {
	b, err := os.ReadFile("../scripts/setup.sh")
	require.NoError(t, err)
	pkgs := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "want "); ok {
			for _, p := range strings.Fields(rest) {
				pkgs[p] = true
			}
		}
	}
	require.True(t, pkgs["openjdk-17-jdk-headless"], "setup.sh's want lines moved: update this test")
	apps, err := os.ReadFile("../scripts/apps-packages.txt")
	require.NoError(t, err)
	for _, p := range strings.Split(string(apps), "\n") {
		if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(p, "#") {
			pkgs[p] = true
		}
	}
	return pkgs
}

// dockerLines joins continued lines.
func dockerLines(t *testing.T) []string {
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	return strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n")
}

// The image installs what setup.sh installs, by running it: the Dockerfile's own apt-get line
// holds only bootstrap tools that setup.sh does not own, setup.sh runs after every file it
// reads is copied in, on the Debian release setup.sh and the workflows use.
func TestDockerfileInstallsWhatSetupInstalls(t *testing.T) {
	want := setupPackages(t)
	setup, err := os.ReadFile("../scripts/setup.sh")
	require.NoError(t, err)
	reads := regexp.MustCompile(`scripts/[\w.-]+`).FindAllString(string(setup), -1)

	var copied []string
	ranSetup, base := false, ""
	for _, l := range dockerLines(t) {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "FROM":
			base = f[1]
		case "COPY":
			copied = append(copied, f[1:len(f)-1]...)
		case "RUN":
			if i := strings.Index(l, "apt-get install"); i >= 0 {
				for _, p := range strings.Fields(strings.SplitN(l[i:], "&&", 2)[0])[2:] {
					if !strings.HasPrefix(p, "-") {
						assert.False(t, want[p], "%s is setup.sh's to install, not the Dockerfile's", p)
						assert.Contains(t, []string{"ca-certificates", "git"}, p, "bootstrap only")
					}
				}
			}
			if strings.Contains(l, "scripts/setup.sh") {
				ranSetup = true
				for _, r := range reads {
					assert.Contains(t, copied, r, "setup.sh reads %s: copy it in before running setup.sh", r)
				}
			}
		}
	}
	assert.True(t, ranSetup, "the image runs scripts/setup.sh")
	assert.Equal(t, "debian:bookworm", base)
}

// JDK 25 lands where walkfuzz jdks looks, beside Debian's 17; the Go toolchain is the one
// go.mod asks for.
func TestDockerfileShipsBothJDKsAndGo(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	df := string(b)
	assert.Regexp(t, `(?m)^COPY --from=temurin25 /opt/java/openjdk /usr/lib/jvm/\S+$`, df)
	assert.Regexp(t, `(?m)^FROM eclipse-temurin:25-jdk AS temurin25$`, df)
	mod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(mod))
	require.NotNil(t, goLine)
	assert.Contains(t, df, "ARG GO_VERSION="+goLine[1])
	assert.Contains(t, df, "RUN make build")
}
