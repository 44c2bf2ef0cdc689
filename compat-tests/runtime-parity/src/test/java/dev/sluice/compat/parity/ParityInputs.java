package dev.sluice.compat.parity;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.serialization.LongSerializer;

/**
 * The applications' input: deterministic for a seed, a few thousand records over several keys, with
 * timestamps an hour or more in the past (the broker refuses timestamps far in the future) that go
 * mostly forward, some out of order within the grace periods and some too late for them.
 *
 * <p>Where Kafka Streams' own output order depends on timing, the input avoids it: a word count's
 * words each come from lines of one key (so from one upstream task), and the two sides of a join
 * never share a timestamp.
 */
final class ParityInputs {

    private static final long SEED = 6;
    private static final int SENSORS = 8;
    private static final LongSerializer LONGS = new LongSerializer();
    private static final String[] WORDS = {"river", "gate", "water", "stone", "lock", "barge", "mill", "weir", "bank",
        "reed", "tide", "flow"};
    private static final String[] TIERS = {"bronze", "silver", "gold", "platinum"};
    private static final String[] PAGES = {"details", "reviews", "photos", "specs"};

    private final long start = Instant.now().truncatedTo(ChronoUnit.HOURS).minus(Duration.ofHours(3)).toEpochMilli();

    /** Lines of eight documents, each document with a vocabulary of its own; some words capitalised. */
    List<InputRecord> lines(final String topic) {
        final Random random = new Random(SEED);
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
            final int document = random.nextInt(8);
            final List<String> words = new ArrayList<>();
            for (int w = 2 + random.nextInt(6); w > 0; w--) {
                final String word = WORDS[random.nextInt(WORDS.length)] + document;
                words.add(random.nextInt(5) == 0 ? word.substring(0, 1).toUpperCase() + word.substring(1) : word);
            }
            records.add(new InputRecord(topic, "document-" + document, utf8(String.join(" ", words)), start + i * 250L));
        }
        return records;
    }

    /**
     * Sensor readings every 750 ms over half an hour: 8 % up to 14 s out of order (inside both
     * examples' grace), 4 % two to three minutes late (outside it).
     */
    List<InputRecord> readings(final String topic) {
        final Random random = new Random(SEED);
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2400; i++) {
            final String sensor = "sensor-" + random.nextInt(SENSORS);
            final int disorder = random.nextInt(100);
            long timestamp = start + i * 750L;
            if (disorder < 8) {
                timestamp -= 1_000 + random.nextInt(13_000);
            } else if (disorder < 12) {
                timestamp -= 120_000 + random.nextInt(60_000);
            }
            records.add(new InputRecord(topic, sensor, LONGS.serialize(topic, 1L + random.nextInt(100)), timestamp));
        }
        return records;
    }

    /**
     * Orders and tier changes of twenty customers interleaved in time, one event every 500 ms: tiers
     * change, and are sometimes deleted, while orders flow; early orders find no tier yet.
     */
    List<InputRecord> ordersAndTiers(final String ordersTopic, final String tiersTopic) {
        final Random random = new Random(SEED);
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2800; i++) {
            final String customer = "customer-" + random.nextInt(20);
            final long timestamp = start + i * 500L;
            if (random.nextInt(10) == 0) {
                final byte[] tier = random.nextInt(10) == 0 ? null : utf8(TIERS[random.nextInt(TIERS.length)]);
                records.add(new InputRecord(tiersTopic, customer, tier, timestamp));
            } else {
                records.add(new InputRecord(ordersTopic, customer, LONGS.serialize(ordersTopic, 1L + random.nextInt(500)), timestamp));
            }
        }
        return records;
    }

    /** Forty products, ten of them renamed, then clicks of 25 users, one in nine on a product nobody knows. */
    List<InputRecord> productsAndClicks(final String productsTopic, final String clicksTopic) {
        final Random random = new Random(SEED);
        final List<InputRecord> records = new ArrayList<>();
        for (int p = 0; p < 40; p++) {
            records.add(new InputRecord(productsTopic, "product-" + p, utf8("item " + p), start + p));
        }
        for (int renamed = 0; renamed < 10; renamed++) {
            final int p = random.nextInt(40);
            records.add(new InputRecord(productsTopic, "product-" + p, utf8("item " + p + " v" + renamed), start + 40 + renamed));
        }
        for (int i = 0; i < 2500; i++) {
            final String click = "product-" + random.nextInt(45) + "/" + PAGES[random.nextInt(PAGES.length)];
            records.add(new InputRecord(clicksTopic, "user-" + random.nextInt(25), utf8(click), start + 1_000 + i * 500L));
        }
        return records;
    }

    /**
     * Twenty customers, then 600 orders, each written once, of 24 customer ids (four of them unknown).
     * Each order is written once and every customer before any order: a foreign-key join's output then
     * does not depend on how its subscription and response topics interleave.
     */
    List<InputRecord> customersAndOrders(final String customersTopic, final String ordersTopic) {
        final Random random = new Random(SEED);
        final List<InputRecord> records = new ArrayList<>();
        for (int c = 0; c < 20; c++) {
            records.add(new InputRecord(customersTopic, "customer-" + c, utf8("name " + c), start + c));
        }
        for (int o = 0; o < 600; o++) {
            final String order = "customer-" + random.nextInt(24) + ":" + (1 + random.nextInt(500));
            records.add(new InputRecord(ordersTopic, "order-" + o, utf8(order), start + 1_000 + o * 500L));
        }
        return records;
    }

    /**
     * Events of twenty keys on two co-partitioned streams, one every 300 ms on a random side: 5 % up to
     * 4 s out of order (inside the joins' grace), 3 % 8 to 12 s (some beyond it).
     */
    List<InputRecord> streamPairs(final String leftTopic, final String rightTopic) {
        final Random random = new Random(SEED);
        final Set<Long> used = new HashSet<>();
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            final boolean left = random.nextBoolean();
            final String value = (left ? "L" : "R") + i;
            final long timestamp = unique(used, start + i * 300L - lateness(random, 5, 4_000, 3, 12_000));
            records.add(new InputRecord(left ? leftTopic : rightTopic, "key-" + random.nextInt(20), utf8(value), timestamp));
        }
        return records;
    }

    /**
     * Clicks (value 1) and purchases (an amount) of fifteen users on two co-partitioned streams, one
     * every 400 ms: 5 % up to 20 s out of order, beyond the windowed aggregate's grace for some.
     */
    List<InputRecord> clicksAndPurchases(final String clicksTopic, final String purchasesTopic) {
        final Random random = new Random(SEED);
        final Set<Long> used = new HashSet<>();
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2400; i++) {
            final boolean click = random.nextInt(10) < 7;
            final String topic = click ? clicksTopic : purchasesTopic;
            final long amount = click ? 1 : 1 + random.nextInt(200);
            final long timestamp = unique(used, start + i * 400L - lateness(random, 5, 20_000, 0, 0));
            records.add(new InputRecord(topic, "user-" + random.nextInt(15), LONGS.serialize(topic, amount), timestamp));
        }
        return records;
    }

    /**
     * Activity of twelve users, one event every 250 ms from a user active at that moment: each is
     * active for 45 s, then silent for 45 s (longer than the session gap), in phases of their own. 5 %
     * of events up to 15 s out of order: they merge sessions, or come too late for the grace.
     */
    List<InputRecord> sessionActivity(final String topic) {
        final Random random = new Random(SEED);
        final Set<Long> used = new HashSet<>();
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2400; i++) {
            final long offset = i * 250L;
            final List<Integer> active = new ArrayList<>();
            for (int user = 0; user < 12; user++) {
                if ((offset / 1_000 + user * 37L) / 45 % 2 == 0) {
                    active.add(user);
                }
            }
            if (active.isEmpty()) {
                continue;
            }
            final int user = active.get(random.nextInt(active.size()));
            final long timestamp = unique(used, start + offset - lateness(random, 5, 15_000, 0, 0));
            records.add(new InputRecord(topic, "user-" + user, LONGS.serialize(topic, 1L), timestamp));
        }
        return records;
    }

    /**
     * Orders and tier changes of twelve customers, one event every 500 ms, one in eight a tier change
     * (one in ten of those a deletion): 10 % of tier changes up to a minute out of order, which a
     * versioned table files under their own time, and 6 % of orders up to 20 s out of order.
     */
    List<InputRecord> ordersAndVersionedTiers(final String ordersTopic, final String tiersTopic) {
        final Random random = new Random(SEED);
        final Set<Long> used = new HashSet<>();
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2400; i++) {
            final String customer = "customer-" + random.nextInt(12);
            if (random.nextInt(8) == 0) {
                final byte[] tier = random.nextInt(10) == 0 ? null : utf8(TIERS[random.nextInt(TIERS.length)]);
                final long timestamp = unique(used, start + i * 500L - lateness(random, 10, 60_000, 0, 0));
                records.add(new InputRecord(tiersTopic, customer, tier, timestamp));
            } else {
                final long timestamp = unique(used, start + i * 500L - lateness(random, 6, 20_000, 0, 0));
                records.add(new InputRecord(ordersTopic, customer, LONGS.serialize(ordersTopic, 1L + random.nextInt(500)), timestamp));
            }
        }
        return records;
    }

    /**
     * The sensors' names, renamed now and then, and their readings (as {@link #readings}): the names
     * at the start and every 20 s, at times no reading has.
     */
    List<InputRecord> sensorNamesAndReadings(final String sensorsTopic, final String readingsTopic) {
        final List<InputRecord> readings = readings(readingsTopic);
        final Set<Long> used = new HashSet<>();
        readings.forEach(reading -> used.add(reading.timestamp()));
        final Random random = new Random(SEED);
        final List<InputRecord> records = new ArrayList<>();
        for (int sensor = 0; sensor < SENSORS; sensor++) {
            records.add(new InputRecord(sensorsTopic, "sensor-" + sensor, utf8("unit " + sensor), unique(used, start - 1_000 + sensor)));
        }
        for (int renamed = 1; renamed < 90; renamed++) {
            final int sensor = random.nextInt(SENSORS);
            records.add(new InputRecord(sensorsTopic, "sensor-" + sensor, utf8("unit " + sensor + " v" + renamed),
                unique(used, start + renamed * 20_000L + 1)));
        }
        records.addAll(readings);
        return records;
    }

    /**
     * Tier changes and balances of thirty accounts, one event every 400 ms, one in five a tier change
     * (one in twenty of those a deletion) and one in thirty balances a deletion: 5 % of events up to 5 s
     * out of order.
     */
    List<InputRecord> tiersAndBalances(final String tiersTopic, final String balancesTopic) {
        final Random random = new Random(SEED);
        final Set<Long> used = new HashSet<>();
        final List<InputRecord> records = new ArrayList<>();
        for (int i = 0; i < 2400; i++) {
            final String account = "account-" + random.nextInt(30);
            final long timestamp = unique(used, start + i * 400L - lateness(random, 5, 5_000, 0, 0));
            if (random.nextInt(5) == 0) {
                final byte[] tier = random.nextInt(20) == 0 ? null : utf8(TIERS[random.nextInt(TIERS.length)]);
                records.add(new InputRecord(tiersTopic, account, tier, timestamp));
            } else {
                final byte[] balance = random.nextInt(30) == 0 ? null : LONGS.serialize(balancesTopic, (long) random.nextInt(1_000));
                records.add(new InputRecord(balancesTopic, account, balance, timestamp));
            }
        }
        return records;
    }

    /**
     * How far back an event's timestamp goes: {@code slightPercent} % of events up to {@code slight} ms,
     * {@code farPercent} % more between two thirds of {@code far} and {@code far} ms, the rest not at all.
     */
    private static long lateness(final Random random, final int slightPercent, final int slight, final int farPercent,
                                 final int far) {
        final int draw = random.nextInt(100);
        if (draw < slightPercent) {
            return 1 + random.nextInt(slight);
        }
        if (draw < slightPercent + farPercent) {
            return far * 2L / 3 + random.nextInt(far / 3);
        }
        return 0;
    }

    /**
     * {@code timestamp}, or the next millisecond no other record of the input has: with no two records
     * at one time, the order in which a task takes records from its partitions is fixed.
     */
    private static long unique(final Set<Long> used, final long timestamp) {
        long free = timestamp;
        while (!used.add(free)) {
            free++;
        }
        return free;
    }

    private static byte[] utf8(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
