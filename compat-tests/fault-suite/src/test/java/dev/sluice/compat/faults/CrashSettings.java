package dev.sluice.compat.faults;

import java.time.Duration;

/**
 * How hard a crash check pushes, from system properties: {@code eos.kills} (SIGKILLs per run),
 * {@code eos.records} (input records), {@code eos.inputSeconds} (over how long they are written),
 * {@code eos.seed}, and {@code eos.processingGuarantee} (at_least_once shows the check failing).
 */
record CrashSettings(int kills, int records, Duration inputDuration, Duration maxRunBeforeKill, long seed, String processingGuarantee) {

    static CrashSettings fromSystemProperties() {
        return new CrashSettings(
            Integer.getInteger("eos.kills", 20),
            Integer.getInteger("eos.records", 3_000),
            Duration.ofSeconds(Integer.getInteger("eos.inputSeconds", 40)),
            Duration.ofMillis(2_500),
            Long.getLong("eos.seed", System.nanoTime()),
            System.getProperty("eos.processingGuarantee", "exactly_once_v2"));
    }
}
