package dev.sluice.streams.runtime.internals;

import java.util.function.Supplier;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.WindowedSum;
import org.apache.kafka.streams.processor.internals.StreamThread;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.processor.internals.metrics.ThreadMetrics;

/**
 * Kafka Streams' thread-level metrics ({@link ThreadMetrics}: group {@code stream-thread-metrics}, tag
 * {@code thread-id}) of one engine thread, recorded from its tasks' upcalls once per batch, not per record.
 *
 * <p>A stream thread records its loop's phases; the engine's loop is in Rust, so the phases are the
 * upcalls: process per batch handed to a task, punctuate per punctuation upcall that punctuated, commit
 * per task from its flush to the end of its commit. The engine reports each turn of its loop too: the poll
 * sensors and the phase ratios come from those, the ratios over the same windows as Kafka Streams' (the
 * metrics' sample windows). The thread's state is the stream thread state its rebalances amount to
 * ({@link EngineThreadAssignments}); its blocked time, which Kafka Streams sums from its Java clients'
 * metrics, is the time the engine thread spent waiting in its polls.
 */
final class EngineThreadMetrics {

    private final String threadId;
    private final StreamsMetricsImpl metrics;
    private final Sensor processRate;
    private final Sensor processLatency;
    private final Sensor processRecords;
    private final Sensor punctuate;
    private final Sensor commit;
    private final Sensor taskCreated;
    private final Sensor taskClosed;
    private final Sensor poll;
    private final Sensor pollRecords;
    private final Sensor pollRatio;
    private final Sensor processRatio;
    private final Sensor punctuateRatio;
    private final Sensor commitRatio;
    private final MetricConfig windows;
    private final WindowedSum pollTime = new WindowedSum();
    private final WindowedSum processTime = new WindowedSum();
    private final WindowedSum punctuateTime = new WindowedSum();
    private final WindowedSum commitTime = new WindowedSum();
    private final WindowedSum turnTime = new WindowedSum();
    private final EngineStateUpdaterMetrics stateUpdater;
    // Written by the engine thread only, read by the gauge from any thread.
    private volatile long blockedNs;

    /**
     * Registers the metrics of engine thread {@code threadId} of the instance {@code processId}, whose
     * stream thread state {@code state} tells (a {@link StreamThread.State} name).
     */
    EngineThreadMetrics(final String threadId, final StreamsMetricsImpl metrics, final long startMs,
                        final String processId, final Supplier<String> state) {
        this.threadId = threadId;
        this.metrics = metrics;
        this.processRate = ThreadMetrics.processRateSensor(threadId, metrics);
        this.processLatency = ThreadMetrics.processLatencySensor(threadId, metrics);
        this.processRecords = ThreadMetrics.processRecordsSensor(threadId, metrics);
        this.punctuate = ThreadMetrics.punctuateSensor(threadId, metrics);
        this.commit = ThreadMetrics.commitSensor(threadId, metrics);
        this.taskCreated = ThreadMetrics.createTaskSensor(threadId, metrics);
        this.taskClosed = ThreadMetrics.closeTaskSensor(threadId, metrics);
        this.poll = ThreadMetrics.pollSensor(threadId, metrics);
        this.pollRecords = ThreadMetrics.pollRecordsSensor(threadId, metrics);
        this.pollRatio = ThreadMetrics.pollRatioSensor(threadId, metrics);
        this.processRatio = ThreadMetrics.processRatioSensor(threadId, metrics);
        this.punctuateRatio = ThreadMetrics.punctuateRatioSensor(threadId, metrics);
        this.commitRatio = ThreadMetrics.commitRatioSensor(threadId, metrics);
        this.windows = metrics.metricsRegistry().config();
        ThreadMetrics.addThreadStartTimeMetric(threadId, metrics, startMs);
        ThreadMetrics.addThreadStateMetric(threadId, metrics, (config, now) -> state.get());
        ThreadMetrics.addThreadStateTelemetryMetric(processId, threadId, metrics,
            (config, now) -> StreamThread.State.valueOf(state.get()).ordinal());
        metrics.addThreadLevelMutableMetric("blocked-time-ns-total",
            "The total time the thread spent blocked on kafka in nanoseconds", threadId,
            (Gauge<Double>) (config, now) -> (double) blockedNs);
        this.stateUpdater = new EngineStateUpdaterMetrics(threadId, metrics);
    }

    /** The thread's state updater metrics: the engine thread restores its tasks itself. */
    EngineStateUpdaterMetrics stateUpdater() {
        return stateUpdater;
    }

    /**
     * One turn of the engine thread's loop, its phases in nanoseconds: the poll latency and records, and
     * each phase's share of the loop's time over the sample windows, as a stream thread records them.
     */
    void loopTurned(final long pollNs, final int polledRecords, final long processNs, final long punctuateNs,
                    final long commitNs, final long totalNs, final long nowMs) {
        blockedNs += pollNs;
        poll.record(millis(pollNs), nowMs);
        if (polledRecords > 0) {
            pollRecords.record(polledRecords, nowMs);
        }
        pollTime.record(windows, millis(pollNs), nowMs);
        processTime.record(windows, millis(processNs), nowMs);
        punctuateTime.record(windows, millis(punctuateNs), nowMs);
        commitTime.record(windows, millis(commitNs), nowMs);
        turnTime.record(windows, millis(totalNs), nowMs);
        final double turns = turnTime.measure(windows, nowMs);
        pollRatio.record(share(pollTime, turns, nowMs), nowMs);
        processRatio.record(share(processTime, turns, nowMs), nowMs);
        punctuateRatio.record(share(punctuateTime, turns, nowMs), nowMs);
        commitRatio.record(share(commitTime, turns, nowMs), nowMs);
    }

    private double share(final WindowedSum phase, final double turns, final long nowMs) {
        return turns > 0.0 ? phase.measure(windows, nowMs) / turns : 0.0;
    }

    private static double millis(final long nanos) {
        return nanos / 1_000_000.0;
    }

    /** A batch of {@code records} (at least one) was processed in {@code latencyMs}; latency is per record, as Kafka Streams records it. */
    void processed(final int records, final long latencyMs, final long nowMs) {
        processRate.record(records, nowMs);
        processLatency.record((double) latencyMs / records, nowMs);
        processRecords.record(records, nowMs);
    }

    void punctuated(final long latencyMs, final long nowMs) {
        punctuate.record(latencyMs, nowMs);
    }

    void committed(final long latencyMs, final long nowMs) {
        commit.record(latencyMs, nowMs);
    }

    void taskCreated() {
        taskCreated.record();
    }

    void taskClosed() {
        taskClosed.record();
    }

    /** Removes the thread's sensors and metrics, as a stream thread does when it shuts down. */
    void remove() {
        metrics.removeAllThreadLevelSensors(threadId);
        metrics.removeAllThreadLevelMetrics(threadId);
        stateUpdater.remove();
    }
}
