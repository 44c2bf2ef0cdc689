//! The JNI surface: decodes arguments, calls the engine, maps errors to Java exceptions.
