package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.OffsetFraming;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.internals.StreamsConfigUtils;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.ProcessorContextImpl;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;
import org.apache.kafka.streams.processor.internals.ProcessorTopology;
import org.apache.kafka.streams.processor.internals.RecordCollectorImpl;
import org.apache.kafka.streams.processor.internals.StreamTask;
import org.apache.kafka.streams.processor.internals.StreamsProducer;
import org.apache.kafka.streams.processor.internals.Task;
import org.apache.kafka.streams.processor.internals.TaskMetadataImpl;
import org.apache.kafka.streams.state.internals.ThreadCache;
import org.slf4j.Logger;

/**
 * Runs one task with Kafka Streams' own machinery, as a stream thread's task manager does and as
 * {@code TopologyTestDriver} does: a {@link StreamTask} over the sub-topology, its
 * {@link ProcessorStateManager}, {@link ProcessorContextImpl} and {@link RecordCollectorImpl}, the thread's
 * record cache. Processing, punctuation, caches, exception handlers, store layers and stream-time metadata
 * are therefore Kafka Streams'. What the engine owns reaches the task through two adapters: the records
 * it sends are kept by a {@link BufferingProducer} and returned to the engine in batches, and its main
 * consumer is a {@link TaskInputConsumer} that knows the committed offsets of its inputs.
 *
 * <p>The producer runs non-transactionally on this side (the engine runs the transaction); under
 * exactly-once the task still knows it is exactly-once, with transactional state stores.
 *
 * <p>A rollback (aborted transaction) closes the task dirty and rebuilds it from its stores' committed
 * state and the last committed input offsets: Sluice's stores drop uncommitted writes on a dirty close,
 * and the caches and processors lose their state with the task, as Kafka Streams loses them when it
 * closes a task dirty after an aborted transaction.
 *
 * <p>Every upcall reports a failure to the runtime's listener before it propagates and stops the
 * engine thread.
 */
final class StreamTaskRunner implements TaskRunner {

    private final TaskEnvironment environment;
    private final TaskId id;
    private final String thread;
    private final Logger log;
    private final LogContext logContext;
    private final Map<TopicPartition, OffsetAndMetadata> committedInputs;
    private final EngineThreadMetrics threadMetrics;
    private volatile Set<TopicPartition> inputPartitions = Set.of();

    // The parts of the current incarnation of the task; a rollback or wipe replaces them.
    private volatile StreamTask task;
    private ProcessorStateManager stateManager;
    private BufferingProducer producer;
    private RecordCollectorImpl recordCollector;
    private ProcessorContextImpl context;
    private TaskInputConsumer consumer;
    private Map<TopicPartition, OffsetAndMetadata> preparedOffsets = Map.of();
    private boolean running;
    // Between creation and restored() or close(): counted by the thread's active-restoring-tasks.
    private boolean restoring;
    private final Set<TopicPartition> changelogs;
    // When the flush of a commit with something to commit began, for the thread's commit latency; -1: none.
    private long commitStartMs = -1;

    /**
     * Creates the task and opens its stores, or takes those of {@code promoted}, its standby replica on this thread,
     * over (null: none); failures propagate to the caller, which reports them.
     */
    StreamTaskRunner(final TaskEnvironment environment,
                     final TaskId id,
                     final Map<TopicPartition, OffsetAndMetadata> committedInputs,
                     final StandbyTaskRunner promoted) {
        this.environment = environment;
        this.id = id;
        this.thread = Thread.currentThread().getName();
        this.logContext = new LogContext("stream-thread [" + thread + "] task [" + id + "] ");
        this.log = logContext.logger(StreamTaskRunner.class);
        this.committedInputs = new HashMap<>(committedInputs);
        this.threadMetrics = environment.threadMetrics();
        build(promoted == null ? null : promoted.handOver(logContext));
        environment.stateOpened(id);
        changelogs = Set.copyOf(stateManager.changelogOffsets().keySet());
        restoring = true;
        environment.restoring(this, changelogs);
        threadMetrics.stateUpdater().taskRestoring();
    }

    TaskId id() {
        return id;
    }

    /** The engine thread that runs the task. */
    String thread() {
        return thread;
    }

    /**
     * Kafka Streams' metadata of this task: its inputs, and their committed and highest fetched offsets
     * as the task's own maps, which go on changing as the task runs (-1 for none yet); null once closed.
     */
    TaskMetadata metadata() {
        final StreamTask current = task;
        return current == null ? null : new TaskMetadataImpl(id, inputPartitions, current.committedOffsets(), current.highWaterMark(),
            current.timeCurrentIdlingStarted());
    }

