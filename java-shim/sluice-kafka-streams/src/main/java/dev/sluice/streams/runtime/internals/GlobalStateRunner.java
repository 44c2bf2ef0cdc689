package dev.sluice.streams.runtime.internals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.internals.GlobalProcessorContextImpl;
import org.apache.kafka.streams.processor.internals.GlobalStateManagerImpl;
import org.apache.kafka.streams.processor.internals.GlobalStateUpdateTask;
import org.apache.kafka.streams.processor.internals.ProcessorTopology;
import org.apache.kafka.streams.state.internals.SluiceThreadCache;
import org.slf4j.Logger;

/**
 * Keeps the global stores with Kafka Streams' own global machinery, as its global thread does: a
 * {@link GlobalStateUpdateTask} over the global topology, its {@link GlobalStateManagerImpl} and
 * {@link GlobalProcessorContextImpl}, and a record cache. Opening the stores, the global processors (those of
 * {@code addGlobalStore} included), the typed store layers, the deserialization and processing exception
 * handlers and committing the stores with their offsets are therefore Kafka Streams'. The engine's global
 * thread reads the topics and calls this runner with the records; the state manager's consumer is a
 * {@link GlobalTopicsConsumer}, which only tells it the topics' partitions.
 *
 * <p>Restore follows Kafka Streams: a store reprocessed on restore ({@code addGlobalStore} with
 * {@code reprocessOnRestore}) gets its records through the global task's source and processor, records
 * without a key skipped; any other store gets them through its restore callback, converted to its format
 * ({@link GlobalStateManagerRestore}). The engine reports restore progress to the global restore listener.
 *
 * <p>Every call reports a failure to the runtime's listener under the global thread's name before it
 * propagates and stops the engine's global thread.
 */
final class GlobalStateRunner implements GlobalRunner {

    /** The engine reports restoration to the application's listener; the state manager's own restore reads nothing. */
    private static final StateRestoreListener NO_RESTORE_LISTENER = new StateRestoreListener() {
        @Override
        public void onRestoreStart(final TopicPartition partition, final String store, final long start, final long end) {
        }

        @Override
        public void onBatchRestored(final TopicPartition partition, final String store, final long batchEnd, final long restored) {
        }

        @Override
        public void onRestoreEnd(final TopicPartition partition, final String store, final long restored) {
        }
    };

    private final TaskEnvironment environment;
    private final Map<TopicPartition, Long> logStarts;
    private final String threadName;
    private final Logger log;
    private final LogContext logContext;
    private final ProcessorTopology topology;
    /** Global topic -> the store it fills. */
    private final Map<String, String> storeOfTopic = new HashMap<>();

    // The current incarnation of the global task; a wipe replaces them.
    private GlobalStateManagerImpl stateManager;
    private TaskEnvironment.EngineThreadCache cache;
    private volatile GlobalStateUpdateTask task;

    /** Opens the global stores; failures propagate to the caller, which reports them. */
    GlobalStateRunner(final TaskEnvironment environment, final Map<TopicPartition, Long> logStarts) {
        this.environment = environment;
        this.logStarts = Map.copyOf(logStarts);
        this.threadName = Thread.currentThread().getName();
        this.logContext = new LogContext("global-stream-thread [" + threadName + "] ");
        this.log = logContext.logger(GlobalStateRunner.class);
        this.topology = environment.topologyMetadata().globalTaskTopology();
        topology.storeToChangelogTopic().forEach((store, topic) -> storeOfTopic.put(topic, store));
        build();
    }

    @Override
    public byte[] committedOffsets() {
        return guarded(() -> StateRunner.lastOffsetsInStores(stateManager.changelogOffsets()));
    }

    @Override
    public void wipeState() {
        guarded(() -> {
            log.info("Wiping the global state: a store's offset is outside its topic");
            closeTask(true);
            build();
            return null;
        });
    }

