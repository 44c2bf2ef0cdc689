package dev.sluice.streams.internals;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;

/**
 * Loads Sluice's native library once per JVM.
 *
 * <p>The library travels inside this jar under {@code dev/sluice/native/<os>-<arch>/}, for example
 * {@code linux-x86_64}. On first use it is extracted into a cache directory named after its CRC-32 and size, so
 * two jars of different builds never share a file, and later JVMs load the copy they find there. The jar's own
 * entry already records the CRC-32, so a start neither inflates nor hashes the tens of megabytes of the library
 * (a SHA-256 of both, as this loader once took, cost a short-lived JVM about 0.7 s); a copy found is checked
 * against it, which the CPU's CRC instructions do in milliseconds. What keeps another user from planting a
 * library there is the cache directory's privacy, not a digest (a file can change between a check and its
 * load): the loader makes it owner-only and refuses one that others may write or that another user owns.
 * Two system properties change where it comes from:
 * <ul>
 *   <li>{@value #LIBRARY_PATH_PROPERTY}: load this file instead of the packed one;</li>
 *   <li>{@value #CACHE_DIR_PROPERTY}: extract into this directory (default: a per-user directory
 *       under {@code java.io.tmpdir}).</li>
 * </ul>
 * Whatever is loaded must report the version this jar was built with. Once loaded, the library logs
 * through slf4j ({@link NativeLog}).
 */
public final class NativeLibrary {

    public static final String LIBRARY_PATH_PROPERTY = "sluice.native.library.path";
    public static final String CACHE_DIR_PROPERTY = "sluice.native.cache.dir";

    private static final String RESOURCE_ROOT = "/dev/sluice/native/";
    private static final String LIBRARY_NAME = "sluice_core";
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

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
        NativeLog.install();
        loaded = true;
    }

    /**
     * Whether there is a library for this JVM to load: one packed for its platform, or one named by
     * {@value #LIBRARY_PATH_PROPERTY}. Nothing is extracted or loaded to find out.
     */
    public static boolean availableHere() {
        return System.getProperty(LIBRARY_PATH_PROPERTY) != null
            || NativeLibrary.class.getResource(packedResource(currentPlatform())) != null;
    }

    /** The platform directory name of this JVM, in the scheme the jar uses: {@code <os>-<arch>}. */
    public static String currentPlatform() {
        return osName(System.getProperty("os.name")) + "-" + archName(System.getProperty("os.arch"));
    }

    /**
     * The library's copy in the cache, extracted there unless an intact copy is there already. The bytes are
     * streamed: the library is tens of megabytes, which an application's heap need not hold even for a moment.
     */
    private static Path extractPackedLibrary() {
        final String platform = currentPlatform();
        final String fileName = System.mapLibraryName(LIBRARY_NAME);
        final String resource = packedResource(platform);
        final URL packed = NativeLibrary.class.getResource(resource);
        if (packed == null) {
            throw new IllegalStateException("Sluice has no native library for platform " + platform
                + " (os.name=" + System.getProperty("os.name") + ", os.arch=" + System.getProperty("os.arch")
                + "); this jar was built for " + buildProperties().getProperty("platform")
                + ". Build rust-core for this platform and point -D" + LIBRARY_PATH_PROPERTY + " at the library.");
        }
        final Path root = cacheRoot();
        try {
            final Checksum checksum = checksumOf(packed);
            final Path directory = privateDirectory(privateDirectory(root).resolve(checksum.name()));
            final Path target = directory.resolve(fileName);
            if (Files.isRegularFile(target) && checksum.matches(target)) {
                return target;
            }
            // Written under a unique name and moved into place, so a concurrent JVM never loads a half-written file.
            final Path partial = Files.createTempFile(directory, fileName, ".partial");
            try (CheckedInputStream in = new CheckedInputStream(packed.openStream(), new CRC32())) {
                Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
                if (in.getChecksum().getValue() != checksum.crc32() || Files.size(partial) != checksum.size()) {
                    throw new IllegalStateException("Sluice's native library " + resource + " read from the jar does not"
                        + " match the jar's record of it; the jar is damaged");
                }
                try {
                    Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (final AtomicMoveNotSupportedException e) {
                    Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(partial);
            }
            return target;
        } catch (final IOException e) {
            throw new UncheckedIOException("Sluice could not extract its native library " + resource + " to " + root
                + "; set -D" + CACHE_DIR_PROPERTY + " to a writable directory", e);
        }
    }

    private static String packedResource(final String platform) {
        return RESOURCE_ROOT + platform + "/" + System.mapLibraryName(LIBRARY_NAME);
    }

    /**
     * {@code directory}, created owner-only where it is missing; on a file system with POSIX permissions one that
     * someone else owns or may write is refused, since a library planted in it would run in this JVM.
     */
    private static Path privateDirectory(final Path directory) throws IOException {
        final boolean posix = directory.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (!Files.isDirectory(directory)) {
            try {
                if (posix) {
                    Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                } else {
                    Files.createDirectory(directory);
                }
            } catch (final FileAlreadyExistsException e) {
                // Another JVM made it meanwhile (or it is a file, which the checks below and the copy report).
            } catch (final NoSuchFileException e) {
                Files.createDirectories(directory.getParent());
                return privateDirectory(directory);
            }
        }
        if (!posix) {
            return directory;
        }
        final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(directory);
        final boolean othersMayWrite = permissions.contains(PosixFilePermission.GROUP_WRITE)
            || permissions.contains(PosixFilePermission.OTHERS_WRITE);
        final String user = System.getProperty("user.name");
        final String owner = Files.getOwner(directory).getName();
        if (othersMayWrite || !owner.equals(user)) {
            throw new IllegalStateException("Sluice will not load its native library from " + directory
                + ": it is owned by " + owner + " with permissions " + PosixFilePermissions.toString(permissions)
                + ", not private to " + user + "; remove it, or set -D" + CACHE_DIR_PROPERTY
                + " to a directory only this user may write");
        }
        return directory;
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

    /** The packed library's CRC-32 and size: from the jar's entry when it is in a jar, else read from the file. */
    private static Checksum checksumOf(final URL packed) throws IOException {
        final URLConnection connection = packed.openConnection();
        if (connection instanceof JarURLConnection jar) {
            final JarEntry entry = jar.getJarEntry();
            if (entry.getCrc() != -1 && entry.getSize() != -1) {
                return new Checksum(entry.getCrc(), entry.getSize());
            }
        }
        try (InputStream in = packed.openStream()) {
            return Checksum.of(in);
        }
    }

    /** A library's CRC-32 and size, which name its cache directory. */
    private record Checksum(long crc32, long size) {

        static Checksum of(final InputStream stream) throws IOException {
            final CheckedInputStream in = new CheckedInputStream(stream, new CRC32());
            final long size = in.transferTo(OutputStream.nullOutputStream());
            return new Checksum(in.getChecksum().getValue(), size);
        }

        String name() {
            return String.format(Locale.ROOT, "%08x-%d", crc32, size);
        }

        /** Whether {@code file} holds these bytes: its size first, which costs nothing, then its CRC-32. */
        boolean matches(final Path file) throws IOException {
            if (Files.size(file) != size) {
                return false;
            }
            try (InputStream in = Files.newInputStream(file)) {
                return of(in).equals(this);
            }
        }
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
