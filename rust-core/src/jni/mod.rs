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
//! - [`reads`]: isolation, direction and scan handles, shared by every store's reads;
//! - [`record_framing`]: the records and positions that cross to the JVM's task runners;
//! - [`logging`]: the engine's and librdkafka's log records, handed to slf4j;
//! - [`upcalls`]: the engine's calls into the JVM: the task runners, the global runner and
//!   restore progress behind the engine's processor traits;
//! - one module per Java class with native methods. Window, session and versioned stores
//!   are opened over a key-value store handle, which keeps offsets, position and lifetime;
//!   [`layered_store`] holds their shared lifecycle (restore, rollback, release).

mod arrays;
mod checks;
mod chunks;
mod engine;
mod errors;
mod framing;
mod group_member;
mod handles;
mod kv_iterator;
mod kv_store;
mod layered_store;
mod logging;
mod reads;
mod record_cache;
mod record_framing;
mod registry;
mod rocksdb_resources;
mod session_store;
mod upcalls;
mod versioned_store;
mod window_store;
