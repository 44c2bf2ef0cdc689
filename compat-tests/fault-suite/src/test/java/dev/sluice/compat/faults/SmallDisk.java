package dev.sluice.compat.faults;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small file system of its own (a tmpfs) mounted on a directory, which can be filled to the last
 * byte and freed again: the disk an application's state directory lives on, running full. Mounting
 * needs the privilege to mount (root); {@link #mountable()} says whether this process has it.
 */
final class SmallDisk implements AutoCloseable {

    private static final int FILL_CHUNK_BYTES = 64 * 1024;

    private final Path mountPoint;
    private final Path ballast;

    private SmallDisk(final Path mountPoint) {
        this.mountPoint = mountPoint;
        this.ballast = mountPoint.resolve("ballast");
    }

    /** Whether this process may mount a tmpfs: it tries on a scratch directory. */
    static boolean mountable() {
        try {
            final Path scratch = Files.createTempDirectory("small-disk-probe");
            try {
                mount(scratch, 1024 * 1024).close();
                return true;
            } catch (final IllegalStateException e) {
                return false;
            } finally {
                Files.deleteIfExists(scratch);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A tmpfs of {@code bytes} mounted on {@code mountPoint}, created if missing. */
    static SmallDisk mount(final Path mountPoint, final long bytes) throws IOException {
        Files.createDirectories(mountPoint);
        run(List.of("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", mountPoint.toString()));
        return new SmallDisk(mountPoint);
    }

    Path path() {
        return mountPoint;
    }

    /**
     * Takes every free byte with a file of its own, growing it if it was filled before (files closed
     * since may have given back what they had preallocated); returns how many bytes it took.
     */
    long fill() throws IOException {
        final byte[] chunk = new byte[FILL_CHUNK_BYTES];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(ballast, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            while (true) {
                out.write(chunk);
                written += chunk.length;
            }
        } catch (final IOException full) {
            if (!full.getMessage().contains("No space left")) {
                throw full;
            }
        }
        return written;
    }

    /** Gives back what {@link #fill()} took. */
    void free() throws IOException {
        Files.deleteIfExists(ballast);
    }

    @Override
    public void close() {
        // Lazily: a child process that still has files open there must not keep the mount.
        run(List.of("umount", "--lazy", mountPoint.toString()));
    }

    private static void run(final List<String> command) {
        try {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output.strip());
            }
        } catch (final IOException e) {
            throw new IllegalStateException(String.join(" ", command) + " could not run", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(String.join(" ", command) + " interrupted", e);
        }
    }
}
