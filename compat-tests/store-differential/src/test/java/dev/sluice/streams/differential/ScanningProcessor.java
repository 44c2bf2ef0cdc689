package dev.sluice.streams.differential;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the latest value per key and, from punctuators, reports what range, reverse-range, prefix
 * and full scans see: on stream time every ten seconds, on wall-clock time every fifteen. The
 * stream-time punctuator also evicts keys whose value starts with 9, so scans meet deletes made
 * between commits.
 */
final class ScanningProcessor implements Processor<String, String, String, String> {

    static final String STORE = "latest-by-key";

    private ProcessorContext<String, String> context;
    private KeyValueStore<String, String> store;

    @Override
    public void init(final ProcessorContext<String, String> context) {
        this.context = context;
        this.store = context.getStateStore(STORE);
        context.schedule(Duration.ofSeconds(10), PunctuationType.STREAM_TIME, this::reportRangesAndEvict);
        context.schedule(Duration.ofSeconds(15), PunctuationType.WALL_CLOCK_TIME, this::reportPrefixes);
    }

    @Override
    public void process(final Record<String, String> record) {
        if (record.key() == null) {
            return;
        }
        if (record.value() == null) {
            store.delete(record.key());
        } else {
            store.put(record.key(), record.value());
        }
    }

    private void reportRangesAndEvict(final long timestamp) {
        report("range k1..k5", timestamp, () -> store.range("k1", "k5"));
        report("reverse range k3..k8", timestamp, () -> store.reverseRange("k3", "k8"));
        report("range from k2", timestamp, () -> store.range("k2", null));
        final List<String> evicted = new ArrayList<>();
        try (KeyValueIterator<String, String> all = store.all()) {
            all.forEachRemaining(entry -> {
                if (entry.value.startsWith("9")) {
                    evicted.add(entry.key);
                }
            });
        }
        evicted.forEach(store::delete);
    }

    private void reportPrefixes(final long timestamp) {
        report("prefix k1", timestamp, () -> store.prefixScan("k1", new StringSerializer()));
        report("reverse all", timestamp, store::reverseAll);
    }

    private void report(final String scan, final long timestamp, final Supplier<KeyValueIterator<String, String>> open) {
        final StringBuilder seen = new StringBuilder();
        try (KeyValueIterator<String, String> entries = open.get()) {
            while (entries.hasNext()) {
                final KeyValue<String, String> entry = entries.next();
                seen.append(entry.key).append('=').append(entry.value).append(' ');
            }
        }
        context.forward(new Record<>(scan, seen.toString().trim(), timestamp));
    }
}
