package dev.sluice.streams.differential;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;

/**
 * What a differential run feeds an application: string records with explicit timestamps, on any
 * input topic, interleaved with wall-clock advances. Keys and values are strings; a null value is a
 * tombstone.
 */
final class InputScript {

    sealed interface Step permits Pipe, AdvanceWallClock {
    }

    record Pipe(String topic, String key, String value, long timestamp) implements Step {
    }

    record AdvanceWallClock(Duration by) implements Step {
    }

    private final List<Step> steps = new ArrayList<>();

    InputScript pipe(final String topic, final String key, final String value, final long timestamp) {
        steps.add(new Pipe(topic, key, value, timestamp));
        return this;
    }

    InputScript advanceWallClock(final Duration by) {
        steps.add(new AdvanceWallClock(by));
        return this;
    }

    /**
     * Appends {@code count} random records, reproducible from {@code seed}. Event time moves forward
     * by up to two seconds a record, but one record in ten arrives up to four seconds out of order and
     * one in thirty is thirty seconds late, past any grace period the scenarios use. The wall clock
     * advances by ten seconds every twenty records.
     */
    InputScript random(final long seed, final int count, final RandomRecordShape shape) {
        final Random random = new Random(seed);
        long eventTime = latestTimestamp();
        for (int i = 0; i < count; i++) {
            eventTime += random.nextInt(2_000);
            long timestamp = eventTime;
            final int disorder = random.nextInt(30);
            if (disorder == 0) {
                timestamp = Math.max(0, eventTime - 30_000);
            } else if (disorder < 3) {
                timestamp = Math.max(0, eventTime - random.nextInt(4_000));
            }
            final String topic = shape.topics().get(random.nextInt(shape.topics().size()));
            final String key = "k" + random.nextInt(shape.keys());
            final String value = random.nextDouble() < shape.tombstoneRate() ? null : shape.value().apply(topic, random);
            pipe(topic, key, value, timestamp);
            if (i % 20 == 19) {
                advanceWallClock(Duration.ofSeconds(10));
            }
        }
        return this;
    }

    List<Step> steps() {
        return steps;
    }

    Set<String> keys() {
        final Set<String> keys = new TreeSet<>();
        pipes().forEach(pipe -> {
            if (pipe.key() != null) {
                keys.add(pipe.key());
            }
        });
        return keys;
    }

    Set<Long> timestamps() {
        final Set<Long> timestamps = new TreeSet<>();
        pipes().forEach(pipe -> timestamps.add(pipe.timestamp()));
        return timestamps;
    }

    private long latestTimestamp() {
        return pipes().stream().mapToLong(Pipe::timestamp).max().orElse(0);
    }

    private List<Pipe> pipes() {
        return steps.stream().filter(Pipe.class::isInstance).map(Pipe.class::cast).toList();
    }

    /** The topics, key space and values of random records. */
    record RandomRecordShape(List<String> topics, int keys, double tombstoneRate, BiFunction<String, Random, String> value) {
    }
}