    /** The outermost store called {@code name} of this task (read by interactive queries), or null. */
    StateStore store(final String name) {
        final StreamTask current = task;
        return current == null ? null : current.store(name);
    }

    @Override
    public byte[] committedChangelogOffsets() {
        return guarded(() -> StateRunner.lastOffsetsInStores(stateManager.changelogOffsets()));
    }

    @Override
    public void wipeState() {
        guarded(() -> {
            log.info("Wiping the local state of the task: its stores' offsets are outside their changelogs");
            closeDirtyQuietly();
            environment.wipeTaskDirectory(id);
            build(null);
            return null;
        });
    }

    @Override
    public void restore(final ByteBuffer records) {
        guarded(() -> {
            final Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byChangelog =
                RuntimeFraming.readConsumedRecords(records);
            byChangelog.forEach((changelog, batch) -> StateManagerRestore.restore(stateManager, changelog, batch));
            threadMetrics.stateUpdater().restored(byChangelog.values().stream().mapToInt(List::size).sum(),
                environment.time().milliseconds());
            // Restored records are committed data: the stores commit them with their offsets at once, so
            // a long restore neither holds them in memory nor starts over after a crash.
            stateManager.commit();
            return null;
        });
    }

    @Override
    public void restored() {
        guarded(() -> {
            stateManager.commit();
            startRunning();
            stopRestoring();
            return null;
        });
    }

    @Override
    public byte[][] process(final ByteBuffer records) {
        return guarded(() -> {
            final long startMs = environment.time().milliseconds();
            RuntimeFraming.readConsumedRecords(records).forEach((partition, batch) -> {
                task.addRecords(partition, batch);
                final long lastOffset = batch.get(batch.size() - 1).offset();
                consumer.handedOver(partition, lastOffset);
                task.updateNextOffsets(partition, new OffsetAndMetadata(lastOffset + 1));
                // The highest offset fetched, which Kafka Streams' threads report as the task's end offset.
                task.updateEndOffsets(partition, lastOffset);
            });
            recordProcessed(processBuffered(), startMs);
            return produced();
        });
    }

    @Override
    public byte[] fullInputs() {
        return guarded(() -> {
            if (!running) {
                return OffsetFraming.write(Map.of());
            }
            // Kafka Streams resumes the inputs whose queue has room again before each poll.
            task.resumePollingForPartitionsWithAvailableSpace();
            final Map<TopicPartition, Long> full = new LinkedHashMap<>();
            consumer.paused().forEach(partition -> full.put(partition, null));
            return OffsetFraming.write(full);
        });
    }

    @Override
    public boolean commitRequested() {
        return guarded(() -> running && task.commitRequested() && task.commitNeeded());
    }

    @Override
    public void updateLags(final byte[] lags) {
        guarded(() -> {
            consumer.lags(OffsetFraming.read(lags));
            return null;
        });
    }

    @Override
    public byte[][] punctuate() {
        return guarded(() -> {
            if (!running) {
                return RuntimeFraming.emptyRecords();
            }
            final long startMs = environment.time().milliseconds();
            long processStartMs = startMs;
            if (task.maybePunctuateSystemTime()) {
                processStartMs = environment.time().milliseconds();
                threadMetrics.punctuated(processStartMs - startMs, processStartMs);
            }
            // Records held back for max.task.idle.ms become processable as wall-clock time passes.
            recordProcessed(processBuffered(), processStartMs);
            return produced();
        });
    }

    @Override
    public byte[][] producedBeforeFailure() {
        return guarded(this::produced);
    }

    @Override
    public byte[][] flush() {
        return guarded(() -> {
            final boolean commitNeeded = task.commitNeeded();
            commitStartMs = commitNeeded ? environment.time().milliseconds() : -1;
            final Map<TopicPartition, OffsetAndMetadata> offsets = commitNeeded ? task.prepareCommit(true) : Map.of();
            preparedOffsets = offsets == null ? Map.of() : offsets;
            return produced();
        });
    }

