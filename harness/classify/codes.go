package classify

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CodeNamer names a walker's result code (<= 0); "" when the code is unknown.
type CodeNamer func(code int32) string

//go:generate go run ./gen ../../walkers/include/wf_asgct_codes.h asgct_codes.go

// ASGCTCodeName names AsyncGetCallTrace's codes; it is the default for the asgct walker.
func ASGCTCodeName(code int32) string {
	if code <= 0 && code > -int32(len(asgctCodes)) {
		return asgctCodes[-code]
	}
	return ""
}

// LoadCodeNames reads the code names the agent writes for every walker, so that plugin
// walkers' codes have names too. Lines are walker<TAB>code<TAB>name. A missing file
// gives an empty map: the agent may not have got that far.
func LoadCodeNames(path string) (map[string]CodeNamer, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]CodeNamer{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("walker code names: %w", err)
	}
	defer f.Close()
	tables := map[string]map[int32]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 {
			continue
		}
		code, err := strconv.ParseInt(fields[1], 10, 32)
		if err != nil || fields[2] == "" {
			continue
		}
		if tables[fields[0]] == nil {
			tables[fields[0]] = map[int32]string{}
		}
		tables[fields[0]][int32(code)] = fields[2]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("walker code names %s: %w", path, err)
	}
	names := make(map[string]CodeNamer, len(tables))
	for w, tab := range tables {
		names[w] = func(code int32) string { return tab[code] }
	}
	return names, nil
}
