package ebpf

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeListener serves one attach request on the socket HotSpot would open for this test's
// own process, replying with reply; it returns the request it read.
func fakeListener(t *testing.T, reply string) <-chan string {
	t.Helper()
	sock := fmt.Sprintf("/tmp/.java_pid%d", namespacePid(os.Getpid()))
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("cannot play a JVM's attach listener at %s: %v", sock, err)
	}
	t.Cleanup(func() { l.Close(); os.Remove(sock) })
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		// A request is five NUL-terminated strings: version, "jcmd" and three arguments.
		var req []byte
		buf := make([]byte, 1)
		for nuls := 0; nuls < 5; {
			if _, err := c.Read(buf); err != nil {
				break
			}
			req = append(req, buf[0])
			if buf[0] == 0 {
				nuls++
			}
		}
		io.WriteString(c, reply)
		got <- string(req)
	}()
	return got
}

func TestAttachCommand(t *testing.T) {
	got := fakeListener(t, "0\nsome output\n")
	out, err := attachCommand(os.Getpid(), "Compiler.perfmap", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if req, want := <-got, "1\x00jcmd\x00Compiler.perfmap\x00\x00\x00"; req != want {
		t.Errorf("request %q, want %q", req, want)
	}
	if out != "some output\n" {
		t.Errorf("output %q", out)
	}
}

func TestAttachCommandFailed(t *testing.T) {
	fakeListener(t, "1\njava.lang.IllegalArgumentException: Unknown diagnostic command\n")
	_, err := attachCommand(os.Getpid(), "Compiler.nosuch", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "Unknown diagnostic command") {
		t.Fatalf("error %v, want the JVM's reason", err)
	}
}
