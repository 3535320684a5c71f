package main

import (
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"io"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// candidateWalkers is every walker walkfuzz knows, with the built frame-pointer plugin when
// it is there: what `walkers` probes and the default campaign draws from.
func candidateWalkers() []string {
	names := walker.Names()
	if art, err := artifacts.Locate(); err == nil && artifacts.Exists(art.Bin+"/libfpwalk.so") {
		names = append(names, walker.PluginPrefix+art.Bin+"/libfpwalk.so")
	}
	return names
}

// probeSupport probes each walker on each JDK spec (two at a time: in-process probes start
// a JVM) and returns, per spec, the walkers that cannot run there and why. A spec that names
// no JDK is left out: options() reports it.
func probeSupport(specs, names []string, resolve func(string) (jdk.JDK, error)) map[string]map[string]error {
	if len(specs) == 0 {
		specs = []string{""}
	}
	var mu sync.Mutex
	out := map[string]map[string]error{}
	var g errgroup.Group
	g.SetLimit(2)
	for _, s := range specs {
		j, err := resolve(s)
		if err != nil {
			continue
		}
		out[s] = map[string]error{}
		for _, n := range names {
			g.Go(func() error {
				if err := probe.Walker(j, n); err != nil {
					mu.Lock()
					out[s][n] = err
					mu.Unlock()
				}
				return nil
			})
		}
	}
	g.Wait()
	return out
}

// applySupport fills spec.Unsupported from the probes and, when --walkers was not given,
// spec.Walkers: every walker some JDK of the campaign runs, each alone, plus each one's
// differential partner (asgct+vmstructs). It says on w what it left out.
func (f *campaignFlags) applySupport(spec *campaign.Spec, w io.Writer) error {
	resolve := campaign.Resolver(jdk.Discover())
	names := candidateWalkers()
	if f.walkers != "" {
		names = nil
		for _, set := range spec.Walkers {
			for _, n := range set {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	probes := probeSupport(spec.JDKs, names, resolve)
	runsSomewhere := func(n string) bool {
		for _, p := range probes {
			if p[n] == nil {
				return true
			}
		}
		return false
	}
	if f.walkers == "" {
		spec.Walkers = nil
		var left []string
		for _, n := range names {
			switch {
			case walker.OptIn(n):
			case runsSomewhere(n):
				spec.Walkers = append(spec.Walkers, []string{n})
			default:
				left = append(left, n)
			}
		}
		for _, n := range names { // and each walker's differential partner (the registry's)
			if p := walker.Partner(n); p != "" && runsSomewhere(n) && runsSomewhere(p) {
				spec.Walkers = append(spec.Walkers, []string{n, p})
			}
		}
		if len(spec.Walkers) == 0 {
			return usageErr("no walker runs on the campaign's JDKs: see walkfuzz walkers, or pass --walkers")
		}
		sets := make([]string, len(spec.Walkers))
		for i, s := range spec.Walkers {
			sets[i] = strings.Join(s, "+")
		}
		fmt.Fprintf(w, "walkfuzz: walkers: %s (every walker this machine runs, and the differential pair)", strings.Join(sets, ", "))
		if len(left) > 0 {
			fmt.Fprintf(w, "; left out, unsupported on every JDK: %s", strings.Join(left, ", "))
		}
		fmt.Fprintln(w)
	}
	specs := spec.JDKs
	if len(specs) == 0 {
		specs = []string{""}
	}
	for _, s := range specs {
		var not []string
		for _, n := range names {
			if err := probes[s][n]; err != nil {
				not = append(not, n)
				if runsSomewhere(n) || f.walkers != "" { // the default leaves it out, said above
					j, _ := resolve(s)
					fmt.Fprintf(w, "walkfuzz: JDK %s: no %s episodes (%v)\n", j.Name(), n, err)
				}
			}
		}
		if j, err := resolve(s); err == nil {
			not = append(not, probe.RefusedFlags(j)...) // drawn flags it refuses: left out of its episodes
			for _, m := range episode.ModulesUsed() {
				if !j.HasModule(m) { // its episodes draw workloads that run there (Spec.Fit)
					if spec.LacksModules == nil {
						spec.LacksModules = map[string][]string{}
					}
					spec.LacksModules[s] = append(spec.LacksModules[s], m)
				}
			}
		}
		if len(not) > 0 && s != "" {
			if spec.Unsupported == nil {
				spec.Unsupported = map[string][]string{}
			}
			spec.Unsupported[s] = not
		}
	}
	return nil
}
