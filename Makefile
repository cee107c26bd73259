# ferromq: `make bench` (main job), `make test` (all tests), `make dist` (the drop-in).
CARGO ?= cargo
PREFIX ?= $(CURDIR)/dist
VERSION := 4.3.5
CFLAGS_TEST := -O1 -g -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE

# test-safety: Miri + AddressSanitizer on the unsafe code, and a fuzz smoke run of every target
.PHONY: all setup dist test test-rust test-c test-bindings test-safety bench bench-full conformance clean

all: dist

setup:
	@bash scripts/setup.sh

## dist: dist/lib/libzmq.so.5 (+ libzmq.so), dist/include/zmq.h, dist/lib/pkgconfig/libzmq.pc
dist:
	$(CARGO) build --profile dist -p ferromq-capi
	mkdir -p $(PREFIX)/lib/pkgconfig $(PREFIX)/include
	# Copy then rename: programs still running on the old library keep their mapping.
	cp target/dist/libzmq.so $(PREFIX)/lib/.libzmq.so.5.tmp
	mv -f $(PREFIX)/lib/.libzmq.so.5.tmp $(PREFIX)/lib/libzmq.so.5
	ln -sf libzmq.so.5 $(PREFIX)/lib/libzmq.so
	cp include/zmq.h $(PREFIX)/include/zmq.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    scripts/libzmq.pc.in > $(PREFIX)/lib/pkgconfig/libzmq.pc
	@echo "dist: $(PREFIX)/lib/libzmq.so.5 (soname $$(objdump -p $(PREFIX)/lib/libzmq.so.5 | awk '/SONAME/{print $$2}'))"

## test: every test: Rust unit/integration/interop tests, C programs on dist/, the bindings'
## fast conformance runs (cppzmq, pebbe/zmq4, Rust zmq crate, JeroMQ 0.3.6 as a ZMTP 2.0
## peer), libzmq 4.3.4's own test programs, our Java and Node bindings,
## Miri/ASan on the unsafe code, a fuzz smoke run, bench self-tests
test: setup dist test-rust test-c test-bindings test-safety
	python3 -m pytest -q bench/tests
	@echo "make test: all suites passed"

test-bindings: dist
	bash conformance/cpp/run.sh
	SKIP_DIST=1 STRICT=1 bash conformance/go-zmq4.sh
	bash conformance/rust-zmq/run.sh
	bash conformance/zmtp2-jeromq/run.sh
	bash conformance/libzmq-tests/run.sh
	bash bindings/node/run-tests.sh
	bash bindings/java/run-tests.sh

test-safety:
	bash scripts/sanitize.sh
	bash fuzz/smoke.sh

test-rust:
	$(CARGO) test --workspace --release

test-c: dist
	@bash tests/c/run.sh $(PREFIX)
	@bash tests/c/differential/run.sh $(PREFIX)

## bench: the quick ferromq-vs-libzmq comparison (tables printed; files in bench/out/)
bench: setup dist
	python3 bench/run.py

bench-full: setup dist
	python3 bench/run.py --full

## conformance: every binding's suite on ferromq and on real libzmq, compared: pyzmq's own
## tests (build/conformance/pyzmq-report.md), pebbe/zmq4's `go test`, the cppzmq programs,
## the Rust zmq crate (our program and its own tests), zeromq.js built in shared-library
## mode, libzmq 4.3.4's own test programs on Debian's libzmq as a reference (~8 minutes here)
conformance: setup dist
	SKIP_DIST=1 STRICT=1 bash conformance/pyzmq.sh
	SKIP_DIST=1 STRICT=1 bash conformance/go-zmq4.sh
	bash conformance/cpp/run.sh
	bash conformance/rust-zmq/run.sh
	bash conformance/rust-zmq/crate-tests.sh
	bash conformance/node-zeromq.sh
	bash conformance/libzmq-tests/run.sh system

clean:
	$(CARGO) clean
	rm -rf dist bench/out
