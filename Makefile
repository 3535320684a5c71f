# walkfuzz: `make` builds everything into bin/, `make test` runs the suite, `make demo` shows it off.
SHELL := /bin/bash
JAVA_HOME := $(shell scripts/java-home.sh 2>/dev/null)
CFLAGS := -O2 -g -fPIC -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter -ftls-model=initial-exec
# The agent's calls to its own functions bind inside it and its calls into libc go through
# the GOT without a PLT stub: every PLT stub the signal handler passed was one more cold line
# (its bookkeeping p50 on loops at 100 us fell from ~350 to ~265 ns with these alone).
AGENT_CFLAGS := -fno-plt -fno-semantic-interposition -Wl,-Bsymbolic-functions
JNI_INC := -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux
# The agent: its core and the folders of the in-process walkers, as harness/walker's registry
# lists them (walkers/agent_walkers.mk, generated); never an out-of-process walker's C (the
# kernel's BPF program) nor the plugins, which are libraries of their own.
include walkers/agent_walkers.mk
AGENT_DIRS := walkers/core $(AGENT_WALKER_DIRS)
AGENT_SRC := $(foreach d,$(AGENT_DIRS),$(wildcard $(d)/*.c))
AGENT_HDR := $(wildcard walkers/include/*.h) $(foreach d,$(AGENT_DIRS),$(wildcard $(d)/*.h))
WORKLOAD_SRC := $(shell find workloads/src -name '*.java' 2>/dev/null)
APPS_SRC := $(shell find workloads/apps/src -name '*.java' 2>/dev/null)
APPS_CP := $(shell cat workloads/apps/classpath.txt 2>/dev/null | tr '\n' ':')
# Real applications from Maven Central (workloads/apps/maven/<app>), fetched by
# scripts/fetch-apps.sh into $(WALKFUZZ_CACHE)/apps: one jar each, built by
# workloads/apps/build-app.sh, which never fails for an app that is absent or was refused (that
# app's bin/apps-<app>.unsupported says why). Its status file changes when the app is fetched.
WALKFUZZ_CACHE ?= $(HOME)/.cache/walkfuzz
MAVEN_APPS := $(patsubst workloads/apps/maven/%/pom.xml,%,$(wildcard workloads/apps/maven/*/pom.xml))
APPS_CORE := $(addprefix workloads/apps/src/walkfuzz/apps/,App.java Config.java Main.java Run.java)
GO_SRC := $(shell find cmd harness walkers -name '*.go' 2>/dev/null) go.mod go.sum
TEST_TIMEOUT ?= 30m
# The planted-defect walkers of `walkfuzz selftest`: the list lives in defects.c (WF_DEFECTS).
DEFECTS := $(shell sed -n 's/^ *X.\([a-z-]*\),.*/\1/p' walkers/plugins/defects/defects.c 2>/dev/null)
DEFECT_PLUGINS := $(DEFECTS:%=bin/libwfdefect-%.so)

.PHONY: all setup build test test-apps faults demo bench nightly fuzz lint clean generate report-screenshot
all: build
setup:
	@scripts/setup.sh
build: bin/walkfuzz bin/libwalkfuzz.so bin/libfpwalk.so $(DEFECT_PLUGINS) bin/workloads.jar bin/whitebox.jar bin/libwfjni.so $(if $(APPS_SRC),bin/apps.jar bin/apps.classpath) $(MAVEN_APPS:%=bin/apps-%.jar)

# The build names itself (walkfuzz version, results.json, the store, the corpus): commit and
# dirty flag from git, "unknown" outside a checkout; .git/index changes on commit and checkout.
bin/walkfuzz: $(GO_SRC) $(wildcard .git/HEAD .git/index)
	@mkdir -p bin
	pkg=github.com/walkfuzz/walkfuzz/harness/buildinfo; \
	commit=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	describe=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	version=$$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); \
	go build -ldflags "-X $$pkg.version=$$version -X $$pkg.commit=$$commit -X $$pkg.describe=$$describe" -o $@ ./cmd/walkfuzz

# Only walkers/include is on the include path: a unit's own header is found beside it, and a
# walker cannot reach the core's headers (walkers talk to the core through wf_walker.h).
bin/libwalkfuzz.so: $(AGENT_SRC) $(AGENT_HDR)
	@mkdir -p bin
	gcc $(CFLAGS) $(AGENT_CFLAGS) -shared -Iwalkers/include $(JNI_INC) -o $@ $(AGENT_SRC) -ldl -lrt -lpthread

