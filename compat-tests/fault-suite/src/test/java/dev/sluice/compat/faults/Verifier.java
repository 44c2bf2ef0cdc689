package dev.sluice.compat.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongBinaryOperator;

/**
 * Recomputes each key's running min, sum, max and count from the committed input and compares them,
 * output record by output record, with the committed output. With caching off every input record
 * yields one output record per aggregation, so the outputs must equal the running values exactly:
 * a duplicate or a lost record shifts the sequence, a wrong aggregate changes a value.
 */
final class Verifier {

    private final String bootstrapServers;
    private final Topics topics;

    Verifier(final String bootstrapServers, final Topics topics) {
        this.bootstrapServers = bootstrapServers;
        this.topics = topics;
    }

    /** Waits until every output topic holds at least one committed record per input record, then compares. */
    Verification awaitAndVerify(final Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final Map<String, List<Long>> input = CommittedTopic.read(bootstrapServers, topics.input(), CommittedTopic::intValue);
        final long inputRecords = total(input);
        Map<String, Map<String, List<Long>>> outputs = readOutputs();
        while (outputs.values().stream().anyMatch(output -> total(output) < inputRecords) && System.nanoTime() < deadline) {
            Thread.sleep(1_000);
            outputs = readOutputs();
        }
        final Map<String, Map<String, List<Long>>> expected = Map.of(
            topics.min(), running(input, Math::min),
            topics.sum(), running(input, Long::sum),
            topics.max(), running(input, Math::max),
            topics.cnt(), running(input, (count, value) -> count + 1, value -> 1L));
        final List<String> mismatches = new ArrayList<>();
        final long shortest = outputs.values().stream().mapToLong(Verifier::total).min().orElse(0);
        if (shortest < inputRecords) {
            // Said first: an output that stopped growing (an application that no longer
            // processes) would otherwise read as records lost.
            mismatches.add("the committed output had not caught up when the wait ended after " + timeout.toSeconds() + " s: "
                + shortest + " of " + inputRecords + " records in the shortest output topic");
        }
        for (final String topic : topics.outputs()) {
            mismatches.addAll(compare(topic, expected.get(topic), outputs.get(topic)));
        }
        final Map<String, Long> outputRecords = new LinkedHashMap<>();
        outputs.forEach((topic, output) -> outputRecords.put(topic, total(output)));
        return new Verification(inputRecords, outputRecords, mismatches);
    }

    private Map<String, Map<String, List<Long>>> readOutputs() {
        final Map<String, Map<String, List<Long>>> outputs = new LinkedHashMap<>();
        outputs.put(topics.min(), CommittedTopic.read(bootstrapServers, topics.min(), CommittedTopic::intValue));
        outputs.put(topics.sum(), CommittedTopic.read(bootstrapServers, topics.sum(), CommittedTopic::longValue));
        outputs.put(topics.max(), CommittedTopic.read(bootstrapServers, topics.max(), CommittedTopic::intValue));
        outputs.put(topics.cnt(), CommittedTopic.read(bootstrapServers, topics.cnt(), CommittedTopic::longValue));
        return outputs;
    }

    private static Map<String, List<Long>> running(final Map<String, List<Long>> input, final LongBinaryOperator step) {
        return running(input, step, Function.identity());
    }

    private static Map<String, List<Long>> running(final Map<String, List<Long>> input, final LongBinaryOperator step,
                                                   final Function<Long, Long> first) {
        final Map<String, List<Long>> running = new LinkedHashMap<>();
        input.forEach((key, values) -> {
            final List<Long> aggregates = new ArrayList<>();
            long aggregate = first.apply(values.get(0));
            aggregates.add(aggregate);
            for (final Long value : values.subList(1, values.size())) {
                aggregate = step.applyAsLong(aggregate, value);
                aggregates.add(aggregate);
            }
            running.put(key, aggregates);
        });
        return running;
    }

    private static List<String> compare(final String topic, final Map<String, List<Long>> expected, final Map<String, List<Long>> actual) {
        final List<String> mismatches = new ArrayList<>();
        for (final String key : actual.keySet()) {
            if (!expected.containsKey(key)) {
                mismatches.add(topic + " has key " + key + ", which the input never had");
            }
        }
        expected.forEach((key, values) -> {
            final List<Long> outputs = actual.getOrDefault(key, List.of());
            for (int i = 0; i < Math.min(values.size(), outputs.size()); i++) {
                if (!values.get(i).equals(outputs.get(i))) {
                    mismatches.add(topic + " key " + key + ": output #" + (i + 1) + " is " + outputs.get(i) + ", the input gives "
                        + values.get(i) + " (a duplicated, lost or wrongly aggregated record)");
                    return;
                }
            }
            if (values.size() != outputs.size()) {
                mismatches.add(topic + " key " + key + ": " + outputs.size() + " outputs for " + values.size() + " input records"
                    + (outputs.size() > values.size() ? " (duplicates)" : " (lost records)"));
            }
        });
        return mismatches;
    }

    private static long total(final Map<String, List<Long>> valuesByKey) {
        return valuesByKey.values().stream().mapToLong(List::size).sum();
    }

    /** What the committed output showed against the committed input; {@code mismatches} empty when exactly-once held. */
    record Verification(long inputRecords, Map<String, Long> outputRecords, List<String> mismatches) {
    }
}
