package hang

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

var generate = flag.String("generate", "", "regenerate these golden cases (comma-separated numbers, or all) from real "+
	"JVMs: needs gcc, JDK 17 and 25 ($J17, $J25) and, for the agent cases, bin/libwalkfuzz.so ($AGENT)")

// A hang case: run Hang.java (testdata/) in a mode until it is stuck, then collect what the
// runner collects (collectHang): SIGQUIT, three seconds, a /proc snapshot, SIGKILL.
type hangCase struct {
	num, jdk, mode string
	flags          []string
	agent          []string // agent config lines; the real agent is loaded when set
	stuck          func(s *Snapshot) bool
}

var hangCases = []hangCase{
	{num: "001", jdk: "17", mode: "monitor"},
	{num: "002", jdk: "25", mode: "lock"},
	{num: "003", jdk: "17", mode: "malloc", stuck: profBlocked},
	{num: "004", jdk: "25", mode: "malloc", stuck: profBlocked},
	{num: "005", jdk: "17", mode: "spin", agent: []string{"walkers=asgct", "inject=hang@2000"}, stuck: profBlocked},
	{num: "006", jdk: "25", mode: "spin", agent: []string{"walkers=asgct", "inject=hang@2000"}, stuck: profBlocked},
	{num: "007", jdk: "17", mode: "no-safepoint", flags: noPolls},
	{num: "008", jdk: "25", mode: "no-safepoint", flags: noPolls},
}

var noPolls = []string{"-XX:-UseCountedLoopSafepoints", "-XX:LoopStripMiningIter=0"}

func profBlocked(s *Snapshot) bool {
	for _, t := range s.Tasks {
		if t.Blocks(int(syscall.SIGPROF)) {
			return true
		}
	}
	return false
}

func TestGenerate(t *testing.T) {
	if *generate == "" {
		t.Skip("regenerates testdata/dumps from real JVMs only with -generate")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	jdks := map[string]string{}
	for _, major := range []int{17, 25} {
		j, err := jdk.Find(major)
		if err != nil {
			t.Skip(err) // the dumps cover both JDKs
		}
		jdks[strconv.Itoa(major)] = env(fmt.Sprintf("J%d", major), j.Path)
	}
	agent := env("AGENT", filepath.Join(root, "bin/libwalkfuzz.so"))
	work := t.TempDir()
	run(t, "gcc", "-O2", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer", "-I"+jdks["17"]+"/include",
		"-I"+jdks["17"]+"/include/linux", "-o", filepath.Join(work, "libwfhang.so"), "testdata/hanglib.c")
	run(t, jdks["17"]+"/bin/javac", "--release", "17", "-d", work, "testdata/Hang.java")
	for _, c := range hangCases {
		if *generate != "all" && !strings.Contains(","+*generate+",", ","+c.num+",") {
			continue
		}
		t.Run(c.num, func(t *testing.T) {
			args := append([]string{"-Djava.library.path=" + work, "-XX:-CreateCoredumpOnCrash"}, c.flags...)
			source := strings.Join(append([]string{"gen_test.go: Hang", c.mode, "on JDK", c.jdk}, c.flags...), " ")
			if c.agent != nil {
				if _, err := os.Stat(agent); err != nil {
					t.Skipf("no agent at %s (run make)", agent)
				}
				dir := t.TempDir()
				conf := append([]string{"log=" + dir + "/samples.bin", "methods=" + dir + "/methods.tsv",
					"codes=" + dir + "/codes.tsv", "mode=cpu", "interval_ns=100000"}, c.agent...)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.conf"), []byte(strings.Join(conf, "\n")+"\n"), 0o644))
				args = append(args, "-agentpath:"+agent+"=config="+dir+"/agent.conf")
				source += " under the agent with " + strings.Join(c.agent, " ")
			}
			dump, tasks := collect(t, jdks[c.jdk]+"/bin/java", append(args, "-cp", work, "Hang", c.mode), c.stuck)
			out := filepath.Join("testdata/dumps", c.num)
			require.NoError(t, os.MkdirAll(out, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(out, dumpFile), dump, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(out, tasksFile), []byte(tasks), 0o644))
			r := Parse(dump, []byte(tasks))
			require.NoError(t, os.WriteFile(filepath.Join(out, expectFile), []byte("SOURCE: "+source+"\n"+expectations(r)), 0o644))
			t.Logf("%s: %s", c.num, r.Title)
		})
	}
}

// collect starts the JVM, waits until stuck says it is stuck (or three seconds), then does
// what the runner does on a hang.
func collect(t *testing.T, java string, args []string, stuck func(*Snapshot) bool) ([]byte, string) {
	stdout, err := os.Create(filepath.Join(t.TempDir(), "stdout.txt"))
	require.NoError(t, err)
	defer stdout.Close()
	cmd := exec.Command(java, args...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	time.Sleep(3 * time.Second)
	for deadline := time.Now().Add(20 * time.Second); stuck != nil; {
		s, err := takeSnapshot(cmd.Process.Pid)
		require.NoError(t, err)
		if stuck(s) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the JVM did not get stuck")
		time.Sleep(500 * time.Millisecond)
	}
	before, _ := os.ReadFile(stdout.Name())
	require.NoError(t, cmd.Process.Signal(syscall.SIGQUIT))
	time.Sleep(3 * time.Second)
	tasks, err := TakeSnapshot(cmd.Process.Pid)
	require.NoError(t, err)
	cmd.Process.Kill()
	cmd.Wait()
	after, err := os.ReadFile(stdout.Name())
	require.NoError(t, err)
	return after[len(before):], tasks
}

func run(t *testing.T, name string, args ...string) {
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s: %s", name, out)
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
