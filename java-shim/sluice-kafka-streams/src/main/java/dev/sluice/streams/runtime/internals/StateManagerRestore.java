package dev.sluice.streams.runtime.internals;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;

/**
 * Kafka Streams' own restore path of a {@link ProcessorStateManager}: the records of a changelog
 * partition go through the record converter into the restore callback its store registered (a custom
 * store's as much as a built-in one's), and the store's changelog offset advances. Kafka Streams calls it
 * from its changelog reader inside its package; Sluice's engine reads the changelogs, so this class opens
 * the two package-private methods involved. The Kafka Streams classes are those of this artifact, so
 * their signatures are fixed.
 */
final class StateManagerRestore {

    private static final Method STORE_METADATA;
    private static final Method RESTORE;

    static {
        try {
            final Class<?> storeMetadata =
                Class.forName(ProcessorStateManager.class.getName() + "$StateStoreMetadata");
            STORE_METADATA = ProcessorStateManager.class.getDeclaredMethod("storeMetadata", TopicPartition.class);
            STORE_METADATA.setAccessible(true);
            RESTORE = ProcessorStateManager.class.getDeclaredMethod("restore", storeMetadata, List.class, OptionalLong.class);
            RESTORE.setAccessible(true);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private StateManagerRestore() {
    }

    /** Restores {@code records}, all of {@code changelog}, into the store that changelog belongs to. */
    static void restore(final ProcessorStateManager stateManager,
                        final TopicPartition changelog,
                        final List<ConsumerRecord<byte[], byte[]>> records) {
        try {
            final Object store = STORE_METADATA.invoke(stateManager, changelog);
            if (store == null) {
                throw new IllegalStateException("No store of this task has changelog " + changelog);
            }
            RESTORE.invoke(stateManager, store, records, OptionalLong.empty());
        } catch (final InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            if (e.getCause() instanceof Error) {
                throw (Error) e.getCause();
            }
            throw new IllegalStateException(e.getCause());
        } catch (final IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
