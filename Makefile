# SPDX-License-Identifier: MIT
# sparkops — build, test, install.  `make run` and `make check` are the two
# commands a new user needs; both install missing Debian packages first.

VERSION  := 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
BUILD    ?= build

# SANITIZE=1 builds into build-asan/ with ASan+UBSan (LeakSanitizer on).
ifeq ($(SANITIZE),1)
BUILD    := build-asan
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# gcc links its sanitizer runtimes shared by default: libasan.so's
# relocations and LeakSanitizer's exit scan through it made every start of
# an ASan sparkops cost ~110 ms here, ~85 ms with the runtimes linked in
# (the suite starts it thousands of times). -rdynamic exports them to the
# instrumented fake NVML library the tests dlopen, which is linked without a
# runtime of its own (its rules below). clang links its runtime in and
# exports it already.
ifeq ($(findstring clang,$(shell $(CC) --version 2>/dev/null | head -1)),)
SANLINK  := -static-libasan -static-libubsan -rdynamic
endif
endif

# PKG_CONFIG: a cross build (check-arm64) points it at the target's .pc files
PKG_CONFIG  ?= pkg-config
PKGS_CFLAGS := $(shell $(PKG_CONFIG) --cflags jansson libmicrohttpd ncursesw 2>/dev/null)
# libmicrohttpd is dlopen'ed by src/out/serve_http.c (only its header is needed to build);
# libcrypt (crypt_r) checks the passwords of serve --web-config's basic_auth_users;
# ncursesw draws `sparkops top` (src/cmd/topterm.c)
PKGS_LIBS   := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson) \
               $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null || echo -lncursesw)

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wpointer-arith -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wcast-qual -Wnull-dereference
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Isrc $(PKGS_CFLAGS) \
            -DSPARKOPS_VERSION='"$(VERSION)"' -fPIC $(CFLAGS_EXTRA)
ifeq ($(CI),true)
CFLAGS   += -Werror
endif
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
LDLIBS   += $(PKGS_LIBS) -lcrypt -ldl -lpthread -lm
LDFLAGS  += $(SANFLAGS) $(SANLINK)
# The sparkops binary takes jansson, ncursesw, tinfo and libcrypt from their
# archives where the toolchain has all four (libc, libm and libdl stay
# shared): each shared library is a file to open, mappings, relocations and
# page faults at every start, a quarter of an idle `status`'s own cost here
# (bench/bench_goals.sh); linked in, only the pages a command runs are
# touched. STATIC_DEPS=0 links them shared, as the unit tests always do.
# A sanitizer build links them shared: ASan intercepts crypt_r and finds the
# real one through the dynamic linker, so an archive's copy is a NULL call
# (serve's password check crashed under make asan).
ifeq ($(SANITIZE),1)
STATIC_DEPS ?= 0
else
STATIC_DEPS ?= 1
endif
static_have = $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a 2>/dev/null))
ifeq ($(STATIC_DEPS),1)
ifneq ($(and $(call static_have,jansson),$(call static_have,ncursesw),$(call static_have,tinfo),$(call static_have,crypt)),)
BIN_LIBS := -Wl,-Bstatic -ljansson -lncursesw -ltinfo -lcrypt -Wl,-Bdynamic -ldl -lpthread -lm
endif
endif
BIN_LIBS ?= $(LDLIBS)

SRCS     := $(sort $(wildcard src/*/*.c))
ASRCS    := $(sort $(wildcard src/*/*.S))
OBJS     := $(SRCS:%.c=$(BUILD)/obj/%.o) $(ASRCS:%.S=$(BUILD)/obj/%.o)
LIB      := $(BUILD)/libsparkops.a
BIN      := $(BUILD)/sparkops
FAKENVML := $(BUILD)/libfake-nvml.so $(BUILD)/libfake-nvml-old.so
UNIT_SRCS:= $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS:= $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

