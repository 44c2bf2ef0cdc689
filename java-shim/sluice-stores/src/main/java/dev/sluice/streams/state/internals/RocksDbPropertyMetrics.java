package dev.sluice.streams.state.internals;

import java.math.BigInteger;
import java.util.Map;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.metrics.RocksDBMetrics;
import org.apache.kafka.streams.state.internals.metrics.RocksDBMetrics.RocksDBMetricContext;

/**
 * Kafka Streams' RocksDB property metrics of a store (group {@code stream-state-metrics}, recording
 * level INFO), registered through Kafka Streams' own {@link RocksDBMetrics}, so names, descriptions and
 * tags are its own, and read from the properties of the store's RocksDB database. The statistics-based
 * RocksDB metrics (rates, hit ratios, recording level DEBUG) need rocksdbjni's {@code Statistics} and
 * are not registered.
 */
final class RocksDbPropertyMetrics {

    /** Registers a gauge in Kafka Streams' way. */
    private interface Registration {
        void add(StreamsMetricsImpl metrics, RocksDBMetricContext context, Gauge<BigInteger> gauge);
    }

    /** Each metric by the RocksDB property it reads (its name less the {@code rocksdb.} prefix). */
    private static final Map<String, Registration> BY_PROPERTY = Map.ofEntries(
        Map.entry("num-immutable-mem-table", RocksDBMetrics::addNumImmutableMemTableMetric),
        Map.entry("cur-size-active-mem-table", RocksDBMetrics::addCurSizeActiveMemTable),
        Map.entry("cur-size-all-mem-tables", RocksDBMetrics::addCurSizeAllMemTables),
        Map.entry("size-all-mem-tables", RocksDBMetrics::addSizeAllMemTables),
        Map.entry("num-entries-active-mem-table", RocksDBMetrics::addNumEntriesActiveMemTableMetric),
        Map.entry("num-deletes-active-mem-table", RocksDBMetrics::addNumDeletesActiveMemTableMetric),
        Map.entry("num-entries-imm-mem-tables", RocksDBMetrics::addNumEntriesImmMemTablesMetric),
        Map.entry("num-deletes-imm-mem-tables", RocksDBMetrics::addNumDeletesImmMemTablesMetric),
        Map.entry("mem-table-flush-pending", RocksDBMetrics::addMemTableFlushPending),
        Map.entry("num-running-flushes", RocksDBMetrics::addNumRunningFlushesMetric),
        Map.entry("compaction-pending", RocksDBMetrics::addCompactionPendingMetric),
        Map.entry("num-running-compactions", RocksDBMetrics::addNumRunningCompactionsMetric),
        Map.entry("estimate-pending-compaction-bytes", RocksDBMetrics::addEstimatePendingCompactionBytesMetric),
        Map.entry("total-sst-files-size", RocksDBMetrics::addTotalSstFilesSizeMetric),
        Map.entry("live-sst-files-size", RocksDBMetrics::addLiveSstFilesSizeMetric),
        Map.entry("num-live-versions", RocksDBMetrics::addNumLiveVersionMetric),
        Map.entry("estimate-num-keys", RocksDBMetrics::addEstimateNumKeysMetric),
        Map.entry("estimate-table-readers-mem", RocksDBMetrics::addEstimateTableReadersMemMetric),
        Map.entry("background-errors", RocksDBMetrics::addBackgroundErrorsMetric),
        Map.entry("block-cache-capacity", RocksDBMetrics::addBlockCacheCapacityMetric),
        Map.entry("block-cache-usage", RocksDBMetrics::addBlockCacheUsageMetric),
        Map.entry("block-cache-pinned-usage", RocksDBMetrics::addBlockCachePinnedUsageMetric));

    private RocksDbPropertyMetrics() {
    }

    /**
     * Registers the metrics of the store {@code storeName} of {@code metricsScope} (e.g. {@code rocksdb},
     * {@code rocksdb-window}), reading {@code data}. Kafka Streams' metered store layer removes them as
     * the store closes; read after that, a gauge is 0. Contexts without Kafka Streams' metrics get none.
     */
    static void register(final StateStoreContext context, final String metricsScope, final String storeName,
                         final NativeKeyValueStore data) {
        if (!(context.metrics() instanceof StreamsMetricsImpl)) {
            return;
        }
        final StreamsMetricsImpl metrics = (StreamsMetricsImpl) context.metrics();
        final RocksDBMetricContext metricContext =
            new RocksDBMetricContext(context.taskId().toString(), metricsScope, storeName);
        BY_PROPERTY.forEach((property, registration) ->
            registration.add(metrics, metricContext, (config, now) -> read(data, "rocksdb." + property)));
    }

    private static BigInteger read(final NativeKeyValueStore data, final String property) {
        try {
            final long value = data.backendProperty(property);
            return BigInteger.valueOf(Math.max(value, 0));
        } catch (final InvalidStateStoreException closed) {
            return BigInteger.ZERO;
        }
    }
}
