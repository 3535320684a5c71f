package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

func TestEveryJDKNamesEachBuildOnce(t *testing.T) {
	all := []jdk.JDK{{Major: 25, Path: "/jvm/temurin-25"}, {Major: 17, Path: "/jvm/java-17"}, {Major: 17, Path: "/opt/jdk-17.0.21"}}
	assert.Equal(t, []string{"25", "/jvm/java-17", "/opt/jdk-17.0.21"}, everyJDK(all))
	assert.Equal(t, []string{"17"}, everyJDK(all[1:2]))
}
