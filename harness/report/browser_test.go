package report

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const chromiumPath = "/usr/bin/chromium"

// chromium runs Debian's headless Chromium on a file:// page with extra flags and returns
// its stdout and the console messages it logged.
func chromium(t *testing.T, page string, extra ...string) (stdout string, console []string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s not found: install Debian's chromium package (apt-get install chromium, as scripts/setup.sh does) to run the browser test", chromiumPath)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, extra...)
	cmd := exec.CommandContext(ctx, chromiumPath, append(args, "file://"+page)...)
	var out, errb bytesBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "chromium: %s", errb.String())
	for _, m := range consoleRe.FindAllStringSubmatch(errb.String(), -1) {
		console = append(console, m[1])
	}
	return out.String(), console
}

// consoleRe matches what Chromium logs for console messages and uncaught errors:
// [pid:tid:time:INFO:CONSOLE:12] "Uncaught ReferenceError: ...", source: file:///... (12)
var consoleRe = regexp.MustCompile(`:CONSOLE[:(]\d+\)?\] (".*", source: .*)`)

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bytesBuffer) String() string              { return string(w.b) }

// The detector must see errors, or "no console errors" below proves nothing.
func TestBrowserSeesConsoleErrors(t *testing.T) {
	page := filepath.Join(t.TempDir(), "broken.html")
	require.NoError(t, os.WriteFile(page, []byte(`<html><body><script>console.error("boom"); undefinedFn();</script></body></html>`), 0o644))
	_, console := chromium(t, page, "--dump-dom")
	require.Len(t, console, 2, "chromium's console log format changed: fix consoleRe")
	assert.Contains(t, console[1], "Uncaught ReferenceError")
}

func TestDashboardInChromium(t *testing.T) {
	st, corp, dir := history(t, 1200)
	m, err := Build(st, corp)
	require.NoError(t, err)
	index, err := Write(filepath.Join(dir, "out"), m)
	require.NoError(t, err)

	dom, console := chromium(t, index, "--dump-dom", "--virtual-time-budget=3000")
	assert.Empty(t, console, "the dashboard logged to the console")
	ready := regexp.MustCompile(`<body data-ready="(\d+)"`).FindStringSubmatch(dom)
	require.NotNil(t, ready, "the dashboard's script did not run")
	n, _ := strconv.Atoi(ready[1])
	assert.Equal(t, charts(m), n, "every chart is in the live DOM")
	assert.Regexp(t, `<rect class="seg" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+"`, dom)
	assert.Contains(t, dom, `<polyline class="series"`)

	shot := filepath.Join(dir, "dashboard.png")
	chromium(t, index, "--screenshot="+shot, "--window-size=1400,1000", "--hide-scrollbars")
	f, err := os.Open(shot)
	require.NoError(t, err, "no screenshot")
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 1400, img.Bounds().Dx())
	assert.Equal(t, 1000, img.Bounds().Dy())
	colors := map[uint32]bool{}
	for y := 0; y < 1000; y += 4 {
		for x := 0; x < 1400; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	assert.Greater(t, len(colors), 50, "the screenshot is blank: nothing rendered")
	if keep := os.Getenv("WALKFUZZ_SCREENSHOT"); keep != "" {
		raw, _ := os.ReadFile(shot)
		require.NoError(t, os.WriteFile(keep, raw, 0o644))
	}

	detail, console := chromium(t, filepath.Join(dir, "out", "buckets", "evil.html"), "--dump-dom")
	assert.Empty(t, console, "the bucket page logged to the console")
	assert.Contains(t, detail, "&lt;img src=x onerror=alert(1)&gt;", "the log is shown as text")
}

// The dashboard of jfr event types, a walker without walks and a safepoint-biased walker
// renders cleanly, and the glance table's sorting script handles "no data" cells.
func TestTruthDashboardInChromium(t *testing.T) {
	m, err := Build(truthStore(t), nil)
	require.NoError(t, err)
	index, err := Write(filepath.Join(t.TempDir(), "out"), m)
	require.NoError(t, err)
	dom, console := chromium(t, index, "--dump-dom", "--virtual-time-budget=3000")
	assert.Empty(t, console, "the dashboard logged to the console")
	assert.Regexp(t, `<body data-ready="\d+"`, dom, "the dashboard's script did not run")
	assert.Contains(t, dom, `title="ran here, 0 walks">no data</td>`)
	assert.Contains(t, dom, `jvmti-emulated<sup>†</sup>`)
}
