package dev.sluice.compat.parity;

/** One record of an application's input; partitioned by its key, as Kafka Streams partitions String keys. */
record InputRecord(String topic, String key, byte[] value, long timestamp) {
}
