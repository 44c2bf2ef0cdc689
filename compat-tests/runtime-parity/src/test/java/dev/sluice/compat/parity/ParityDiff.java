package dev.sluice.compat.parity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The comparison of a candidate's output with the reference's: per key, the same records (key, value,
 * timestamp) in the same order. Differences are described key by key, at the first record that differs.
 */
final class ParityDiff {

    private static final int KEYS_SHOWN = 10;

    private ParityDiff() {
    }

    /** Empty when the outputs match; otherwise what differs, for an assertion message. */
    static Optional<String> describe(final ParityApp app, final List<OutputRecord> reference, final List<OutputRecord> candidate) {
        final Map<String, List<OutputRecord>> expected = byKey(reference);
        final Map<String, List<OutputRecord>> actual = byKey(candidate);
        final TreeSet<String> keys = new TreeSet<>(expected.keySet());
        keys.addAll(actual.keySet());
        final List<String> differences = new ArrayList<>();
        for (final String key : keys) {
            difference(app, key, expected.getOrDefault(key, List.of()), actual.getOrDefault(key, List.of()))
                .ifPresent(differences::add);
        }
        if (differences.isEmpty()) {
            return Optional.empty();
        }
        final StringBuilder message = new StringBuilder()
            .append("reference: ").append(reference.size()).append(" records in ").append(expected.size()).append(" keys; ")
            .append("candidate: ").append(candidate.size()).append(" records in ").append(actual.size()).append(" keys; ")
            .append(differences.size()).append(" keys differ");
        differences.stream().limit(KEYS_SHOWN).forEach(difference -> message.append(System.lineSeparator()).append("  ").append(difference));
        if (differences.size() > KEYS_SHOWN) {
            message.append(System.lineSeparator()).append("  ... and ").append(differences.size() - KEYS_SHOWN).append(" more keys");
        }
        return Optional.of(message.toString());
    }

    private static Optional<String> difference(final ParityApp app, final String key, final List<OutputRecord> expected,
                                               final List<OutputRecord> actual) {
        final int common = Math.min(expected.size(), actual.size());
        for (int i = 0; i < common; i++) {
            if (!expected.get(i).sameAs(actual.get(i))) {
                return Optional.of("key " + key + ": record " + i + " of " + expected.size() + " (reference) / " + actual.size()
                    + " (candidate): reference " + app.describe(expected.get(i)) + ", candidate " + app.describe(actual.get(i)));
            }
        }
        if (expected.size() == actual.size()) {
            return Optional.empty();
        }
        if (expected.size() > actual.size()) {
            return Optional.of("key " + key + ": candidate misses the reference's last " + (expected.size() - common) + " of "
                + expected.size() + " records, from " + app.describe(expected.get(common)));
        }
        return Optional.of("key " + key + ": candidate has " + (actual.size() - common) + " records beyond the reference's "
            + expected.size() + ", from " + app.describe(actual.get(common)));
    }

    /** Records grouped by key, each key's in the order its partition holds them. */
    private static Map<String, List<OutputRecord>> byKey(final List<OutputRecord> records) {
        final Map<String, List<OutputRecord>> byKey = new LinkedHashMap<>();
        for (final OutputRecord record : records) {
            byKey.computeIfAbsent(ParityApp.keyText(record.key()), key -> new ArrayList<>()).add(record);
        }
        return byKey;
    }
}
