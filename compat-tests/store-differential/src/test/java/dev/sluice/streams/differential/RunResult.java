package dev.sluice.streams.differential;

import java.util.List;
import java.util.Map;

/**
 * What one run of a scenario produced: the output records in order, every store's final contents
 * read through the driver's typed store getters, and which class served each store at the bottom of
 * its layers.
 */
record RunResult(List<OutputRecord> outputs, Map<String, List<String>> storeContents,
                 Map<String, StoreReport> stores) {

    record StoreReport(StoreKind kind, String implementation, boolean sluice) {
    }

    int storeEntries() {
        return storeContents.values().stream().mapToInt(List::size).sum();
    }
}
