package dev.sluice.streams.differential;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One differential case: an application, its input, the topics whose records are compared, and the
 * kinds of store it uses (which decide whether it proves anything about Sluice's stores).
 */
record Scenario(String name, App app, InputScript input, List<String> outputTopics, Set<StoreKind> storeKinds,
                Map<String, Object> config) {

    static Scenario of(final String name, final App app, final InputScript input, final List<String> outputTopics,
                       final StoreKind first, final StoreKind... rest) {
        return new Scenario(name, app, input, outputTopics, EnumSet.of(first, rest), Map.of());
    }

    Scenario withConfig(final String key, final Object value) {
        final Map<String, Object> merged = new HashMap<>(config);
        merged.put(key, value);
        return new Scenario(name, app, input, outputTopics, storeKinds, Map.copyOf(merged));
    }

    /** The name tests show: the case, and whether its stores are Sluice's in this build. */
    String displayName() {
        return name + " " + SluiceCoverage.label(storeKinds);
    }

    @Override
    public String toString() {
        return displayName();
    }
}
