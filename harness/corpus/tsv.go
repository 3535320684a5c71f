package corpus

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
)

// readKeyed reads a TSV whose first field is a unique key; later duplicates are ignored.
func readKeyed(path string) ([][]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("corpus: %v", err)
	}
	defer f.Close()
	var out [][]string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if fields[0] == "" || seen[fields[0]] {
			continue
		}
		seen[fields[0]] = true
		out = append(out, fields)
	}
	return out, sc.Err()
}

// appendKeyed adds a line unless its key is there already; the caller holds the lock.
func appendKeyed(path string, fields []string) (bool, error) {
	have, err := readKeyed(path)
	if err != nil {
		return false, err
	}
	for _, h := range have {
		if h[0] == fields[0] {
			return false, nil
		}
	}
	for i := range fields {
		fields[i] = oneLine(fields[i])
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, fmt.Errorf("corpus: %v", err)
	}
	if _, err := f.WriteString(strings.Join(fields, "\t") + "\n"); err != nil {
		f.Close()
		return false, fmt.Errorf("corpus: %v", err)
	}
	return true, f.Close()
}
