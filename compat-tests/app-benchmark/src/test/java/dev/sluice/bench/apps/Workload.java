package dev.sluice.bench.apps;

import java.util.List;
import org.apache.kafka.streams.StreamsConfig;

/** An application under a processing guarantee with a number of stream threads. */
record Workload(Application application, String processingGuarantee, int threads) {

    /** The workloads a default run times. */
    static final List<Workload> ALL = List.of(
        new Workload(Application.WORD_COUNT, StreamsConfig.EXACTLY_ONCE_V2, 1),
        new Workload(Application.WORD_COUNT, StreamsConfig.AT_LEAST_ONCE, 1),
        new Workload(Application.WORD_COUNT, StreamsConfig.EXACTLY_ONCE_V2, 2),
        new Workload(Application.WINDOWED_TOTALS, StreamsConfig.EXACTLY_ONCE_V2, 1),
        new Workload(Application.ORDER_ENRICHMENT, StreamsConfig.EXACTLY_ONCE_V2, 1),
        new Workload(Application.ORDER_CUSTOMERS, StreamsConfig.EXACTLY_ONCE_V2, 1));

    /** For example {@code word-count/eos/1t}. */
    String id() {
        return application.id() + "/" + (StreamsConfig.AT_LEAST_ONCE.equals(processingGuarantee) ? "alos" : "eos") + "/"
            + threads + "t";
    }
}
