package dev.sluice.bench.apps;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The latest value of every key an output has carried so far, held against the values it must end
 * with: it says, after every record and in constant time, whether the output is now exactly the
 * expected one (every expected key at its value, no other key).
 */
final class FinalValues {

    private final Map<String, String> expected;
    private final Map<String, String> latest = new HashMap<>();
    private int keysAtExpectedValue;
    private int unexpectedKeys;
    private long records;

    FinalValues(final Map<String, String> expected) {
        this.expected = expected;
    }

    void accept(final String key, final String value) {
        records++;
        final boolean known = expected.containsKey(key);
        final boolean seen = latest.containsKey(key);
        final String before = latest.put(key, value);
        if (!known) {
            if (!seen) {
                unexpectedKeys++;
            }
            return;
        }
        final String wanted = expected.get(key);
        final boolean wasRight = seen && Objects.equals(before, wanted);
        final boolean isRight = Objects.equals(value, wanted);
        if (wasRight != isRight) {
            keysAtExpectedValue += isRight ? 1 : -1;
        }
    }

    boolean complete() {
        return unexpectedKeys == 0 && keysAtExpectedValue == expected.size();
    }

    long records() {
        return records;
    }

    /** What is still wrong, with a few examples, for a run that did not complete. */
    String differences() {
        final Map<String, String> examples = new TreeMap<>();
        for (final Map.Entry<String, String> wanted : expected.entrySet()) {
            final String actual = latest.get(wanted.getKey());
            if (!Objects.equals(actual, wanted.getValue()) && examples.size() < 5) {
                examples.put(wanted.getKey(), (latest.containsKey(wanted.getKey()) ? actual : "nothing") + " instead of "
                    + wanted.getValue());
            }
        }
        latest.keySet().stream().filter(key -> !expected.containsKey(key)).limit(3)
            .forEach(key -> examples.put(key, latest.get(key) + ", a key that should not be there"));
        return (expected.size() - keysAtExpectedValue) + " of " + expected.size() + " keys not at their final value, "
            + unexpectedKeys + " unexpected keys, after " + records + " output records; e.g. " + examples;
    }
}
