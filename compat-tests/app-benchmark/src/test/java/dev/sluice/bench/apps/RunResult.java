package dev.sluice.bench.apps;

/**
 * One run's figures, or why it has none: a run whose output is not exactly right, or whose application
 * failed or stalled, is reported as wrong and never timed.
 *
 * @param outputRecords   how many records the output got, which grows with how often caches are flushed (commits)
 * @param startSeconds    from the application's launch until it reported RUNNING (its JVM's start, joining the
 *                        group, opening its tasks)
 * @param latenciesMillis a paced run's sorted latencies from due to committed output; empty for a timed run
 */
record RunResult(Workload workload, Variant variant, boolean paced, String failure, int inputRecords, long outputRecords,
                 double wallSeconds, double startSeconds, ProcessSample sample, long[] latenciesMillis) {

    static RunResult wrong(final Workload workload, final Variant variant, final boolean paced, final String failure) {
        return new RunResult(workload, variant, paced, failure, 0, 0, Double.NaN, Double.NaN, null, new long[0]);
    }

    boolean right() {
        return failure == null;
    }

    double recordsPerSecond() {
        return inputRecords / wallSeconds;
    }

    double cpuMicrosPerRecord() {
        return sample.cpuSeconds() * 1e6 / inputRecords;
    }

    double peakRssMegabytes() {
        return sample.peakRssBytes() / (1024.0 * 1024.0);
    }

    /** The Java heap's share of the resident set at the run's end, the rest being the JVM's own and native memory. */
    double heapMegabytes() {
        return sample.heapResidentBytes() / (1024.0 * 1024.0);
    }

    /** The latency below which {@code fraction} of the measured records fall, in milliseconds. */
    double latencyMillis(final double fraction) {
        if (latenciesMillis.length == 0) {
            return Double.NaN;
        }
        final int index = (int) Math.ceil(fraction * latenciesMillis.length) - 1;
        return latenciesMillis[Math.max(0, Math.min(latenciesMillis.length - 1, index))];
    }
}
