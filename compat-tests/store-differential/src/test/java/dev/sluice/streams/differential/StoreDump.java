package dev.sluice.streams.differential;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlySessionStore;
import org.apache.kafka.streams.state.SessionStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.TimestampedKeyValueStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedWindowStore;
import org.apache.kafka.streams.state.TimestampedWindowStoreWithHeaders;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;

/**
 * A store's contents as lines of text, read through {@link TopologyTestDriver}'s typed getters: the
 * same path an application's tests take, so the typed layers above the bytes stores are exercised
 * too. Session and versioned stores cannot list their keys, so they are asked about every key of the
 * input (and versioned stores at every input timestamp).
 */
final class StoreDump {

    private StoreDump() {
    }

    static List<String> contents(final TopologyTestDriver driver, final String name, final StateStore store, final InputScript input) {
        switch (StoreKind.of(store)) {
            case KEY_VALUE:
                if (store instanceof TimestampedKeyValueStoreWithHeaders) {
                    return lines(() -> driver.getTimestampedKeyValueStoreWithHeaders(name).all());
                }
                if (store instanceof TimestampedKeyValueStore) {
                    return lines(() -> driver.getTimestampedKeyValueStore(name).all());
                }
                return lines(() -> driver.getKeyValueStore(name).all());
            case WINDOW:
                if (store instanceof TimestampedWindowStoreWithHeaders) {
                    return lines(() -> driver.getTimestampedWindowStoreWithHeaders(name).all());
                }
                if (store instanceof TimestampedWindowStore) {
                    return lines(() -> driver.getTimestampedWindowStore(name).all());
                }
                return lines(() -> driver.getWindowStore(name).all());
            case SESSION:
                return store instanceof SessionStoreWithHeaders
                    ? sessions(driver.<String, Object>getSessionStoreWithHeaders(name), input)
                    : sessions(driver.<String, Object>getSessionStore(name), input);
            case VERSIONED:
                return versions(driver.getVersionedKeyValueStore(name), input);
            default:
                // A suppression buffer: Kafka Streams-internal, its contents show in the outputs.
                return List.of();
        }
    }

    private static List<String> sessions(final ReadOnlySessionStore<String, ?> store, final InputScript input) {
        final List<String> lines = new ArrayList<>();
        for (final String key : input.keys()) {
            lines.addAll(lines(() -> store.fetch(key)));
        }
        return lines;
    }

    private static <K, V> List<String> lines(final Supplier<KeyValueIterator<K, V>> open) {
        final List<String> lines = new ArrayList<>();
        try (KeyValueIterator<K, V> entries = open.get()) {
            while (entries.hasNext()) {
                final KeyValue<K, V> entry = entries.next();
                lines.add(render(entry.key) + " -> " + entry.value);
            }
        }
        return lines;
    }

    private static String render(final Object key) {
        if (key instanceof Windowed<?> windowed) {
            return windowed.key() + "@[" + windowed.window().start() + "," + windowed.window().end() + ")";
        }
        return String.valueOf(key);
    }

    private static List<String> versions(final VersionedKeyValueStore<Object, Object> store, final InputScript input) {
        final List<String> lines = new ArrayList<>();
        for (final String key : input.keys()) {
            lines.add(key + " latest -> " + render(store.get(key)));
            for (final long asOf : input.timestamps()) {
                lines.add(key + " as of " + asOf + " -> " + render(store.get(key, asOf)));
            }
        }
        return lines;
    }

    private static String render(final VersionedRecord<Object> record) {
        return record == null ? "null" : record.value() + " valid [" + record.timestamp() + "," + record.validTo() + ")";
    }
}
