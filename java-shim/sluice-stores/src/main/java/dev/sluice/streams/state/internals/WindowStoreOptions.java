package dev.sluice.streams.state.internals;

/**
 * What a window store supplier fixes: Kafka Streams' {@code WindowBytesStoreSupplier} parameters, and which
 * of Kafka Streams' two window store layouts the store has.
 *
 * @param retentionPeriod  how long windows stay readable after stream time passes their start (ms)
 * @param segmentInterval  width of the segments expired windows are dropped in (ms)
 * @param windowSize       window length, giving each window its end (ms)
 * @param retainDuplicates keep every put (stream-stream joins) instead of overwriting
 * @param layout           the order records are kept and scanned in
 */
record WindowStoreOptions(long retentionPeriod, long segmentInterval, long windowSize, boolean retainDuplicates,
                          Layout layout) {

    /** Kafka Streams' window store layouts. */
    enum Layout {
        /** By key, then window start: Kafka Streams' segmented window store. */
        KEY_ORDERED,
        /** By window start, then key: Kafka Streams' time-ordered store, of emit-final aggregations. */
        TIME_ORDERED,
        /** Time-ordered, with a key-first index for key lookups (emit-final sliding windows). */
        TIME_ORDERED_INDEXED;

        boolean timeOrdered() {
            return this != KEY_ORDERED;
        }
    }
}
