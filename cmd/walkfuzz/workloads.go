package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/runner"
	"github.com/walkfuzz/walkfuzz/harness/suites"
)

func workloadsCmd() *cobra.Command {
	var dacapo, ren, jdkSpec string
	c := &cobra.Command{
		Use:   "workloads",
		Short: "List the workloads and whether each can run here (and why not)",
		Example: `  walkfuzz workloads
  walkfuzz workloads --jdk 21    # and on that JDK: a runtime image without a module a workload needs says so`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// needs says why workload name cannot run on the --jdk, "" when it can.
			needs := func(string) string { return "" }
			if jdkSpec != "" {
				j, err := jdk.Pick(jdk.Discover(), jdkSpec)
				if err != nil {
					return usageErr("%w", err)
				}
				needs = func(name string) string {
					e := episode.Episode{Workload: name}
					if m := e.MissingModule(j.HasModule); m != "" {
						return "needs module " + m + ", which JDK " + j.Name() + " lacks"
					}
					return ""
				}
			}
			art, artErr := artifacts.Locate()
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "WORKLOAD\tKIND\tSTATUS")
			status := func(ok bool, why string) string {
				if ok {
					return "runnable"
				}
				return "unsupported: " + why
			}
			for _, name := range episode.Builtin {
				why := needs(name)
				if artErr != nil || !artifacts.Exists(art.Workloads) {
					why = "bin/workloads.jar missing: run make"
				}
				fmt.Fprintf(w, "%s\tbuilt-in\t%s\n", name, status(why == "", why))
			}
			for _, name := range episode.Apps {
				why, origin := needs(name), "Debian "+debianApps[name]
				if unit, ok := episode.MavenApps[name]; ok {
					origin = "Maven " + mavenOrigin(art.Root, unit)
					if artErr != nil {
						why = artErr.Error()
					} else if _, err := runner.MavenAppJar(art, unit); err != nil {
						why = err.Error()
					}
				} else {
					switch {
					case artErr != nil || !artifacts.Exists(art.Apps):
						why = "bin/apps.jar missing: run scripts/setup.sh and make"
					case len(art.AppClasspath) == 0:
						why = "bin/apps.classpath missing: run make"
					default:
						for _, j := range art.AppClasspath {
							if !artifacts.Exists(j) {
								why = j + " missing: run scripts/setup.sh"
								break
							}
						}
					}
				}
				fmt.Fprintf(w, "%s\treal application (%s)\t%s\n", name, origin, status(why == "", why))
			}
			for _, s := range suites.All {
				flag := dacapo
				if s.Name == "renaissance" {
					flag = ren
				}
				_, err := s.Jar(flag)
				why := ""
				if err != nil {
					why = strings.TrimPrefix(err.Error(), "unsupported: ")
				}
				fmt.Fprintf(w, "%s:<bench>\t%s (%d benchmarks)\t%s\n", s.Name, s.Name, len(s.Benches), status(err == nil, why))
			}
			fmt.Fprintf(w, "-- <java args>\tyour own program\trunnable\n")
			return w.Flush()
		},
	}
	c.Flags().StringVar(&dacapo, "dacapo-jar", "", "DaCapo jar (default $DACAPO_JAR)")
	c.Flags().StringVar(&ren, "renaissance-jar", "", "Renaissance jar (default $RENAISSANCE_JAR)")
	c.Flags().StringVar(&jdkSpec, "jdk", "", "judge the workloads on this JDK too (major, version or path): the modules each needs")
	return c
}

// debianApps names the Debian package each apps.jar application comes from
// (scripts/apps-packages.txt installs them with their dependencies).
var debianApps = map[string]string{
	"h2": "libh2-java", "xalan": "libxalan2-java", "lucene": "liblucene4.10-java",
	"zxing": "libzxing-core-java", "batik": "libbatik-java", "sunflow": "libsunflow-java",
}

// mavenOrigin reads the artifacts a Maven-Central app pins from its pom
// (workloads/apps/maven/<unit>/pom.xml): "group:artifact:version", comma-separated.
func mavenOrigin(root, unit string) string {
	b, err := os.ReadFile(filepath.Join(root, "workloads", "apps", "maven", unit, "pom.xml"))
	if err != nil {
		return unit + " (pom not found)"
	}
	var pom struct {
		Deps []struct {
			Group    string `xml:"groupId"`
			Artifact string `xml:"artifactId"`
			Version  string `xml:"version"`
		} `xml:"dependencies>dependency"`
	}
	if err := xml.Unmarshal(b, &pom); err != nil {
		return unit + " (bad pom)"
	}
	var out []string
	for _, d := range pom.Deps {
		out = append(out, d.Group+":"+d.Artifact+":"+d.Version)
	}
	return strings.Join(out, ", ")
}
