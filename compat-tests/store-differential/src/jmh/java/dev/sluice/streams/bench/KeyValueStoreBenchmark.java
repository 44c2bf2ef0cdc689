package dev.sluice.streams.bench;

import dev.sluice.streams.state.SluiceStores;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Point reads, writes and 100-entry range scans through the {@code KeyValueStore<Bytes, byte[]>}
 * interface the typed layers call: Kafka Streams' {@code RocksDBStore} against Sluice's RocksDB-backed
 * store, each holding the same 100,000 committed entries (16-byte keys, 100-byte values). Writes
 * commit every 1,000 puts, as a stream thread does at its commit interval, so Sluice's staged writes
 * are applied and its overlay stays the size of one commit.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class KeyValueStoreBenchmark {

    private static final int ENTRIES = 100_000;
    private static final int VALUE_BYTES = 100;
    private static final int RANGE_LENGTH = 100;
    private static final int PUTS_PER_COMMIT = 1_000;

    @Param({"kafka-streams", "sluice"})
    public String store;

    private Path stateDir;
    private KeyValueStore<Bytes, byte[]> kv;
    private Bytes[] keys;
    private byte[] value;
    private int next;
    private int putsSinceCommit;

    @Setup(Level.Trial)
    public void openAndFill() throws IOException {
        stateDir = Files.createTempDirectory("kv-store-bench");
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kv-store-bench");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        final MockProcessorContext<Object, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        final KeyValueBytesStoreSupplier supplier = store.equals("sluice")
            ? SluiceStores.persistentKeyValueStore("bench")
            : Stores.persistentKeyValueStore("bench");
        kv = supplier.get();
        kv.init(context.getStateStoreContext(), kv);

        keys = new Bytes[ENTRIES];
        for (int i = 0; i < ENTRIES; i++) {
            keys[i] = Bytes.wrap(String.format("key-%012d", i).getBytes(StandardCharsets.US_ASCII));
        }
        value = new byte[VALUE_BYTES];
        new Random(42).nextBytes(value);
        final List<KeyValue<Bytes, byte[]>> batch = new ArrayList<>(PUTS_PER_COMMIT);
        for (final Bytes key : keys) {
            batch.add(KeyValue.pair(key, value));
            if (batch.size() == PUTS_PER_COMMIT) {
                kv.putAll(batch);
                kv.commit(Map.of());
                batch.clear();
            }
        }
        // Visit keys in a fixed random order, the same for both stores.
        final List<Bytes> shuffled = new ArrayList<>(Arrays.asList(keys));
        Collections.shuffle(shuffled, new Random(7));
        keys = shuffled.toArray(Bytes[]::new);
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        kv.close();
        try (Stream<Path> files = Files.walk(stateDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Benchmark
    public byte[] get() {
        return kv.get(nextKey());
    }

    @Benchmark
    public void put() {
        kv.put(nextKey(), value);
        if (++putsSinceCommit == PUTS_PER_COMMIT) {
            kv.commit(Map.of());
            putsSinceCommit = 0;
        }
    }

    @Benchmark
    public void range(final Blackhole blackhole) {
        final Bytes from = nextKey();
        try (KeyValueIterator<Bytes, byte[]> entries = kv.range(from, null)) {
            for (int i = 0; i < RANGE_LENGTH && entries.hasNext(); i++) {
                blackhole.consume(entries.next());
            }
        }
    }

    private Bytes nextKey() {
        final Bytes key = keys[next];
        next = next + 1 == keys.length ? 0 : next + 1;
        return key;
    }
}
