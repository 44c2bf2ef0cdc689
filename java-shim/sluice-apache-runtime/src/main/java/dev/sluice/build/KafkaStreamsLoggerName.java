package dev.sluice.build;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * A build step over the renamed Apache {@code KafkaStreams}: it names its logger after its own class
 * ({@code logContext.logger(getClass())}), which after the rename is {@code ApacheKafkaStreams}, so a logging
 * configuration that names {@code org.apache.kafka.streams.KafkaStreams} would no longer reach it. The step makes
 * that one call name {@code KafkaStreams} instead, and fails the build unless it finds the call exactly once (a
 * Kafka Streams upgrade that changes it is then noticed). Arguments: the jar, rewritten in place.
 */
public final class KafkaStreamsLoggerName {

    static final String RENAMED_CLASS = "org/apache/kafka/streams/ApacheKafkaStreams";
    static final String LOGGER_NAME_CLASS = "org/apache/kafka/streams/KafkaStreams";
    private static final String LOG_CONTEXT = "org/apache/kafka/common/utils/internals/LogContext";

    private KafkaStreamsLoggerName() {
    }

    public static void main(final String[] args) throws IOException {
        final Path jar = Path.of(args[0]);
        final Path rewritten = jar.resolveSibling(jar.getFileName() + ".rewritten");
        try (JarFile in = new JarFile(jar.toFile());
             OutputStream file = Files.newOutputStream(rewritten);
             JarOutputStream out = new JarOutputStream(file)) {
            for (final JarEntry entry : Collections.list(in.entries())) {
                final byte[] content;
                try (InputStream stream = in.getInputStream(entry)) {
                    content = stream.readAllBytes();
                }
                final JarEntry copy = new JarEntry(entry.getName());
                copy.setTime(entry.getTime());
                out.putNextEntry(copy);
                out.write(entry.getName().equals(RENAMED_CLASS + ".class") ? rewrite(content) : content);
                out.closeEntry();
            }
        }
        Files.move(rewritten, jar, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The class with its logger named after {@link #LOGGER_NAME_CLASS}; fails unless the call is there once. */
    static byte[] rewrite(final byte[] classFile) {
        final ClassReader reader = new ClassReader(classFile);
        final ClassWriter writer = new ClassWriter(reader, 0);
        final int[] rewritten = {0};
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(final int access, final String name, final String descriptor,
                                             final String signature, final String[] exceptions) {
                final MethodVisitor next = super.visitMethod(access, name, descriptor, signature, exceptions);
                return name.equals("<init>") ? new LoggerClassArgument(next, rewritten) : next;
            }
        }, 0);
        if (rewritten[0] != 1) {
            throw new IllegalStateException("expected one logContext.logger(getClass()) in " + RENAMED_CLASS
                + "'s constructors, found " + rewritten[0]);
        }
        return writer.toByteArray();
    }

    /**
     * Turns {@code aload_0; invokevirtual Object.getClass(); invokevirtual LogContext.logger(Class)} into
     * {@code ldc KafkaStreams.class; invokevirtual LogContext.logger(Class)}: the same stack, no branch between,
     * so the frames stay as they are. Instructions it holds back are passed on unchanged when the pattern breaks.
     */
    private static final class LoggerClassArgument extends MethodVisitor {

        private final int[] rewritten;
        private boolean heldThis;
        private boolean heldGetClass;

        LoggerClassArgument(final MethodVisitor next, final int[] rewritten) {
            super(Opcodes.ASM9, next);
            this.rewritten = rewritten;
        }

        @Override
        public void visitVarInsn(final int opcode, final int varIndex) {
            release();
            if (opcode == Opcodes.ALOAD && varIndex == 0) {
                heldThis = true;
                return;
            }
            super.visitVarInsn(opcode, varIndex);
        }

        @Override
        public void visitMethodInsn(final int opcode, final String owner, final String name, final String descriptor,
                                    final boolean isInterface) {
            if (heldThis && !heldGetClass && opcode == Opcodes.INVOKEVIRTUAL && name.equals("getClass")
                && descriptor.equals("()Ljava/lang/Class;")) {
                heldGetClass = true;
                return;
            }
            if (heldGetClass && owner.equals(LOG_CONTEXT) && name.equals("logger")) {
                heldThis = false;
                heldGetClass = false;
                super.visitLdcInsn(Type.getObjectType(LOGGER_NAME_CLASS));
                rewritten[0]++;
            } else {
                release();
            }
            super.visitMethodInsn(opcode, owner, name, descriptor, isInterface);
        }

        @Override
        public void visitInsn(final int opcode) {
            release();
            super.visitInsn(opcode);
        }

        @Override
        public void visitFieldInsn(final int opcode, final String owner, final String name, final String descriptor) {
            release();
            super.visitFieldInsn(opcode, owner, name, descriptor);
        }

        @Override
        public void visitTypeInsn(final int opcode, final String type) {
            release();
            super.visitTypeInsn(opcode, type);
        }

        @Override
        public void visitLdcInsn(final Object value) {
            release();
            super.visitLdcInsn(value);
        }

        @Override
        public void visitIntInsn(final int opcode, final int operand) {
            release();
            super.visitIntInsn(opcode, operand);
        }

        @Override
        public void visitJumpInsn(final int opcode, final Label label) {
            release();
            super.visitJumpInsn(opcode, label);
        }

        @Override
        public void visitLabel(final Label label) {
            release();
            super.visitLabel(label);
        }

        @Override
        public void visitFrame(final int type, final int numLocal, final Object[] local, final int numStack,
                               final Object[] stack) {
            release();
            super.visitFrame(type, numLocal, local, numStack, stack);
        }

        @Override
        public void visitInvokeDynamicInsn(final String name, final String descriptor,
                                           final Handle bootstrapMethodHandle,
                                           final Object... bootstrapMethodArguments) {
            release();
            super.visitInvokeDynamicInsn(name, descriptor, bootstrapMethodHandle, bootstrapMethodArguments);
        }

        @Override
        public void visitIincInsn(final int varIndex, final int increment) {
            release();
            super.visitIincInsn(varIndex, increment);
        }

        @Override
        public void visitTableSwitchInsn(final int min, final int max, final Label dflt, final Label... labels) {
            release();
            super.visitTableSwitchInsn(min, max, dflt, labels);
        }

        @Override
        public void visitLookupSwitchInsn(final Label dflt, final int[] keys, final Label[] labels) {
            release();
            super.visitLookupSwitchInsn(dflt, keys, labels);
        }

        @Override
        public void visitMultiANewArrayInsn(final String descriptor, final int numDimensions) {
            release();
            super.visitMultiANewArrayInsn(descriptor, numDimensions);
        }

        @Override
        public void visitLineNumber(final int line, final Label start) {
            // Line numbers go with labels, which release what is held before they are visited.
            super.visitLineNumber(line, start);
        }

        @Override
        public void visitMaxs(final int maxStack, final int maxLocals) {
            release();
            super.visitMaxs(maxStack, maxLocals);
        }

        private void release() {
            if (heldThis) {
                super.visitVarInsn(Opcodes.ALOAD, 0);
                heldThis = false;
            }
            if (heldGetClass) {
                super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/Object", "getClass", "()Ljava/lang/Class;", false);
                heldGetClass = false;
            }
        }
    }
}
