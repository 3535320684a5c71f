package campaign

import (
	"sync"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// Resolver turns an episode's JDK spec into one of the discovered JDKs (jdk.Pick), caching
// each answer: a campaign asks for every episode.
func Resolver(all []jdk.JDK) func(spec string) (jdk.JDK, error) {
	var mu sync.Mutex
	type answer struct {
		j   jdk.JDK
		err error
	}
	cache := map[string]answer{}
	return func(spec string) (jdk.JDK, error) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := cache[spec]
		if !ok {
			a.j, a.err = jdk.Pick(all, spec)
			cache[spec] = a
		}
		return a.j, a.err
	}
}
