package dev.sluice.streams.runtime.internals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Measurable;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.metrics.stats.WindowedCount;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

/**
 * Kafka Streams' state updater metrics (group {@code stream-state-updater-metrics}, tag {@code thread-id}
 * = the stream thread's name with {@code -StateUpdater-} for {@code -StreamThread-}) of one engine thread,
 * which restores its tasks and keeps its standby replicas itself: the active tasks restoring now, the standby
 * replicas it keeps, the records restored and the restore calls. The paused counts are registered as Kafka
 * Streams registers them and stay 0: the tasks of a paused engine thread that were restoring stay counted as
 * restoring, its replicas as updating. The state updater's time ratios are not registered: restoring is a step of the engine
 * thread's loop, not a thread of its own.
 */
final class EngineStateUpdaterMetrics {

    private static final String GROUP = "stream-state-updater-metrics";

    private final String threadId;
    private final StreamsMetricsImpl metrics;
    private final AtomicInteger restoringTasks = new AtomicInteger();
    private final AtomicInteger standbyTasks = new AtomicInteger();
    private final List<MetricName> gauges = new ArrayList<>();
    private final Sensor restoreRecords;

    EngineStateUpdaterMetrics(final String streamThreadName, final StreamsMetricsImpl metrics) {
        this.threadId = streamThreadName.replace("-StreamThread-", "-StateUpdater-");
        this.metrics = metrics;
        final Map<String, String> tags = Map.of("thread-id", threadId);
        addGauge("active-restoring-tasks", "The number of active tasks currently undergoing restoration", tags,
            (config, now) -> restoringTasks.get());
        addGauge("standby-updating-tasks", "The number of standby tasks currently undergoing state update", tags,
            (config, now) -> standbyTasks.get());
        addGauge("active-paused-tasks", "The number of active tasks paused restoring", tags, (config, now) -> 0);
        addGauge("standby-paused-tasks", "The number of standby tasks paused state update", tags, (config, now) -> 0);
        restoreRecords = metrics.threadLevelSensor(threadId, "restore-records", Sensor.RecordingLevel.INFO);
        restoreRecords.add(new MetricName("restore-records-rate", GROUP,
            "The average per-second number of records restored", tags), new Rate());
        restoreRecords.add(new MetricName("restore-call-rate", GROUP,
            "The average per-second number of restore calls triggered", tags), new Rate(new WindowedCount()));
    }

    private void addGauge(final String name, final String description, final Map<String, String> tags,
                          final Measurable value) {
        final Metrics registry = metrics.metricsRegistry();
        final MetricName metricName = registry.metricName(name, GROUP, description, tags);
        registry.addMetric(metricName, value);
        gauges.add(metricName);
    }

    /** A task of the thread starts restoring. */
    void taskRestoring() {
        restoringTasks.incrementAndGet();
    }

    /** A task of the thread stopped restoring: it was restored, or it was closed first. */
    void taskNoLongerRestoring() {
        restoringTasks.decrementAndGet();
    }

    /** The thread keeps one more standby replica ({@code +1}) or one fewer ({@code -1}). */
    void standbyTasksChanged(final int delta) {
        standbyTasks.addAndGet(delta);
    }

    /** One restore call wrote {@code records} records. */
    void restored(final int records, final long nowMs) {
        restoreRecords.record(records, nowMs);
    }

    /** Removes the sensors and gauges. */
    void remove() {
        metrics.removeAllThreadLevelSensors(threadId);
        gauges.forEach(metrics.metricsRegistry()::removeMetric);
    }
}
