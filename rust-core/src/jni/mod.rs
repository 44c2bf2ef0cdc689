//! The JNI surface: decodes arguments, calls the engine, maps errors to Java exceptions.
//!
//! Nothing here holds logic of its own. Every entry point runs inside
//! [`EnvUnowned::with_env`](jni::EnvUnowned::with_env), which catches panics, and resolves its
//! outcome with [`errors::ThrowJavaException`], so a bug in Rust surfaces as a Java exception
//! and never takes the JVM down.

mod checks;
mod errors;
