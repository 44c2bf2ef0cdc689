package dev.sluice.bench.apps;

/**
 * An input record: a partition of its own when it must land on one (else the key's), and its event
 * timestamp (a paced run stamps records that follow the wall clock when it sends them).
 */
record BenchRecord(String topic, Integer partition, byte[] key, byte[] value, long timestamp) {
}
