// Package suites runs DaCapo and Renaissance benchmarks as workloads, from jars the user
// provides (they cannot be downloaded on every machine), and reads their progress lines.
package suites

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Suite is one external benchmark harness.
type Suite struct {
	Name    string // dacapo | renaissance
	EnvVar  string // where the jar path comes from when no flag is given
	Flag    string
	Benches []string // known benchmark names (the jar decides in the end)
	args    func(jar, bench string, durationMs int) []string
	iterRe  *regexp.Regexp // one completed iteration: group 1 = milliseconds
}

// DaCapo 23.11-chopin and Renaissance 0.15.0 benchmark names.
var (
	DaCapo = Suite{
		Name: "dacapo", EnvVar: "DACAPO_JAR", Flag: "--dacapo-jar",
		Benches: []string{"avrora", "batik", "biojava", "cassandra", "eclipse", "fop", "graphchi", "h2", "h2o",
			"jme", "jython", "kafka", "luindex", "lusearch", "pmd", "spring", "sunflow", "tomcat", "tradebeans",
			"tradesoap", "xalan", "zxing"},
		// Many iterations; the harness stops the JVM at the episode's duration.
		args:   func(jar, b string, _ int) []string { return []string{"-jar", jar, "-n", "1000", b} },
		iterRe: regexp.MustCompile(`^===== DaCapo .* (?:PASSED|completed warmup \d+) in (\d+) msec =====`),
	}
	Renaissance = Suite{
		Name: "renaissance", EnvVar: "RENAISSANCE_JAR", Flag: "--renaissance-jar",
		Benches: []string{"akka-uct", "als", "chi-square", "db-shootout", "dec-tree", "dotty", "finagle-chirper",
			"finagle-http", "fj-kmeans", "future-genetic", "gauss-mix", "log-regression", "mnemonics",
			"movie-lens", "naive-bayes", "neo4j-analytics", "page-rank", "par-mnemonics", "philosophers",
			"reactors", "rx-scrabble", "scala-doku", "scala-kmeans", "scala-stm-bench7", "scrabble"},
		args: func(jar, b string, ms int) []string {
			return []string{"-jar", jar, "--run-seconds", strconv.Itoa(max(1, ms/1000)), b}
		},
		iterRe: regexp.MustCompile(`^====== .* iteration \d+ completed \(([\d.]+) ms\) ======`),
	}
	All = []*Suite{&DaCapo, &Renaissance}
)

// Parse splits "dacapo:h2" into its suite and benchmark.
func Parse(workload string) (*Suite, string, bool) {
	name, bench, ok := strings.Cut(workload, ":")
	if !ok {
		return nil, "", false
	}
	for _, s := range All {
		if s.Name == name {
			return s, bench, true
		}
	}
	return nil, "", false
}

// Jar finds the suite's jar: the flag's value, else the environment variable.
func (s *Suite) Jar(flagValue string) (string, error) {
	p := flagValue
	if p == "" {
		p = os.Getenv(s.EnvVar)
	}
	if p == "" {
		return "", fmt.Errorf("unsupported: %s jar not found: set %s or pass %s (see scripts/fetch-benchmarks.sh)", s.Name, s.EnvVar, s.Flag)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("unsupported: %s jar %s does not exist: fix %s or %s", s.Name, p, s.EnvVar, s.Flag)
	}
	return p, nil
}

// Args is the java command line (without the java binary and agent flags) for one benchmark.
func (s *Suite) Args(jar, bench string, durationMs int) []string {
	return s.args(jar, bench, durationMs)
}

// Progress is what a benchmark's own output says about its iterations.
type Progress struct {
	Iterations int
	TotalMs    float64
}

// ParseOutput reads iteration lines from the suite's stdout/stderr.
func (s *Suite) ParseOutput(out []byte) Progress {
	var p Progress
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := s.iterRe.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			ms, _ := strconv.ParseFloat(m[1], 64)
			p.Iterations++
			p.TotalMs += ms
		}
	}
	return p
}