DEB_BUILD := libjansson-dev libmicrohttpd-dev libcrypt-dev libncurses-dev libsystemd-dev pkg-config
# make bench: node_exporter is the scrape's and PSS's anchor, procps has free -g and vmstat
DEB_BENCH := procps prometheus-node-exporter
DEB_CHECK := $(DEB_BUILD) jq groff-base libcmocka-dev libxml2-utils valgrind clang libclang-rt-14-dev procps prometheus curl cppcheck clang-tidy python3 openssl tmux python3-tqdm chromium locales systemd-journal-remote stress-ng

.PHONY: all deps deps-check run check test unit cli asan stress-suite install uninstall clean bench fuzz docs-img docs-examples

MAN      := $(BUILD)/sparkops.1

all: $(BIN) $(FAKENVML) $(MAN)

# the man page is assembled from one fragment per command
$(MAN): $(sort $(wildcard docs/man/*.roff)) Makefile
	@mkdir -p $(dir $@)
	cat $(sort $(wildcard docs/man/*.roff)) | sed 's/@VERSION@/$(VERSION)/' > $@

deps:
	@scripts/deps.sh $(DEB_BUILD)

deps-check:
	@scripts/deps.sh $(DEB_CHECK)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# assembler sources: the catalog's .incbin of data/models.json (paths from the top folder)
$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@
$(BUILD)/obj/src/model/catalog_data.o: data/models.json
$(BUILD)/obj/src/out/webpage_data.o: data/webpage.html

$(LIB): $(OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/obj/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(BIN_LIBS)

# compiled with the build's flags (instrumented under SANITIZE=1), linked
# without them: a sanitizer runtime comes from the program that loads it
$(BUILD)/libfake-nvml.so: tests/fake-nvml/fake_nvml.c src/probe/nvml_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@.o $<
	$(CC) -shared -o $@ $@.o -lpthread

$(BUILD)/libfake-nvml-old.so: tests/fake-nvml/fake_nvml.c src/probe/nvml_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DFAKE_OLD_DRIVER -c -o $@.o $<
	$(CC) -shared -o $@ $@.o -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIB) -lcmocka $(LDLIBS)

-include $(OBJS:.o=.d) $(BUILD)/obj/src/main.d

# ---- the two commands ------------------------------------------------------

run: deps
	@$(MAKE) --no-print-directory all
	@echo "== sparkops status"
	@$(BIN) status || true
	@if $(BIN) plan --help >/dev/null 2>&1; then \
	  echo; echo "== sparkops plan llama-3.1-8b --method lora"; \
	  $(BIN) plan llama-3.1-8b --method lora || true; fi

# the static/dynamic checks first, the sanitizer suite, then the plain suite
# last, so the run ends on its "N passed, N failed" line. Each stage builds
# with -j (the online CPUs) into its own folder, and none rebuilds another's.
# Two lanes run side by side: lint (cppcheck -j, then clang-tidy -j) and the
# rest (check-rest: the builds, fuzzing, valgrind, qemu, the ASan suite,
# which mostly wait); lint's output is kept in $(BUILD)/check/lint.log and
# printed when both lanes are done.
# Every stage says its wall and CPU time (scripts/stage.sh), and the table
# of them ($(BUILD)/check/times.txt) is printed before the plain suite, whose
# own time is prove's "wallclock secs" line.
NPROC := $(shell nproc 2>/dev/null || echo 2)
JFLAG := -j$(NPROC)
STAGE := scripts/stage.sh
STAGE_TIMES ?= $(CURDIR)/$(BUILD)/check/times.txt
export STAGE_TIMES
check: deps-check
	@mkdir -p $(BUILD)/check && : >$(STAGE_TIMES)
	@$(STAGE) build $(MAKE) --no-print-directory $(JFLAG) all test-bins
	@{ $(STAGE) lint $(MAKE) --no-print-directory lint >$(BUILD)/check/lint.log 2>&1; \
	  echo $$? >$(BUILD)/check/lint.rc; } & \
	$(MAKE) --no-print-directory check-rest; rc=$$?; wait; \
	echo "== lint (beside the other stages)"; cat $(BUILD)/check/lint.log; \
	[ $$rc = 0 ] && [ "$$(cat $(BUILD)/check/lint.rc)" = 0 ]
	@echo "== make check: the stages so far (wall and CPU seconds; lint ran beside the others)"; \
	cat $(STAGE_TIMES)
	@$(MAKE) --no-print-directory $(JFLAG) test

HELPERS  := $(BUILD)/progress_child

$(BUILD)/progress_child: tests/helpers/progress_child.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# everything the suites run, built but not run (the aarch64 cross build)
test-bins: all $(UNIT_BINS) $(HELPERS)

# `make test` runs everything (prove -j: scripts/run-tests.sh); `make test
# T=NAME` one file by name (T=pool: the unit binary and the script of that
# name; T=test_pool.sh: the script only; several names in quotes); `make
# unit`, `make cli` one kind.
test: all $(UNIT_BINS) $(HELPERS)
	@scripts/run-tests.sh $(BUILD) $(T)

unit: all $(UNIT_BINS) $(HELPERS)
	@scripts/run-tests.sh $(BUILD) $(UNIT_BINS)

cli: all $(UNIT_BINS) $(HELPERS)
	@scripts/run-tests.sh $(BUILD) $(wildcard tests/cli/test_*.sh)

asan:
	@$(MAKE) --no-print-directory SANITIZE=1 test

# the suite three times in a row beside another `sparkops watch` and
# `stress-ng --cpu` (scripts/stress-suite.sh; ROUNDS=, STRESS_ROOT=sealed, T=NAME)
stress-suite: all $(UNIT_BINS) $(HELPERS)
	@scripts/stress-suite.sh $(BUILD) $(T)

# ---- install -----------------------------------------------------------------

install: $(BIN) $(MAN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/sparkops
	install -m 0644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/sparkops.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sparkops $(DESTDIR)$(PREFIX)/share/man/man1/sparkops.1

bench: all $(BUILD)/libfake-nvml.so
	@scripts/deps.sh $(DEB_BENCH)
	@bench/run.sh $(BUILD)

# the README's example chart (docs/img/report-example.svg), drawn from a fixture log
docs-img: all
	scripts/docs-img.sh $(BUILD)

# the example outputs pasted in README.md and docs/, made by the binary on the
# fixtures (tests/cli/test_docs_examples.sh fails when one is stale)
DOC_EXAMPLES := README.md $(wildcard docs/*.md)
docs-examples: all
	scripts/docs-examples.py $(BUILD) write $(DOC_EXAMPLES)

clean:
	rm -rf build build-asan build-fuzz build-tsan build-arm64 build-uchar

# ==== robustness: fuzzing, lint, valgrind ======================================
# Kept together at the end so merges stay easy. `make fuzz` runs every
# fuzz/fuzz_*.c harness for FUZZ_TIME seconds (default 180); `make check`
# runs each for a few seconds, replays fuzz/regressions/, runs the linters
# and valgrind, and builds everything with -Werror.
FUZZ_TIME  ?= 180
FUZZ_CC    ?= clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_FLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Isrc -Ifuzz $(PKGS_CFLAGS) -DSPARKOPS_VERSION='"$(VERSION)"'
FUZZ_SRCS  := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BINS  := $(FUZZ_SRCS:fuzz/%.c=build-fuzz/%)
FUZZ_OBJS  := $(SRCS:%.c=build-fuzz/obj/%.o) $(ASRCS:%.S=build-fuzz/obj/%.o)

.PHONY: fuzz fuzz-build fuzz-check lint cppcheck clang-tidy valgrind check-extra check-rest werror tsan tsan-build layers

build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

build-fuzz/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -c $< -o $@

build-fuzz/libsparkops.a: $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^

build-fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h build-fuzz/libsparkops.a
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< build-fuzz/libsparkops.a $(LDLIBS)

-include $(FUZZ_OBJS:.o=.d)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@scripts/fuzz-run.sh $(FUZZ_TIME) $(FUZZ_BINS)

fuzz-check: fuzz-build
	@scripts/fuzz-run.sh 3 $(FUZZ_BINS)

# -Werror on every translation unit (the default `make` stays friendly;
# `make check` is strict): the unsigned-char build below is made with
# WERROR=1, so it is that build, not a second compile of every file. Make
# keeps it up to date (a header change recompiles what includes it).
UCHAR_MAKE := $(MAKE) --no-print-directory $(JFLAG) BUILD=build-uchar CFLAGS_EXTRA=-funsigned-char WERROR=1
werror:
	@$(UCHAR_MAKE) test-bins >/dev/null
	@echo "werror: $(words $(SRCS) $(UNIT_SRCS)) files and main.c compile without a warning (-Werror, in build-uchar/)"

# clang-tidy (.clang-tidy) and cppcheck (scripts/cppcheck.supp): zero findings
# on src/. clang-tidy is slow, so each file keeps a stamp that depends on its
# object (rebuilt when the file or a header it includes changes).
TIDY_FLAGS := -std=c11 -D_GNU_SOURCE -Isrc $(PKGS_CFLAGS) -DSPARKOPS_VERSION='"$(VERSION)"'
TIDY_OK    := $(SRCS:%.c=$(BUILD)/lint/%.tidy) $(BUILD)/lint/src/main.tidy
$(BUILD)/lint/%.tidy: %.c $(BUILD)/obj/%.o .clang-tidy
	@mkdir -p $(dir $@)
	@clang-tidy --quiet $< -- $(TIDY_FLAGS) >$@.log 2>&1 || { cat $@.log; exit 1; }
	@touch $@
clang-tidy: $(TIDY_OK)
	@echo "clang-tidy: $(words $(TIDY_OK)) files, no findings"
cppcheck:
	@cppcheck --quiet -j$(NPROC) --enable=warning,style,performance,portability --std=c11 -D_GNU_SOURCE -Isrc \
	  --inline-suppr --suppressions-list=scripts/cppcheck.supp --error-exitcode=1 src
	@echo "cppcheck: src/ clean"
lint: all
	@$(MAKE) --no-print-directory cppcheck
	@$(MAKE) --no-print-directory $(JFLAG) clang-tidy

# valgrind memcheck on the commands that exist (scripts/valgrind-check.sh)
valgrind: all
	@scripts/valgrind-check.sh $(BUILD)

# ThreadSanitizer on the GPU thread and its callers (tests/unit/test_gpuwatch.c)
# and on the process view's scan workers (tests/unit/test_procview.c): one
# instrumented library in build-tsan/ (this Makefile's own rules, with clang
# and -fsanitize=thread), each test linked against it
TSAN_TESTS := test_gpuwatch test_procview
tsan-build:
	@CFLAGS="-g -O1" SANFLAGS=-fsanitize=thread $(MAKE) --no-print-directory $(JFLAG) BUILD=build-tsan CC=$(FUZZ_CC) \
	  CFLAGS_EXTRA=-Wno-format-nonliteral \
	  $(TSAN_TESTS:%=build-tsan/tests/%) >/dev/null
tsan: tsan-build $(BUILD)/libfake-nvml.so
	@for t in $(TSAN_TESTS); do \
	out=$$(BUILD_DIR=$(CURDIR)/$(BUILD) TSAN_OPTIONS=halt_on_error=1 build-tsan/tests/$$t 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ] && echo "$$out" | grep -q 'unexpected memory mapping'; then \
	  echo "tsan: skipped (this kernel's address layout is not supported by ThreadSanitizer)"; \
	elif [ $$rc -ne 0 ]; then echo "$$out"; exit 1; \
	else echo "tsan: $$t clean"; fi; done

# the sampling loop soaked on its own (bench/bench_soak.sh)
$(BUILD)/bench/soak_sampler: bench/soak_sampler.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# one sample's cost in a steady state (bench/bench_cost.sh)
$(BUILD)/bench/sampler_cost: bench/sampler_cost.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# what `make check` adds to the unit and CLI suites
# the include edges go down the layers and only src/probe/ names /proc, /sys
# and /dev/kmsg paths (the ranks: scripts/check-layers.sh, docs/ARCHITECTURE.md);
# no file is opened for writing outside the one door, src/util/fileio.c
# (scripts/check-writes.sh)
layers:
	@scripts/check-layers.sh && echo "layers: ok"
	@scripts/check-writes.sh && echo "writes: ok (one door)"

# check-rest: what make check runs beside lint, one stage after another;
# check-extra: every extra stage in one lane (lint included)
check-rest: all $(UNIT_BINS)
	@$(STAGE) layers $(MAKE) --no-print-directory layers
	@$(STAGE) werror $(MAKE) --no-print-directory werror
	@$(STAGE) tsan $(MAKE) --no-print-directory tsan
	@$(STAGE) valgrind $(MAKE) --no-print-directory valgrind
	@$(STAGE) fuzz-build $(MAKE) --no-print-directory $(JFLAG) fuzz-build
	@$(STAGE) fuzz-check $(MAKE) --no-print-directory fuzz-check
	@$(STAGE) check-unsigned-char $(MAKE) --no-print-directory check-unsigned-char
	@$(STAGE) check-arm64 $(MAKE) --no-print-directory check-arm64
	@$(STAGE) asan $(MAKE) --no-print-directory $(JFLAG) asan
check-extra: all $(UNIT_BINS)
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory check-rest

# ==== aarch64 (the DGX Spark's CPU) ============================================
# check-arm64: cross-build everything with -Werror into build-arm64/ and run
# the single-threaded unit tests and the parsers' CLI scripts under
# qemu-aarch64 (scripts/check-arm64.sh; skipped, with one line, when the
# toolchain cannot be installed). check-unsigned-char: aarch64's unsigned
# plain char, natively, into build-uchar/ (-Werror: also `werror`), on the
# same unit tests and parsers' scripts: what char signedness can change
# (byte tests, parsers, tables); the whole CLI suite runs under ASan and plain.
.PHONY: check-arm64 check-unsigned-char test-bins deb
ARM64_CC ?= aarch64-linux-gnu-gcc
CLI_PARSERS := test_report.sh test_ladder.sh test_ladder_flush.sh test_plan.sh test_plan_accuracy.sh \
               test_pagesize.sh test_status.sh test_docs.sh
check-arm64:
	@ARM64_CC=$(ARM64_CC) MAKE="$(MAKE)" CLI_QEMU="$(CLI_PARSERS)" scripts/check-arm64.sh build-arm64

check-unsigned-char:
	@$(UCHAR_MAKE) test-bins
	@scripts/run-tests.sh build-uchar $(UNIT_SRCS:tests/unit/%.c=build-uchar/tests/%) $(CLI_PARSERS:%=tests/cli/%)

# make deb: build/sparkops_VERSION_<native>.deb, and build-arm64/..._arm64.deb
# when the aarch64 toolchain is here or installable (scripts/mkdeb.sh)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
deb: $(BIN) $(MAN)
	@scripts/mkdeb.sh $(BUILD) $(DEB_ARCH) $(VERSION)
	@why=$$(scripts/deps-arm64.sh 2>&1 >/dev/null); rc=$$?; \
	if [ $$rc = 3 ]; then echo "deb: arm64 package skipped: $$why"; \
	elif [ $$rc != 0 ]; then echo "$$why"; exit 1; \
	else PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
	  $(MAKE) --no-print-directory -s BUILD=build-arm64 CC=$(ARM64_CC) WERROR=1 build-arm64/sparkops build-arm64/sparkops.1 && \
	  scripts/mkdeb.sh build-arm64 arm64 $(VERSION); fi
