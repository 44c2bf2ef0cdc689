package dev.sluice.streams.internals;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads Sluice's native library once per JVM.
 *
 * <p>The library travels inside this jar under {@code dev/sluice/native/<os>-<arch>/}, for example
 * {@code linux-x86_64}. On first use it is extracted into a cache directory named after its SHA-256,
 * so two jars of different builds never share a file and an existing file is reused only when its
 * contents hash to that name. Two system properties change where it comes from:
 * <ul>
 *   <li>{@value #LIBRARY_PATH_PROPERTY}: load this file instead of the packed one;</li>
 *   <li>{@value #CACHE_DIR_PROPERTY}: extract into this directory (default: a per-user directory
 *       under {@code java.io.tmpdir}).</li>
 * </ul>
 * Whatever is loaded must report the version this jar was built with.
 */
public final class NativeLibrary {

    public static final String LIBRARY_PATH_PROPERTY = "sluice.native.library.path";
    public static final String CACHE_DIR_PROPERTY = "sluice.native.cache.dir";

    private static final String RESOURCE_ROOT = "/dev/sluice/native/";
    private static final String LIBRARY_NAME = "sluice_core";

    private static boolean loaded;

    private NativeLibrary() {
    }

    /** Loads the library if this JVM has not yet; later calls return at once. */
    public static synchronized void load() {
        if (loaded) {
            return;
        }
        final Properties expected = buildProperties();
        final String override = System.getProperty(LIBRARY_PATH_PROPERTY);
        final Path library = override != null ? Paths.get(override) : extractPackedLibrary();
        try {
            System.load(library.toAbsolutePath().toString());
        } catch (final UnsatisfiedLinkError e) {
            throw new IllegalStateException("Sluice could not load its native library " + library + ": " + e.getMessage(), e);
        }
        verifyVersion(library, expected.getProperty("version"));
        loaded = true;
    }

    /** The platform directory name of this JVM, in the scheme the jar uses: {@code <os>-<arch>}. */
    public static String currentPlatform() {
        return osName(System.getProperty("os.name")) + "-" + archName(System.getProperty("os.arch"));
    }

    /**
     * Copies the library out of the jar into a directory named by its digest, unless a copy with that digest is
     * there already. The bytes are streamed: the library is tens of megabytes, which an application's heap need
     * not hold even for a moment.
     */
    private static Path extractPackedLibrary() {
        final String platform = currentPlatform();
        final String fileName = System.mapLibraryName(LIBRARY_NAME);
        final String resource = RESOURCE_ROOT + platform + "/" + fileName;
        if (NativeLibrary.class.getResource(resource) == null) {
            throw new IllegalStateException("Sluice has no native library for platform " + platform
                + " (os.name=" + System.getProperty("os.name") + ", os.arch=" + System.getProperty("os.arch")
                + "); this jar was built for " + buildProperties().getProperty("platform")
                + ". Build rust-core for this platform and point -D" + LIBRARY_PATH_PROPERTY + " at the library.");
        }
        final Path root = cacheRoot();
        try {
            final String digest = digestOf(NativeLibrary.class.getResourceAsStream(resource));
            final Path target = root.resolve(digest).resolve(fileName);
            if (Files.isRegularFile(target) && digestOf(Files.newInputStream(target)).equals(digest)) {
                return target;
            }
            Files.createDirectories(target.getParent());
            // Written under a unique name and moved into place, so a concurrent JVM never loads a half-written file.
            final Path partial = Files.createTempFile(target.getParent(), fileName, ".partial");
            try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
                Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
                try {
                    Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (final AtomicMoveNotSupportedException e) {
                    Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(partial);
            }
            if (!digestOf(Files.newInputStream(target)).equals(digest)) {
                throw new IllegalStateException("Sluice's native library at " + target + " does not match the one in the jar");
            }
            return target;
        } catch (final IOException e) {
            throw new UncheckedIOException("Sluice could not extract its native library " + resource + " to " + root
                + "; set -D" + CACHE_DIR_PROPERTY + " to a writable directory", e);
        }
    }

    private static void verifyVersion(final Path library, final String expectedVersion) {
        final String actual = NativeChecks.version();
        // Cargo versions carry no -SNAPSHOT qualifier; the numbers must agree.
        final String expected = expectedVersion.replace("-SNAPSHOT", "");
        if (!actual.equals(expected)) {
            throw new IllegalStateException("Sluice's native library " + library + " has version " + actual
                + " but this jar needs " + expected);
        }
    }

    private static Path cacheRoot() {
        final String configured = System.getProperty(CACHE_DIR_PROPERTY);
        if (configured != null) {
            return Paths.get(configured);
        }
        return Paths.get(System.getProperty("java.io.tmpdir"), "sluice-native-" + System.getProperty("user.name"));
    }

    private static Properties buildProperties() {
        final Properties properties = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream(RESOURCE_ROOT + "library.properties")) {
            if (in == null) {
                throw new IllegalStateException("Sluice's jar lacks " + RESOURCE_ROOT + "library.properties; it was not built by Sluice's build");
            }
            properties.load(in);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties;
    }

    /** The SHA-256 of what {@code stream} holds, in hex; closes it. */
    private static String digestOf(final InputStream stream) throws IOException {
        final MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
        try (InputStream in = new DigestInputStream(stream, sha256)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(sha256.digest());
    }

    static String osName(final String osName) {
        final String name = osName.toLowerCase(Locale.ROOT);
        if (name.startsWith("linux")) {
            return "linux";
        }
        if (name.startsWith("mac") || name.startsWith("darwin")) {
            return "macos";
        }
        if (name.startsWith("windows")) {
            return "windows";
        }
        return name.replaceAll("[^a-z0-9]", "");
    }

    static String archName(final String osArch) {
        final String arch = osArch.toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
                return "x86_64";
            case "aarch64":
            case "arm64":
                return "aarch64";
            default:
                return arch.replaceAll("[^a-z0-9_]", "");
        }
    }
}
