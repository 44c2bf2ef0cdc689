package dev.sluice.streams.state.internals;

import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * A native scan whose framed keys decode to another key type: windowed keys for window and session
 * stores. Closing it closes the scan.
 *
 * @param <K> the decoded key
 */
class KeyMappingIterator<K> implements KeyValueIterator<K, byte[]> {

    private final NativeKeyValueIterator entries;
    private final Function<Bytes, K> decodeKey;

    KeyMappingIterator(final NativeKeyValueIterator entries, final Function<Bytes, K> decodeKey) {
        this.entries = entries;
        this.decodeKey = decodeKey;
    }

    @Override
    public boolean hasNext() {
        return entries.hasNext();
    }

    @Override
    public KeyValue<K, byte[]> next() {
        final KeyValue<Bytes, byte[]> entry = entries.next();
        return KeyValue.pair(decodeKey.apply(entry.key), entry.value);
    }

    @Override
    public K peekNextKey() {
        return decodeKey.apply(entries.peekNextKey());
    }

    @Override
    public void close() {
        entries.close();
    }
}
