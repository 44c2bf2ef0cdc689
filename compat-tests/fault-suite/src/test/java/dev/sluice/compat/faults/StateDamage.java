package dev.sluice.compat.faults;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.common.utils.Utils;

/**
 * What happens to one store's directory while the application is stopped: one of RocksDB's files
 * overwritten with garbage of the same length, or the directory deleted. Both runtimes keep a
 * persistent store in {@code <state.dir>/<application.id>/<task>/rocksdb/<store>}.
 */
enum StateDamage {

    GARBLED_MANIFEST("a garbled MANIFEST") {
        @Override
        void apply(final Path storeDirectory) {
            garble(newest(storeDirectory, name -> name.startsWith("MANIFEST-")));
        }
    },
    GARBLED_CURRENT("a garbled CURRENT") {
        @Override
        void apply(final Path storeDirectory) {
            garble(storeDirectory.resolve("CURRENT"));
        }
    },
    GARBLED_SST("a garbled SST file") {
        @Override
        void apply(final Path storeDirectory) {
            garble(newest(storeDirectory, name -> name.endsWith(".sst")));
        }

        @Override
        int livesBefore() {
            // A small store lives in its memtable and write-ahead log; RocksDB writes its first SST file
            // when the store reopens and flushes what it recovered from the log.
            return 2;
        }
    },
    GARBLED_SST_BLOCK("an SST file's first data block garbled, its footer intact") {
        @Override
        void apply(final Path storeDirectory) {
            // RocksDB opens such a file; only a read of the block finds its checksum wrong. The file is
            // the store data's newest, not one of the column family of changelog offsets.
            garble(newest(storeDirectory, name -> name.endsWith(".sst") && !contains(storeDirectory.resolve(name), "changelog")), 64);
        }

        @Override
        int livesBefore() {
            return 2;
        }

        @Override
        boolean foundWhileProcessing() {
            return true;
        }
    },
    GARBLED_WAL("a garbled write-ahead log") {
        @Override
        void apply(final Path storeDirectory) {
            garble(newest(storeDirectory, name -> name.endsWith(".log") && !name.startsWith("LOG")));
        }
    },
    DELETED_DIRECTORY("the store's directory deleted") {
        @Override
        void apply(final Path storeDirectory) {
            try {
                Utils.delete(storeDirectory.toFile());
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private final String description;

    StateDamage(final String description) {
        this.description = description;
    }

    abstract void apply(Path storeDirectory);

    /**
     * True when the damage shows only as the task processes, not when its store opens: the task then
     * fails with a corrupt state and, as Kafka Streams does on a {@code TaskCorruptedException}, all
     * its stores are wiped and restored.
     */
    boolean foundWhileProcessing() {
        return false;
    }

    /**
     * How many lives the application has before the damage, so that the file to damage exists; only
     * the first processes input, so that what it wrote is the newest state, the one the next reads.
     */
    int livesBefore() {
        return 1;
    }

    String description() {
        return description;
    }

    /** The most recently modified file in {@code directory} whose name {@code matches}. */
    private static Path newest(final Path directory, final Predicate<String> matches) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(file -> matches.test(file.getFileName().toString()))
                .max(Comparator.comparing(StateDamage::lastModified))
                .orElseThrow(() -> new AssertionError("no such file to damage in " + directory + ": " + listing(directory)));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Overwrites the whole file with random bytes, keeping its length (at least one byte). */
    private static void garble(final Path file) {
        try {
            garble(file, (int) Math.max(1, Files.size(file)));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Overwrites the first {@code length} bytes of the file with random bytes. */
    private static void garble(final Path file, final int length) {
        final byte[] garbage = new byte[length];
        new Random(file.getFileName().toString().hashCode()).nextBytes(garbage);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(garbage), 0);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean contains(final Path file, final String text) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).contains(text);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long lastModified(final Path file) {
        try {
            return Files.getLastModifiedTime(file).toMillis();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> listing(final Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(file -> file.getFileName().toString()).sorted().toList();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
