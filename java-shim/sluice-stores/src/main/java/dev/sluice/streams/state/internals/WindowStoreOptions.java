package dev.sluice.streams.state.internals;

/**
 * What a window store supplier fixes: Kafka Streams' {@code WindowBytesStoreSupplier} parameters.
 *
 * @param retentionPeriod  how long windows stay readable after stream time passes their start (ms)
 * @param segmentInterval  width of the segments expired windows are dropped in (ms)
 * @param windowSize       window length, giving each window its end (ms)
 * @param retainDuplicates keep every put (stream-stream joins) instead of overwriting
 */
record WindowStoreOptions(long retentionPeriod, long segmentInterval, long windowSize, boolean retainDuplicates) {
}