    @Override
    public byte[][] sendFailed(final long index, final byte[] record, final int errorCode, final String message) {
        return guarded(() -> {
            final ProducerRecord<byte[], byte[]> failed = RuntimeFraming.readProducedRecords(record).get(0);
            final Exception exception = Errors.forCode((short) errorCode).exception(message);
            final SendOrigins.Origin origin = producer.origin(index);
            // Kafka Streams' collector reads the error handler's context from the task's context; it is set
            // back to the record and node that produced the failed record while the collector handles it.
            final ProcessorRecordContext current = context.recordContext();
            final ProcessorNode<?, ?, ?, ?> currentNode = context.currentNode();
            context.setRecordContext(origin.record());
            context.setCurrentNode(origin.node());
            try {
                producer.failNextSend(exception);
                recordCollector.send(failed.key(), failed.value(), origin.node() == null ? null : origin.node().name(),
                    context, failed);
                // The collector raises what its callback decided (the handler's FAIL, a fatal error) at its next flush.
                recordCollector.flush();
            } finally {
                context.setRecordContext(current);
                context.setCurrentNode(currentNode);
            }
            return produced();
        });
    }

    @Override
    public void sendsAnswered(final long below) {
        guarded(() -> {
            producer.answered(below);
            return null;
        });
    }

    @Override
    public byte[] committableOffsets() {
        return guarded(() -> RuntimeFraming.inputs(preparedOffsets));
    }

    @Override
    public void committed(final byte[] deliveredOffsets) {
        guarded(() -> {
            final Set<TopicPartition> changelogs = task.changelogPartitions();
            final Map<TopicPartition, Long> written = new HashMap<>();
            OffsetFraming.read(deliveredOffsets).forEach((partition, offset) -> {
                if (offset != null && changelogs.contains(partition)) {
                    written.put(partition, offset);
                }
            });
            // What a stream thread learns from its producer's send callbacks, the engine tells after the
            // commit; the stores then commit with these offsets.
            stateManager.updateChangelogOffsets(written);
            task.postCommit(true);
            consumer.committed(preparedOffsets);
            preparedOffsets.forEach((partition, offset) -> task.updateCommittedOffsets(partition, offset.offset()));
            producer.committed();
            committedInputs.putAll(preparedOffsets);
            preparedOffsets = Map.of();
            if (commitStartMs >= 0) {
                final long nowMs = environment.time().milliseconds();
                threadMetrics.committed(nowMs - commitStartMs, nowMs);
                commitStartMs = -1;
            }
            return null;
        });
    }

    @Override
    public void rolledBack(final String cause) {
        guarded(() -> {
            log.warn("Rebuilding the task from its committed state after an aborted transaction: {}", cause);
            final boolean wasRunning = running;
            final StreamTask previous = task;
            closeDirtyQuietly();
            build(null);
            // The task's metadata goes on from where the rolled back incarnation's left off.
            previous.committedOffsets().forEach(task::updateCommittedOffsets);
            previous.highWaterMark().forEach(task::updateEndOffsets);
            if (wasRunning) {
                startRunning();
            }
            return null;
        });
    }

    @Override
    public void close(final boolean clean) {
        guarded(() -> {
            environment.stopped(this);
            if (clean) {
                task.suspend();
                task.closeClean();
            } else {
                closeDirtyQuietly();
            }
            environment.stateClosed(id, stateManager.changelogOffsets());
            task = null;
            threadMetrics.taskClosed();
            stopRestoring();
            return null;
        });
    }

    @Override
    public long uncommittedBytes() {
        return guarded(task::approximateNumUncommittedBytes);
    }

    /**
     * The store bytes written since the last commit, for the instance's uncommitted-bytes gauge: read
     * from any thread, and 0 for a task between incarnations.
     */
    long currentUncommittedBytes() {
        final StreamTask current = task;
        return current == null ? 0 : current.approximateNumUncommittedBytes();
    }

    /** A new incarnation of the task over the stores' committed state, initialised (stores open) but not restored. */
    /** A new incarnation of the task, over the stores {@code handedOver} by its standby replica, if not null. */
    private void build(final StandbyTaskRunner.HandedOver handedOver) {
        try {
            create(handedOver);
            task.initializeIfNeeded();
        } catch (final TaskCorruptedException corrupted) {
            // Kafka Streams wipes a corrupted task's state and builds it anew; the engine then restores it.
            log.warn("The task's local state is corrupted; wiping it", corrupted);
            closeDirtyQuietly();
            environment.wipeTaskDirectory(id);
            create(null);
            task.initializeIfNeeded();
        }
        running = false;
    }

