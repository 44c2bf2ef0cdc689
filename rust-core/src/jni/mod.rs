//! The JNI surface: decodes arguments, calls the engine, maps errors to Java exceptions.
//!
//! Nothing here holds logic of its own. Every entry point runs inside
//! [`EnvUnowned::with_env`](jni::EnvUnowned::with_env), which catches panics, and resolves its
//! outcome with [`errors::ThrowJavaException`], so a bug in Rust surfaces as a Java exception
//! and never takes the JVM down.
//!
//! - [`handles`] and [`registry`]: Rust objects behind `long` handles that survive misuse;
//! - [`arrays`]: `byte[]` in and out through raw JNI calls (the hot paths);
//! - [`framing`] and [`chunks`]: the byte layouts that batch many entries into one crossing;
//! - one module per Java class with native methods.

mod arrays;
mod checks;
mod chunks;
mod errors;
mod framing;
mod handles;
mod kv_iterator;
mod kv_store;
mod registry;
mod rocksdb_resources;
