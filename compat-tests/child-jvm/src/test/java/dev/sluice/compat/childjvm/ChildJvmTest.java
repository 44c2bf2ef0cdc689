package dev.sluice.compat.childjvm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChildJvmTest {

    private static final String UNPACKED = "unpacked in ";

    /** Unpacks a file where RocksDB's binding would put its native library, then waits to be stopped. */
    public static final class UnpacksANativeLibrary {
        public static void main(final String[] arguments) throws Exception {
            final Path directory = Path.of(System.getenv("ROCKSDB_SHAREDLIB_DIR"));
            Files.write(directory.resolve("librocksdbjni-test.so"), new byte[] {1, 2, 3});
            System.out.println(UNPACKED + directory);
            Thread.sleep(Duration.ofMinutes(5).toMillis());
        }
    }

    @Test
    void aKilledChildLeavesNoNativeLibraryBehind(@TempDir final Path logs) throws Exception {
        assertNoneLeftBy(logs.resolve("killed.log"), true);
    }

    @Test
    void aStoppedChildLeavesNoNativeLibraryBehind(@TempDir final Path logs) throws Exception {
        assertNoneLeftBy(logs.resolve("stopped.log"), false);
    }

    private static void assertNoneLeftBy(final Path log, final boolean kill) throws Exception {
        final ChildJvm child = ChildJvm.start(log, System.getProperty("java.class.path"),
            UnpacksANativeLibrary.class.getName(), List.of());
        try {
            assertTrue(child.awaitOutput(lines -> lines.stream().anyMatch(line -> line.startsWith(UNPACKED)),
                Duration.ofSeconds(60)), () -> "the child did not unpack its library: " + child.tail(20));
            final Path directory = Path.of(child.lines().stream().filter(line -> line.startsWith(UNPACKED))
                .findFirst().orElseThrow().substring(UNPACKED.length()));
            assertTrue(Files.exists(directory.resolve("librocksdbjni-test.so")));
            if (kill) {
                child.kill();
            } else {
                child.stop();
            }
            assertFalse(child.isAlive());
            assertFalse(Files.exists(directory), () -> directory + " outlived the child");
        } finally {
            child.kill();
        }
    }
}