    private void create(final StandbyTaskRunner.HandedOver handedOver) {
        final StreamsConfig config = environment.config();
        final ThreadCache cache = environment.threadCache();
        final ProcessorTopology topology;
        if (handedOver == null) {
            topology = environment.topologyMetadata().buildSubtopology(id);
            inputPartitions = TaskEnvironment.inputPartitions(topology, id);
            stateManager = environment.stateManager(id, Task.TaskType.ACTIVE, topology, inputPartitions, logContext);
            context = new ProcessorContextImpl(id, config, stateManager, environment.metrics(), cache);
        } else {
            // The stores stay registered with their state manager: initializing the task does not open them again,
            // and the task's processors find them there. The task makes the context an active task's.
            topology = handedOver.topology();
            inputPartitions = TaskEnvironment.inputPartitions(topology, id);
            stateManager = handedOver.stateManager();
            context = handedOver.context();
        }
        producer = new BufferingProducer(environment.partitionLookup(), context);
        final StreamsProducer streamsProducer = new StreamsProducer(
            producer, StreamsConfigUtils.ProcessingMode.AT_LEAST_ONCE, environment.time(), logContext);
        recordCollector = new RecordCollectorImpl(
            logContext, id, streamsProducer, config.productionExceptionHandler(), environment.metrics(), topology);
        consumer = new TaskInputConsumer(committedInputs);
        task = new StreamTask(
            id,
            inputPartitions,
            topology,
            consumer,
            environment.taskSettings(),
            environment.metrics(),
            environment.stateDirectory(),
            cache,
            environment.time(),
            stateManager,
            recordCollector,
            context,
            logContext,
            false);
    }

    /**
     * Records restore progress in the task's {@code restore-*} metrics, as Kafka Streams' changelog reader does:
     * at the start of a changelog partition the offsets left to restore, then the records restored and the
     * offsets passed.
     */
    void recordRestoration(final long records, final long offsets, final boolean starting) {
        final StreamTask current = task;
        if (current != null) {
            current.recordRestoration(environment.time(), records, offsets, starting);
        }
    }

    private void stopRestoring() {
        if (restoring) {
            restoring = false;
            environment.restoringEnded(this, changelogs);
            threadMetrics.stateUpdater().taskNoLongerRestoring();
        }
    }

    private void startRunning() {
        task.completeRestoration(partitionsToReset -> {
            // The engine resets offsets of partitions without a committed offset itself.
        });
        // Committing a partition nothing was read from keeps its committed offset and metadata.
        committedInputs.forEach((partition, offset) -> {
            if (inputPartitions.contains(partition)) {
                task.updateNextOffsets(partition, offset);
            }
        });
        running = true;
        environment.running(this);
    }

    /**
     * Processes every buffered record that is processable now, with stream-time punctuation after each;
     * returns how many it processed.
     */
    private int processBuffered() {
        if (!running) {
            throw new IllegalStateException("Task " + id + " is not running: it has not been restored");
        }
        task.updateLags();
        final long now = environment.time().milliseconds();
        int processed = 0;
        // A task asks itself whether it is processable before each record, as in Kafka Streams' task executor.
        while (task.process(now)) {
            processed++;
            task.maybePunctuateStreamTime();
        }
        task.maybePunctuateStreamTime();
        return processed;
    }

    private void recordProcessed(final int records, final long startMs) {
        if (records > 0) {
            final long nowMs = environment.time().milliseconds();
            threadMetrics.processed(records, nowMs - startMs, nowMs);
        }
    }

    private byte[][] produced() {
        return producer.drain();
    }

    private void closeDirtyQuietly() {
        environment.stopped(this);
        running = false;
        if (task == null) {
            return;
        }
        try {
            if (task.state() == Task.State.RUNNING) {
                task.prepareCommit(false);
            }
            // Kafka Streams closes only created or suspended tasks; a restoring one is suspended too.
            if (task.state() == Task.State.RUNNING || task.state() == Task.State.RESTORING) {
                task.suspend();
            }
        } catch (final RuntimeException e) {
            log.warn("Suspending the task before closing it dirty failed", e);
        }
        task.closeDirty();
        producer.clear();
    }

    private <T> T guarded(final Supplier<T> upcall) {
        try {
            return upcall.get();
        } catch (final RuntimeException e) {
            final Optional<TaskCorruptedException> corrupted = TaskCorruption.of(e, id);
            if (corrupted.isPresent()) {
                // Not the thread's failure: the engine runs the task again from its committed inputs, as
                // Kafka Streams does, over its stores rolled back to the last commit (a send that timed out
                // under exactly-once) or wiped and restored (stores found corrupt).
                log.warn("The task is corrupted; it goes back to its last commit, its stores rolled back, or wiped and"
                    + " restored where they are corrupt", e);
                throw corrupted.get();
            }
            environment.reportFailure(e);
            throw e;
        } catch (final Error e) {
            environment.reportFailure(e);
            throw e;
        }
    }
}
