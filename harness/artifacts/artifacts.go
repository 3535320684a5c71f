// Package artifacts finds what `make` built (the agent, the workload jars) wherever the checkout is.
package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Paths are the built files a run needs.
type Paths struct {
	Bin          string // directory holding everything below
	Agent        string // libwalkfuzz.so
	Workloads    string // workloads.jar
	JNILib       string // libwfjni.so (the jni workload's native library)
	Apps         string // apps.jar (real-application drivers), may not exist
	AppClasspath []string
	Root         string // the checkout, when known
}

// Locate looks in $WALKFUZZ_HOME/bin, next to the running executable, then in bin/ of the
// checkout that contains the working directory.
func Locate() (Paths, error) {
	var dirs []string
	if h := os.Getenv("WALKFUZZ_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "bin"))
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dirs = append(dirs, filepath.Join(d, "bin"))
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "libwalkfuzz.so")); err == nil {
			return fill(d), nil
		}
	}
	return Paths{}, fmt.Errorf("agent library libwalkfuzz.so not found (looked in %s): run make", strings.Join(dirs, ", "))
}

func fill(bin string) Paths {
	p := Paths{
		Bin:       bin,
		Agent:     filepath.Join(bin, "libwalkfuzz.so"),
		Workloads: filepath.Join(bin, "workloads.jar"),
		JNILib:    filepath.Join(bin, "libwfjni.so"),
		Apps:      filepath.Join(bin, "apps.jar"),
		Root:      filepath.Dir(bin),
	}
	// The Debian libraries the applications in apps.jar need: the copy make put beside the jar
	// (a bin/ copied elsewhere keeps it), else the repository's list.
	b, err := os.ReadFile(filepath.Join(bin, "apps.classpath"))
	if err != nil {
		b, err = os.ReadFile(filepath.Join(p.Root, "workloads", "apps", "classpath.txt"))
	}
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				p.AppClasspath = append(p.AppClasspath, l)
			}
		}
	}
	return p
}

// Exists reports whether a built file is present.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
