/**
 * Kafka Streams applications for the topologies the examples lack, written against Kafka Streams'
 * public API only, as a user would write them. The parity test runs each one on Apache Kafka Streams
 * and on Sluice and compares their outputs; each app's output is a function of its input alone (no
 * record cache, no wall-clock emission throttle), so that any difference is the runtime's.
 */
package dev.sluice.compat.parity.apps;
