package org.apache.kafka.streams.state.internals;

import java.util.Arrays;
import java.util.Objects;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;

/**
 * A record cache entry read back from its frame ({@link CacheEntryFrames}): the value at once, the record
 * context decoded from the rest of the frame only when someone asks for it. A caching store's read, by far
 * the most frequent, wants the value alone; decoding every context would allocate its headers, source key
 * and value on each read for nothing.
 *
 * <p>Answers as an {@link LRUCacheEntry} built from the same fields would: the same value, context, dirty
 * flag and size.
 */
final class FramedCacheEntry extends LRUCacheEntry {

    /**
     * The headers of the placeholder context {@link LRUCacheEntry} keeps for this entry, which {@link
     * #context()} replaces: read-only and shared, so that the placeholder allocates no headers of its own.
     */
    private static final RecordHeaders NO_HEADERS = readOnlyEmptyHeaders();

    private final byte[] contextFrame;
    private final String topic;
    private ProcessorRecordContext context;

    FramedCacheEntry(final byte[] value, final byte[] contextFrame, final String topic, final boolean dirty) {
        super(value, NO_HEADERS, dirty, -1, -1, -1, "", null, null);
        this.contextFrame = contextFrame;
        this.topic = topic;
    }

    @Override
    long size() {
        return 1 + new ContextualRecord(value(), context()).residentMemorySizeEstimate();
    }

    @Override
    public ProcessorRecordContext context() {
        if (context == null) {
            context = CacheEntryFrames.readContext(contextFrame, topic);
        }
        return context;
    }

    @Override
    public boolean equals(final Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || getClass() != o.getClass()) {
            return false;
        }
        final FramedCacheEntry that = (FramedCacheEntry) o;
        return isDirty() == that.isDirty() && Arrays.equals(value(), that.value())
            && Objects.equals(context(), that.context());
    }

    private static RecordHeaders readOnlyEmptyHeaders() {
        final RecordHeaders headers = new RecordHeaders();
        headers.setReadOnly();
        return headers;
    }

    @Override
    public int hashCode() {
        // As LRUCacheEntry's: a record context holds mutable headers and refuses to be hashed.
        return super.hashCode();
    }
}
