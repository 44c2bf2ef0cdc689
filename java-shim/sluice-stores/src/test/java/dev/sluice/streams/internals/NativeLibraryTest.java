package dev.sluice.streams.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLibraryTest {

    @Test
    void loadsThePackedLibraryAndCallsIntoIt() {
        NativeLibrary.load();
        final String version = NativeChecks.version();
        assertTrue(version.matches("\\d+\\.\\d+\\.\\d+"), "unexpected native version " + version);
    }

    @Test
    void loadingTwiceIsHarmless() {
        NativeLibrary.load();
        NativeLibrary.load();
        assertNotEquals("", NativeChecks.version());
    }

    @Test
    void aRustPanicArrivesAsStreamsExceptionAndTheJvmLivesOn() {
        NativeLibrary.load();
        for (int i = 0; i < 100; i++) {
            final String message = "probe panic " + i;
            final StreamsException thrown = assertThrows(StreamsException.class, () -> NativeChecks.panicWith(message));
            assertTrue(thrown.getMessage().contains(message), thrown.getMessage());
        }
        assertNotEquals("", NativeChecks.version());
    }

    @Test
    void platformNamesFollowTheJarScheme() {
        assertEquals("linux-x86_64", NativeLibrary.osName("Linux") + "-" + NativeLibrary.archName("amd64"));
        assertEquals("macos-aarch64", NativeLibrary.osName("Mac OS X") + "-" + NativeLibrary.archName("aarch64"));
        assertEquals("windows-x86_64", NativeLibrary.osName("Windows 11") + "-" + NativeLibrary.archName("x86_64"));
    }

    @Test
    void aMissingOverrideLibraryFailsWithAMessageNamingIt(@TempDir final Path dir) throws Exception {
        final Path missing = dir.resolve("no-such-library.so");
        final String output = runInChildJvm("-D" + NativeLibrary.LIBRARY_PATH_PROPERTY + "=" + missing);
        assertTrue(output.contains("Sluice could not load its native library " + missing), output);
    }

    @Test
    void anUnwritableCacheDirectoryFailsWithAMessageNamingTheProperty(@TempDir final Path dir) throws Exception {
        final Path file = Files.writeString(dir.resolve("a-file-not-a-directory"), "x");
        final String output = runInChildJvm("-D" + NativeLibrary.CACHE_DIR_PROPERTY + "=" + file);
        assertTrue(output.contains("set -D" + NativeLibrary.CACHE_DIR_PROPERTY), output);
    }

    @Test
    void theLibraryIsExtractedOnceIntoADirectoryNamedByItsChecksumAndFoundThereNextTime(@TempDir final Path dir)
            throws Exception {
        final String property = "-D" + NativeLibrary.CACHE_DIR_PROPERTY + "=" + dir;
        assertEquals("", runInChildJvm(property, 0));
        final List<Path> extracted;
        try (Stream<Path> files = Files.walk(dir)) {
            extracted = files.filter(Files::isRegularFile).toList();
        }
        assertEquals(1, extracted.size(), "one library and no partial copy: " + extracted);
        final Path library = extracted.get(0);
        assertEquals(System.mapLibraryName("sluice_core"), library.getFileName().toString());
        assertTrue(library.getParent().getFileName().toString().matches("[0-9a-f]{8}-[0-9]+"), library.toString());
        final FileTime written = Files.getLastModifiedTime(library);
        assertEquals("", runInChildJvm(property, 0));
        assertEquals(written, Files.getLastModifiedTime(library), "the second JVM loads the copy it finds");
        assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE),
            Files.getPosixFilePermissions(library.getParent()), "the directory is private to its user");
    }

    @Test
    void aDamagedCopyInTheCacheIsReplaced(@TempDir final Path dir) throws Exception {
        final String property = "-D" + NativeLibrary.CACHE_DIR_PROPERTY + "=" + dir;
        assertEquals("", runInChildJvm(property, 0));
        final Path library;
        try (Stream<Path> files = Files.walk(dir)) {
            library = files.filter(Files::isRegularFile).findFirst().orElseThrow();
        }
        final byte[] intact = Files.readAllBytes(library);
        final byte[] damaged = intact.clone();
        damaged[damaged.length / 2] ^= 0x5a;
        Files.write(library, damaged);
        assertEquals("", runInChildJvm(property, 0));
        assertArrayEquals(intact, Files.readAllBytes(library));
    }

    @Test
    void aCacheDirectoryOthersMayWriteIsRefused(@TempDir final Path dir) throws Exception {
        final Path shared = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        final String output = runInChildJvm("-D" + NativeLibrary.CACHE_DIR_PROPERTY + "=" + shared);
        assertTrue(output.contains("Sluice will not load its native library from " + shared), output);
        assertTrue(output.contains("rwxrwxrwx"), output);
        try (Stream<Path> files = Files.list(shared)) {
            assertEquals(0, files.count(), "nothing is extracted into it");
        }
    }

    /** Runs {@link LoadInChildJvm} in a fresh JVM, since a library loads only once per JVM; expects it to fail. */
    private static String runInChildJvm(final String property) throws IOException, InterruptedException {
        return runInChildJvm(property, 1);
    }

    /** Runs {@link LoadInChildJvm} in a fresh JVM; its output, once it exited with {@code exitCode}. */
    private static String runInChildJvm(final String property, final int exitCode) throws IOException, InterruptedException {
        final Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        final Process process = new ProcessBuilder(List.of(java.toString(), property, "-cp",
                System.getProperty("java.class.path"), LoadInChildJvm.class.getName()))
            .redirectErrorStream(true)
            .start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(exitCode, process.exitValue(), output);
        return output;
    }

    /** Entry point of the child JVM: load, and print the failure if there is one. */
    public static final class LoadInChildJvm {
        public static void main(final String[] args) {
            try {
                NativeLibrary.load();
            } catch (final RuntimeException e) {
                System.out.println(e.getMessage());
                System.exit(1);
            }
            System.exit(0);
        }
    }
}
