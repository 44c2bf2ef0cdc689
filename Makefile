# Sluice's front door. Every target builds what it needs; see README.md.

CARGO_TARGET_DIR ?= $(HOME)/.cache/sluice/cargo-target
export CARGO_TARGET_DIR
MVN := mvn -B -ntp -Dcargo.target.dir=$(CARGO_TARGET_DIR)

.PHONY: test demo broker build

## test: build everything and run every test, with a summary line
test:
	scripts/run-tests

## demo: word count on Sluice against a Kafka broker the demo starts itself
demo: build
	java -cp examples/target/classes:$$(cat examples/target/runtime.classpath) dev.sluice.examples.demo.Demo

## broker: a local Kafka broker in the foreground; prints bootstrap.servers=... when ready
broker: build
	compat-tests/local-broker/run-broker

## build: the native library and every jar, installed into the local Maven repository
build:
	@scripts/check-tools
	$(MVN) -q install -DskipTests
