package dev.sluice.streams.state.internals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;

/** Opens bytes stores the way a task does, against Kafka Streams' mock processor context. */
final class StoreFixture {

    static final String STORE_NAME = "store";

    final MockProcessorContext<Object, Object> context;

    StoreFixture(final Path stateDir) {
        this(stateDir, new Properties());
    }

    StoreFixture(final Path stateDir, final Properties extra) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-store-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.putAll(extra);
        context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
    }

    SluiceKeyValueBytesStore open(final KeyValueBackend backend) {
        return open(backend, NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
    }

    SluiceKeyValueBytesStore open(final KeyValueBackend backend, final int chunkBytes) {
        return open(backend, KeyValueLayout.PLAIN, chunkBytes);
    }

    SluiceKeyValueBytesStore open(final KeyValueBackend backend, final KeyValueLayout layout, final int chunkBytes) {
        return init(layout.create(STORE_NAME, backend, chunkBytes));
    }

    /** Initialises {@code store} as a task would, with itself as the root store. */
    <S extends org.apache.kafka.streams.processor.StateStore> S init(final S store) {
        store.init(context.getStateStoreContext(), store);
        return store;
    }

    static Bytes bytes(final String s) {
        return Bytes.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] value(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(final byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /** Drains and closes {@code iterator}, as "key=value" strings. */
    static List<String> drain(final KeyValueIterator<Bytes, byte[]> iterator) {
        final List<String> entries = new ArrayList<>();
        try (iterator) {
            while (iterator.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = iterator.next();
                entries.add(string(entry.key.get()) + "=" + string(entry.value));
            }
        }
        return entries;
    }
}