bin/libfpwalk.so: walkers/plugins/fpwalk/fpwalk.c walkers/include/wf_walker.h
	@mkdir -p bin
	gcc $(CFLAGS) -shared -Iwalkers/include $(JNI_INC) -o $@ $<

# One plugin per defect, all from one source: ASGCT plus the defect named by WF_DEFECT.
bin/libwfdefect-%.so: walkers/plugins/defects/defects.c walkers/include/wf_walker.h walkers/include/wf_asgct_codes.h
	@mkdir -p bin
	gcc $(CFLAGS) -shared -Iwalkers/include $(JNI_INC) -DWF_DEFECT='"$*"' -o $@ $< -ldl -lpthread

# workloads/native/bare/: natives built with neither frame pointers nor unwind tables (nor -g's
# .debug_frame), as many native libraries ship (wfjni_bare.c).
BARE_C := $(wildcard workloads/native/bare/*.c)
bin/libwfjni.so: $(wildcard workloads/native/*.c) $(BARE_C)
	@mkdir -p bin
	$(if $(BARE_C),gcc $(filter-out -g,$(CFLAGS)) -fomit-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables $(JNI_INC) -c -o bin/wfjni_bare.o $(BARE_C))
	gcc $(CFLAGS) -shared $(JNI_INC) -o $@ $(wildcard workloads/native/*.c) $(if $(BARE_C),bin/wfjni_bare.o)
	@rm -f bin/wfjni_bare.o

# --release 11: the jar runs on every LTS from 11 (what needs a newer JDK is reached by
# reflection, as Thread.ofVirtual). workloads.jar is also a Java agent (redefine_ms: the manifest
# names walkfuzz.workloads.Redefiner) and holds RedefHot's second body as the resource RedefHot.class.v2. whitebox.jar holds only the
# WhiteBox declarations, for -Xbootclasspath/a (the workloads stay on the class path), under both
# names HotSpot binds: jdk.test.whitebox and, generated from it, sun.hotspot (JDK 17 before 17u's rename).
bin/workloads.jar bin/whitebox.jar &: $(WORKLOAD_SRC) workloads/redefine/walkfuzz/workloads/RedefHot.java workloads/manifest/agent.mf
	@mkdir -p bin build && rm -rf build/classes build/redefine-v2 build/whitebox-classes build/gen
	mkdir -p build/gen/sun/hotspot && sed 's/^package jdk\.test\.whitebox;/package sun.hotspot;/' \
		workloads/src/jdk/test/whitebox/WhiteBox.java > build/gen/sun/hotspot/WhiteBox.java
	$(JAVA_HOME)/bin/javac --release 11 -nowarn -d build/classes $(WORKLOAD_SRC) build/gen/sun/hotspot/WhiteBox.java
	$(JAVA_HOME)/bin/javac --release 11 -nowarn -d build/redefine-v2 workloads/redefine/walkfuzz/workloads/RedefHot.java
	cp build/redefine-v2/walkfuzz/workloads/RedefHot.class build/classes/walkfuzz/workloads/RedefHot.class.v2
	$(JAVA_HOME)/bin/jar cfm bin/workloads.jar workloads/manifest/agent.mf -C build/classes .
	mkdir -p build/whitebox-classes && cp -r build/classes/jdk build/classes/sun build/whitebox-classes/
	$(JAVA_HOME)/bin/jar cf bin/whitebox.jar -C build/whitebox-classes .

# --release 11 as workloads.jar: Debian's libraries are class files of Java 8 (h2: 11).
bin/apps.jar: $(APPS_SRC) workloads/apps/classpath.txt
	@mkdir -p bin build && rm -rf build/apps-classes
	$(JAVA_HOME)/bin/javac --release 11 -nowarn -cp "$(APPS_CP)" -d build/apps-classes $(APPS_SRC)
	$(JAVA_HOME)/bin/jar cf $@ -C build/apps-classes .

# The libraries apps.jar's applications need, beside it (harness/artifacts reads it from bin/).
bin/apps.classpath: workloads/apps/classpath.txt
	@mkdir -p bin
	cp $< $@

.SECONDEXPANSION:
bin/apps-%.jar: workloads/apps/build-app.sh $(APPS_CORE) $$(shell find workloads/apps/maven/$$* -type f) $$(wildcard $(WALKFUZZ_CACHE)/apps/$$*/status)
	@JAVA_HOME=$(JAVA_HOME) WALKFUZZ_CACHE=$(WALKFUZZ_CACHE) workloads/apps/build-app.sh $*

