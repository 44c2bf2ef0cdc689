package dev.sluice.streams.runtime.internals;

import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.processor.internals.metrics.ThreadMetrics;

/**
 * Kafka Streams' thread-level metrics ({@link ThreadMetrics}: group {@code stream-thread-metrics}, tag
 * {@code thread-id}) of one engine thread, recorded from its tasks' upcalls once per batch, not per record.
 *
 * <p>A stream thread records its loop's phases; the engine's loop is in Rust, so the phases are the
 * upcalls: process per batch handed to a task, punctuate per punctuation upcall that punctuated, commit
 * per task from its flush to the end of its commit. The engine's own polling is not seen here, so the
 * poll sensors, the phase ratios and the blocked time are not registered.
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

    EngineThreadMetrics(final String threadId, final StreamsMetricsImpl metrics, final long startMs) {
        this.threadId = threadId;
        this.metrics = metrics;
        this.processRate = ThreadMetrics.processRateSensor(threadId, metrics);
        this.processLatency = ThreadMetrics.processLatencySensor(threadId, metrics);
        this.processRecords = ThreadMetrics.processRecordsSensor(threadId, metrics);
        this.punctuate = ThreadMetrics.punctuateSensor(threadId, metrics);
        this.commit = ThreadMetrics.commitSensor(threadId, metrics);
        this.taskCreated = ThreadMetrics.createTaskSensor(threadId, metrics);
        this.taskClosed = ThreadMetrics.closeTaskSensor(threadId, metrics);
        ThreadMetrics.addThreadStartTimeMetric(threadId, metrics, startMs);
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
    }
}
