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
endif

PKGS_CFLAGS := $(shell pkg-config --cflags jansson libmicrohttpd 2>/dev/null)
PKGS_LIBS   := $(shell pkg-config --libs jansson libmicrohttpd 2>/dev/null || echo -ljansson -lmicrohttpd)

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wpointer-arith -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wcast-qual -Wnull-dereference
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Isrc $(PKGS_CFLAGS) \
            -DSPARKOPS_VERSION='"$(VERSION)"' -fPIC
ifeq ($(CI),true)
CFLAGS   += -Werror
endif
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
LDLIBS   += $(PKGS_LIBS) -ldl -lpthread -lm
LDFLAGS  += $(SANFLAGS)

SRCS     := $(sort $(wildcard src/*/*.c))
ASRCS    := $(sort $(wildcard src/*/*.S))
OBJS     := $(SRCS:%.c=$(BUILD)/obj/%.o) $(ASRCS:%.S=$(BUILD)/obj/%.o)
LIB      := $(BUILD)/libsparkops.a
BIN      := $(BUILD)/sparkops
FAKENVML := $(BUILD)/libfake-nvml.so $(BUILD)/libfake-nvml-old.so
UNIT_SRCS:= $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS:= $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

DEB_BUILD := libjansson-dev libmicrohttpd-dev pkg-config
DEB_CHECK := $(DEB_BUILD) jq groff-base libcmocka-dev libxml2-utils valgrind clang libclang-rt-14-dev procps prometheus curl python3

.PHONY: all deps deps-check run check test unit cli asan install uninstall clean bench fuzz docs-img

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

$(LIB): $(OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/obj/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libfake-nvml.so: tests/fake-nvml/fake_nvml.c src/probe/nvml_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $< -lpthread

$(BUILD)/libfake-nvml-old.so: tests/fake-nvml/fake_nvml.c src/probe/nvml_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DFAKE_OLD_DRIVER -shared -o $@ $< -lpthread

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

check: deps-check
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory asan

HELPERS  := $(BUILD)/progress_child

$(BUILD)/progress_child: tests/helpers/progress_child.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

test: all $(UNIT_BINS) $(HELPERS)
	@scripts/run-tests.sh $(BUILD)

asan:
	@$(MAKE) --no-print-directory SANITIZE=1 test

# ---- install -----------------------------------------------------------------

install: $(BIN) $(MAN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/sparkops
	install -m 0644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/sparkops.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sparkops $(DESTDIR)$(PREFIX)/share/man/man1/sparkops.1

bench: all
	@bench/run.sh $(BUILD)

# the README's example chart (docs/img/report-example.svg), drawn from a fixture log
docs-img: all
	scripts/docs-img.sh $(BUILD)

clean:
	rm -rf build build-asan build-fuzz
