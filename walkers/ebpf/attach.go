package ebpf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// attachCommand runs a diagnostic command in a HotSpot JVM through its attach listener, as
// jcmd does, but without starting a JVM for jcmd: on a loaded machine jcmd's own start-up
// took up to 5 s, longer than the sampled JVM had left to live (docs/decisions.md). The
// protocol is HotSpot's on Linux (version 1, which JDK 17 to 25 accept): the client
// creates .attach_pid<pid> and sends SIGQUIT, the JVM opens /tmp/.java_pid<pid>, and a
// request is "1\0jcmd\0<command>\0\0\0"; the reply is a status line, then the output.
func attachCommand(pid int, command string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	nspid := namespacePid(pid)
	root := fmt.Sprintf("/proc/%d/root/tmp", pid) // the JVM's /tmp, in whatever mount namespace
	sock := fmt.Sprintf("%s/.java_pid%d", root, nspid)
	if err := startAttachListener(pid, nspid, root, sock, deadline); err != nil {
		return "", err
	}
	conn, err := net.DialTimeout("unix", sock, time.Until(deadline))
	if err != nil {
		return "", fmt.Errorf("attach: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, "1\x00jcmd\x00"+command+"\x00\x00\x00"); err != nil {
		return "", fmt.Errorf("attach: %w", err)
	}
	rd := bufio.NewReader(conn)
	status, err := rd.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("attach: no reply: %w", err)
	}
	out, err := io.ReadAll(rd)
	if err != nil {
		return "", fmt.Errorf("attach: reply: %w", err)
	}
	if code, err := strconv.Atoi(strings.TrimSpace(status)); err != nil || code != 0 {
		return "", fmt.Errorf("attach: %s failed (status %q): %s", command, strings.TrimSpace(status), strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// OpenAttachListener makes a JVM open its attach socket now, so that a later DumpPerfMap
// only sends its command: under load the JVM took up to 0.6 s to open it, time the dump
// before the JVM's exit cannot spare.
func OpenAttachListener(pid int, timeout time.Duration) error {
	nspid := namespacePid(pid)
	root := fmt.Sprintf("/proc/%d/root/tmp", pid)
	return startAttachListener(pid, nspid, root, fmt.Sprintf("%s/.java_pid%d", root, nspid), time.Now().Add(timeout))
}

// startAttachListener makes the JVM open its attach socket unless it already has. Only one
// SIGQUIT is sent: to a JVM whose listener runs, SIGQUIT means "print a thread dump".
func startAttachListener(pid, nspid int, root, sock string, deadline time.Time) error {
	if _, err := os.Stat(sock); err == nil {
		return nil
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("attach: process %d exited", pid)
	}
	// The JVM looks for the trigger file in its working directory, then in /tmp.
	trigger := fmt.Sprintf("/proc/%d/cwd/.attach_pid%d", pid, nspid)
	f, err := os.Create(trigger)
	if err != nil {
		trigger = fmt.Sprintf("%s/.attach_pid%d", root, nspid)
		if f, err = os.Create(trigger); err != nil {
			return fmt.Errorf("attach: %w", err)
		}
	}
	f.Close()
	defer os.Remove(trigger)
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		return fmt.Errorf("attach: signal %d: %w", pid, err)
	}
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return nil
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("attach: process %d exited", pid)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("attach: process %d did not open %s", pid, sock)
		}
		time.Sleep(delay)
	}
}

// namespacePid is pid as the process itself sees it (the last NSpid of its status), which
// names its attach files and perf map; pid when the kernel does not say.
func namespacePid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return pid
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
				return n
			}
		}
	}
	return pid
}
