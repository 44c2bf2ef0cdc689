package dev.sluice.streams.runtime.internals;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.processor.StateRestoreCallback;
import org.apache.kafka.streams.processor.internals.GlobalStateManagerImpl;
import org.apache.kafka.streams.processor.internals.StateRestoreCallbackAdapter;
import org.apache.kafka.streams.state.internals.RecordConverter;

/**
 * Kafka Streams' own restore of a global store that is not reprocessed on restore: the records of its topic
 * go through the record converter its format needs into the restore callback it registered with the
 * {@link GlobalStateManagerImpl} (a custom store's as much as a built-in one's). Kafka Streams does this inside
 * the state manager's own restore loop, which reads with the global consumer; Sluice's engine reads the
 * topics, so this class opens the state manager's record of each store's callback and converter. The Kafka
 * Streams classes are those of this artifact, so their layout is fixed.
 */
final class GlobalStateManagerRestore {

    private static final Field STORE_METADATA;
    private static final Field RESTORE_CALLBACK;
    private static final Field RECORD_CONVERTER;

    static {
        try {
            final Class<?> storeMetadata =
                Class.forName(GlobalStateManagerImpl.class.getName() + "$StateStoreMetadata");
            STORE_METADATA = GlobalStateManagerImpl.class.getDeclaredField("storeMetadata");
            STORE_METADATA.setAccessible(true);
            RESTORE_CALLBACK = storeMetadata.getDeclaredField("restoreCallback");
            RESTORE_CALLBACK.setAccessible(true);
            RECORD_CONVERTER = storeMetadata.getDeclaredField("recordConverter");
            RECORD_CONVERTER.setAccessible(true);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private GlobalStateManagerRestore() {
    }

    /**
     * Restores {@code records} of the topic of global store {@code store} into it; records without a key are
     * skipped, as Kafka Streams skips them.
     */
    static void restore(final GlobalStateManagerImpl stateManager,
                        final String store,
                        final List<ConsumerRecord<byte[], byte[]>> records) {
        try {
            final Object metadata = ((Map<?, ?>) STORE_METADATA.get(stateManager)).get(store);
            if (metadata == null) {
                throw new IllegalStateException("No global store " + store + " was registered");
            }
            final StateRestoreCallback callback = (StateRestoreCallback) RESTORE_CALLBACK.get(metadata);
            final RecordConverter converter = (RecordConverter) RECORD_CONVERTER.get(metadata);
            final List<ConsumerRecord<byte[], byte[]>> converted = new ArrayList<>(records.size());
            for (final ConsumerRecord<byte[], byte[]> record : records) {
                if (record.key() != null) {
                    converted.add(converter.convert(record));
                }
            }
            StateRestoreCallbackAdapter.adapt(callback).restoreBatch(converted);
        } catch (final IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
