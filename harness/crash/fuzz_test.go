package crash

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics, and every report keeps the invariants titles rely on.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/hserr/[0-9]*")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		_, _, log := splitGolden(data)
		f.Add(log)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Parse(data)
		if r.Title == "" {
			t.Fatal("empty title")
		}
		if r.Corrupted != (r.Title == corruptedTitle) {
			t.Fatalf("Corrupted=%v with title %q", r.Corrupted, r.Title)
		}
		if r.Corrupted != (r.CorruptedReason != "") {
			t.Fatalf("Corrupted=%v with reason %q", r.Corrupted, r.CorruptedReason)
		}
		if r.Bucket != BucketOf(r.Title) {
			t.Fatalf("bucket %s is not the hash of %q", r.Bucket, r.Title)
		}
		for _, title := range append([]string{r.Title}, r.AltTitles...) {
			if hexAddress.MatchString(title) {
				t.Fatalf("address in title %q", title)
			}
			if len(title) > maxTitle {
				t.Fatalf("title of %d bytes", len(title))
			}
		}
	})
}
