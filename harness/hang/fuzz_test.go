package hang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/walkfuzz/walkfuzz/harness/crash"
)

// FuzzParse: Parse never panics on any dump and snapshot, and always gives a hang title.
func FuzzParse(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/dumps/[0-9]*")
	for _, dir := range dirs {
		dump, _ := os.ReadFile(filepath.Join(dir, dumpFile))
		tasks, _ := os.ReadFile(filepath.Join(dir, tasksFile))
		f.Add(dump, tasks)
	}
	f.Fuzz(func(t *testing.T, dump, tasks []byte) {
		r := Parse(dump, tasks)
		if !strings.HasPrefix(r.Title, "hang: ") {
			t.Fatalf("title %q", r.Title)
		}
		if r.Bucket != crash.BucketOf(r.Title) {
			t.Fatalf("bucket %s is not the hash of %q", r.Bucket, r.Title)
		}
		if s := ParseSnapshot(tasks); len(s.Tasks) > 0 {
			if again := ParseSnapshot([]byte(s.String())); len(again.Tasks) != len(s.Tasks) {
				t.Fatalf("snapshot of %d tasks reads back as %d", len(s.Tasks), len(again.Tasks))
			}
		}
	})
}