test: setup build
	go vet ./...
	go test -timeout $(TEST_TIMEOUT) -count=1 ./...

# The slow fault-injection cases (real JVMs: signals at random moments, a disk that fills
# mid-campaign, two processes on one campaign, an unreadable bucket in the nightly); the
# quick ones are in make test. Needs root for tmpfs mounts and to act as nobody.
# Every Maven-Central app, the heavy ones too (dotty, Spark: minutes on 2 cores, outside make test).
test-apps: build
	WALKFUZZ_HEAVY_APPS=1 go test -timeout 30m -count=1 -run 'TestMavenApps' -v ./harness/runner

faults: build
	go test -tags faults -timeout 20m -count=1 -run 'Faults|Unreadable|DamagedStore|FullFileSystem' -v ./cmd/walkfuzz

# A short campaign over every walker this machine supports, the comparison table, the report.
DEMO_BUDGET ?= 4m
demo: setup build
	rm -rf results/demo.db results/demo-corpus results/demo-runs  # each demo is a new campaign
	bin/walkfuzz walkers
	bin/walkfuzz fuzz --budget $(DEMO_BUDGET) --duration-cap 6s --seed-base 0xde70 \
		--workloads recursion,lambdas,stubs,loops,deopt,exceptions \
		--store results/demo.db --corpus results/demo-corpus --runs-dir results/demo-runs; \
		test $$? -le 1
	bin/walkfuzz report --store results/demo.db --corpus results/demo-corpus --out reports/out
	bin/walkfuzz table --store results/demo.db --by walker,jdk
	@echo "report: file://$$PWD/reports/out/index.html"

# The nightly job: replay the corpus, fuzz for the budget, judge against the previous night.
# It fuzzes every walker this machine supports, the asgct+vmstructs differential and every JDK
# found; a signal mode the machine refuses is left out with a note.
NIGHTLY_BUDGET ?= 30m
nightly: setup build
	bin/walkfuzz nightly --budget $(NIGHTLY_BUDGET) \
		--store results/walkfuzz.db --corpus corpus --junit results/nightly-junit.xml; \
	status=$$?; bin/walkfuzz report --store results/walkfuzz.db --corpus corpus --out reports/out; exit $$status

# A screenshot of the dashboard in Debian's headless Chromium (synthetic runs without a store).
report-screenshot: build
	@if [ -f results/walkfuzz.db ]; then bin/walkfuzz report --store results/walkfuzz.db --corpus corpus --out reports/out; \
	else bin/walkfuzz report --synthetic 2000 --out reports/out; fi
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
	  --disable-component-update --disable-sync --user-data-dir="$$(mktemp -d)" --hide-scrollbars \
	  --window-size=1400,1000 --screenshot="$(CURDIR)/reports/out/screenshot.png" "file://$(CURDIR)/reports/out/index.html"
	@echo "screenshot: reports/out/screenshot.png"

# Rebuilds the eBPF walker's object and Go bindings with clang (they are committed).
generate:
	WALKFUZZ_SETUP_CLANG=1 scripts/setup.sh
	go generate ./walkers/ebpf ./harness/walker ./harness/classify

bench: setup build
	bin/walkfuzz bench --out results/bench.json

fuzz: build
	go test ./harness/samplelog -run '^$$' -fuzz FuzzRead -fuzztime 2m
	go test ./harness/crash -run '^$$' -fuzz FuzzParse -fuzztime 2m
	go test ./harness/hang -run '^$$' -fuzz FuzzParse -fuzztime 2m
	go test ./harness/methods -run '^$$' -fuzz FuzzDecodeCode -fuzztime 1m
	go test ./walkers/jfr -run '^$$' -fuzz FuzzReadRequestsJSON -fuzztime 1m

lint: build
	go vet ./...
	gofmt -l cmd harness walkers | tee /dev/stderr | (! read)

clean:
	rm -rf bin build