    @Override
    public void restore(final ByteBuffer records) {
        guarded(() -> {
            final Map<TopicPartition, Long> restoredTo = new HashMap<>();
            RuntimeFraming.readConsumedRecords(records).forEach((partition, batch) -> {
                final String store = storeOfTopic.get(partition.topic());
                if (topology.storeNameToReprocessOnRestore().getOrDefault(store, Optional.empty()).isPresent()) {
                    for (final ConsumerRecord<byte[], byte[]> record : batch) {
                        if (record.key() != null) {
                            task.update(record);
                        }
                    }
                } else {
                    GlobalStateManagerRestore.restore(stateManager, store, batch);
                }
                restoredTo.put(partition, batch.get(batch.size() - 1).offset() + 1);
            });
            stateManager.updateChangelogOffsets(restoredTo);
            // Restored records are committed data: the stores commit them with their offsets at once, so a
            // long restore neither holds them in memory nor starts over after a crash.
            task.flushState();
            return null;
        });
    }

    @Override
    public void process(final ByteBuffer records) {
        guarded(() -> {
            // As Kafka Streams resizes its global thread's cache with its stream threads'; a cache that
            // shrinks evicts into the stores, on this thread.
            cache.resize(environment.globalCacheBytes());
            for (final List<ConsumerRecord<byte[], byte[]>> batch : RuntimeFraming.readConsumedRecords(records).values()) {
                for (final ConsumerRecord<byte[], byte[]> record : batch) {
                    task.update(record);
                }
            }
            return null;
        });
    }

    @Override
    public void commit() {
        guarded(() -> {
            task.flushState();
            return null;
        });
    }

    @Override
    public void close(final boolean clean) {
        guarded(() -> {
            if (clean) {
                closeTask(false);
            } else {
                task = null;
                // Without a flush: the stores drop what they were not asked to commit.
                stateManager.close();
                cache.close();
            }
            environment.metrics().removeAllThreadLevelSensors(threadName);
            environment.metrics().removeAllThreadLevelMetrics(threadName);
            return null;
        });
    }

    @Override
    public long uncommittedBytes() {
        return guarded(this::currentUncommittedBytes);
    }

    /**
     * The store bytes written since the last commit, for the instance's uncommitted-bytes gauge: read from any
     * thread, and 0 once the stores are closed.
     */
    long currentUncommittedBytes() {
        final GlobalStateUpdateTask current = task;
        return current == null ? 0 : current.approximateNumUncommittedBytes();
    }

    /** A new incarnation of the global task over the stores' committed state, its processors initialised. */
    private void build() {
        final StreamsConfig config = environment.config();
        final GlobalStateManagerImpl manager = new GlobalStateManagerImpl(logContext, environment.time(), topology,
            new GlobalTopicsConsumer(logStarts), environment.stateDirectory(), NO_RESTORE_LISTENER, config);
        final long cacheBytes = environment.globalCacheBytes();
        cache = new TaskEnvironment.EngineThreadCache(
            new SluiceThreadCache(logContext, cacheBytes, environment.metrics()), cacheBytes);
        final GlobalProcessorContextImpl context = new GlobalProcessorContextImpl(
            config, manager, environment.metrics(), cache.cache, environment.time());
        manager.setGlobalProcessorContext(context);
        @SuppressWarnings("deprecation")
        final boolean handleProcessingErrors = config.getBoolean(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG);
        final ProcessingExceptionHandler processingExceptionHandler = handleProcessingErrors ? config.processingExceptionHandler() : null;
        final GlobalStateUpdateTask fresh = new GlobalStateUpdateTask(logContext, topology, context, manager,
            config.deserializationExceptionHandler(), processingExceptionHandler, environment.time(),
            config.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG));
        stateManager = manager;
        try {
            fresh.initialize();
        } catch (final RuntimeException e) {
            // As Kafka Streams' global thread does when it cannot start: the stores opened so far are closed.
            try {
                manager.close();
            } catch (final RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
        // Published once its stores are open, for the gauge that reads it from other threads.
        task = fresh;
    }

    /** Closes the global task, after a last commit unless {@code wipe}, which deletes the global state directory. */
    private void closeTask(final boolean wipe) {
        final GlobalStateUpdateTask closing = task;
        task = null;
        try {
            closing.close(wipe);
        } catch (final IOException e) {
            throw new ProcessorStateException("Could not close the global stores", e);
        } finally {
            cache.close();
        }
    }

    private <T> T guarded(final Supplier<T> upcall) {
        try {
            return upcall.get();
        } catch (final RuntimeException | Error e) {
            environment.reportFailure(e);
            throw e;
        }
    }
}
