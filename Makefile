# Sluice's front door. Every target builds what it needs; see README.md.

CARGO_TARGET_DIR ?= $(HOME)/.cache/sluice/cargo-target
export CARGO_TARGET_DIR
MVN := mvn -B -ntp -Dcargo.target.dir=$(CARGO_TARGET_DIR)

.PHONY: test demo broker build compat compat-fallback soak bench bench-apps bench-failover bench-engine bench-stores

## test: build everything and run every test, with a summary line
test:
	scripts/run-tests

## demo: word count on Sluice against a Kafka broker the demo starts itself
demo: build
	java -cp examples/target/classes:$$(cat examples/target/runtime.classpath) dev.sluice.examples.demo.Demo

## broker: a local Kafka broker in the foreground; prints bootstrap.servers=... when ready
broker: build
	compat-tests/local-broker/run-broker

## compat: Kafka Streams' own tests and the exactly-once crash check, on Apache Kafka Streams and on
## Sluice; writes compat-tests/REPORT.md. COMPAT_PARTS picks the integration tests' parts, comma-separated
## (default: all; the names are in compat-tests/kafka-streams-suite/harness/.../IntegrationParts.java); each
## part run is saved in compat-tests/integration-results, and the report holds every part saved there
COMPAT_HARNESS := compat-tests/kafka-streams-suite/harness
COMPAT_PARTS ?= all
compat: build
	$(MVN) -q test -pl compat-tests/fault-suite -Dtest=EosCrashTest
	java -cp $(COMPAT_HARNESS)/target/classes:$$(cat $(COMPAT_HARNESS)/target/baseline.classpath) \
	    dev.sluice.compat.kafkastreams.CompatMain $(COMPAT_HARNESS)/target $(COMPAT_HARNESS)/target/classes \
	    $(COMPAT_HARNESS)/target/compat-run compat-tests/REPORT.md compat-tests/fault-suite/target/eos-crash-report.md \
	    compat-tests/integration-results "$$(git describe --always --dirty 2>/dev/null || echo unknown)" "$(COMPAT_PARTS)"

## compat-fallback: the same suites with Sluice's native library taken off the class path, as on a platform
## the jar carries none for, where applications run on Apache Kafka Streams' own runtime (which the drop-in
## jar carries); writes compat-tests/REPORT-FALLBACK.md. COMPAT_PARTS picks the integration parts as for
## compat (default: topics-and-metadata); saved apart, in compat-tests/integration-results-fallback. A part
## make compat saved keeps its Apache outcomes from there, so only the fallback runs (half the time)
compat-fallback: COMPAT_PARTS = topics-and-metadata
compat-fallback: build
	java -Dcompat.sluice.withoutNativeLibrary=true -Dcompat.baseline.savedIn=compat-tests/integration-results \
	    -cp $(COMPAT_HARNESS)/target/classes:$$(cat $(COMPAT_HARNESS)/target/baseline.classpath) \
	    dev.sluice.compat.kafkastreams.CompatMain $(COMPAT_HARNESS)/target $(COMPAT_HARNESS)/target/classes \
	    $(COMPAT_HARNESS)/target/compat-run-fallback compat-tests/REPORT-FALLBACK.md /dev/null \
	    compat-tests/integration-results-fallback "$$(git describe --always --dirty 2>/dev/null || echo unknown)" "$(COMPAT_PARTS)"

## soak: the fault suite at full size on Sluice and on Apache Kafka Streams: 100 SIGKILLs while input flows,
## the broker gone for 30 s and 3 min, damaged and foreign state, two instances of which one dies, poison input and bad
## records; writes compat-tests/FAULTS.md (an hour or
## more; make test runs a small slice of it on Sluice alone)
FAULT_SUITE := compat-tests/fault-suite
SOAK_OPTIONS ?= -Deos.kills=100 -Deos.records=20000 -Deos.inputSeconds=500 -Dfaults.records=5000 -Dfaults.outageSeconds=30,180 \
    -Dfaults.compareWith=APACHE
soak: build
	rm -rf $(FAULT_SUITE)/target/fault-suite-report
	$(MVN) test -pl $(FAULT_SUITE) -Dmaven.test.failure.ignore=true $(SOAK_OPTIONS)
	{ cat $(FAULT_SUITE)/FAULTS-HEADER.md; echo; cat $(FAULT_SUITE)/target/eos-crash-report.md; \
	  for section in $(FAULT_SUITE)/target/fault-suite-report/*.md; do echo; cat $$section; done; } > compat-tests/FAULTS.md

## bench: every benchmark, each beside its Apache Kafka Streams or plain-client counterpart
bench: bench-apps bench-failover bench-stores bench-engine

## bench-apps: the examples timed on Apache Kafka Streams (transactional stores off and on) and on
## Sluice, runs alternated, outputs checked; medians and ratios (sizes: SLUICE_BENCH_* variables,
## see compat-tests/app-benchmark)
APP_BENCH := compat-tests/app-benchmark
bench-apps: build
	java -cp $(APP_BENCH)/target/test-classes:$$(cat $(APP_BENCH)/target/harness.classpath) \
	    dev.sluice.bench.apps.AppBenchmark $(APP_BENCH)/target $(APP_BENCH)/target/app-benchmark

## bench-failover: two instances of the word count, one killed; the time until the survivor has processed
## everything again, with and without a standby replica, on Apache Kafka Streams and on Sluice (sizes:
## SLUICE_FAILOVER_KEYS, SLUICE_FAILOVER_ROUNDS; see compat-tests/app-benchmark)
bench-failover: build
	java -cp $(APP_BENCH)/target/test-classes:$$(cat $(APP_BENCH)/target/harness.classpath) \
	    dev.sluice.bench.apps.FailoverBenchmark $(APP_BENCH)/target $(APP_BENCH)/target/failover-benchmark

## bench-engine: engine throughput and CPU beside an rdkafka copy loop, on a broker it starts itself
## (SLUICE_BENCH_RECORDS, default 5000000)
bench-engine:
	@scripts/check-tools
	compat-tests/local-broker/with-broker cargo bench --profile release -p sluice-core --bench engine_throughput

## bench-stores: JMH get/put/range of Sluice's RocksDB key-value store against Kafka Streams' RocksDBStore,
## then the same operations on both in alternating rounds in one JVM (a few minutes; JMH options with
## JMH_ARGS, e.g. JMH_ARGS="-f 1 -i 10")
bench-stores:
	@scripts/check-tools
	$(MVN) -Pbenchmarks -DskipTests $(if $(JMH_ARGS),-Djmh.args="$(JMH_ARGS)") -pl compat-tests/store-differential -am verify

## build: the native library and every jar, installed into the local Maven repository
build:
	@scripts/check-tools
	$(MVN) -q install -DskipTests
