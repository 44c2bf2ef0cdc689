package dev.sluice.compat.faults;

import java.util.Arrays;
import java.util.List;

/**
 * The fault suite's sizes, from system properties: {@code faults.compareWith} (comma-separated
 * {@link Target}s each scenario also runs on, beside Sluice's runtime, for the report: {@code make soak}
 * sets {@code APACHE}) and {@code faults.records} (input records per phase of a scenario).
 */
record FaultSettings(List<Target> comparedRuntimes, int records) {

    static FaultSettings fromSystemProperties() {
        final String compared = System.getProperty("faults.compareWith", "");
        return new FaultSettings(
            compared.isBlank() ? List.of() : Arrays.stream(compared.split(",")).map(String::trim).map(Target::valueOf).toList(),
            Integer.getInteger("faults.records", 1_000));
    }
}
