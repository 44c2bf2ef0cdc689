//! `dev.sluice.streams.internals.NativeLog`: the engine's log records, and librdkafka's (which
//! rdkafka logs through the same facade), handed to slf4j as Kafka Streams' own are. A record
//! finer than the level Java reported when the library was loaded is dropped before it is
//! formatted.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::objects::{Global, JClass, JValue};
use jni::strings::JNIString;
use jni::sys::jint;
use jni::{jni_sig, jni_str, AttachConfig, EnvUnowned, JavaVM};
use log::{Level, LevelFilter, Log, Metadata, Record};

use super::errors::{NativeError, ThrowJavaException};

/// The Java logger every native logger's name starts with (`NativeLog.ROOT`).
const ROOT: &str = "dev.sluice.core";

/// Forwards each record to `NativeLog.log` on the thread that logged.
struct Slf4jLogger {
    vm: JavaVM,
    /// Held globally: a thread librdkafka started finds no application class by name.
    class: Global<JClass<'static>>,
}

thread_local! {
    /// This thread is handing a record to Java: a record logged meanwhile (attaching the
    /// thread logs one) is dropped rather than forwarded, which would recurse.
    static FORWARDING: Cell<bool> = const { Cell::new(false) };
}

impl Log for Slf4jLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level() && !of_this_layer(metadata.target())
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata())
            || FORWARDING.with(|forwarding| forwarding.replace(true))
        {
            return;
        }
        self.forward(record);
        FORWARDING.with(|forwarding| forwarding.set(false));
    }

    fn flush(&self) {}
}

impl Slf4jLogger {
    fn forward(&self, record: &Record<'_>) {
        let level = record.level() as jint;
        let logger = logger_name(record.target());
        let message = record.args().to_string();
        // A record that cannot reach Java (the JVM shutting down) is lost; logging never fails
        // the work that logged.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // Scoped: a thread of librdkafka's attached for good would hold the JVM's exit up.
            // Such a thread has no name Rust knows; the log line then names the library.
            let name = JNIString::from(std::thread::current().name().unwrap_or("sluice-native"));
            self.vm.attach_current_thread_with_config(
                || AttachConfig::new().scoped(true).thread_name(&name),
                None,
                |env| -> jni::errors::Result<()> {
                    let logger = env.new_string(&logger)?;
                    let message = env.new_string(&message)?;
                    env.call_static_method(
                        &*self.class,
                        jni_str!("log"),
                        jni_sig!("(ILjava/lang/String;Ljava/lang/String;)V"),
                        &[
                            JValue::Int(level),
                            JValue::Object(&logger),
                            JValue::Object(&message),
                        ],
                    )?;
                    Ok(())
                },
            )
        }));
    }
}

/// Whether a record's `target` is the jni crate's: its records tell of this layer's own
/// attaching and detaching of threads, one per record forwarded.
fn of_this_layer(target: &str) -> bool {
    target == "jni" || target.starts_with("jni::")
}

/// The Java logger of a record's target: the crate's modules under [`ROOT`], and any other
/// target (rdkafka's `librdkafka`) as a child of it.
fn logger_name(target: &str) -> String {
    let module = target.strip_prefix("sluice_core::").unwrap_or(target);
    format!("{ROOT}.{}", module.replace("::", "."))
}

/// The levels as `NativeLog` numbers them, which are `log::Level`'s.
fn level_filter(max_level: jint) -> LevelFilter {
    [
        Level::Error,
        Level::Warn,
        Level::Info,
        Level::Debug,
        Level::Trace,
    ]
    .into_iter()
    .rev()
    .find(|level| *level as jint <= max_level)
    .map_or(LevelFilter::Off, |level| level.to_level_filter())
}

/// Makes slf4j the destination of every record at `max_level` or coarser. Only the first call
/// installs the logger (a process has one); each sets the level.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_internals_NativeLog_installNative<'local>(
    mut env: EnvUnowned<'local>,
    class: JClass<'local>,
    max_level: jint,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let logger = Slf4jLogger {
            vm: env.get_java_vm()?,
            class: env.new_global_ref(&class)?,
        };
        // Refused only when a logger is installed already, which then goes on serving.
        let _ = log::set_boxed_logger(Box::new(logger));
        log::set_max_level(level_filter(max_level));
        Ok(())
    })
    .resolve::<ThrowJavaException>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_s_modules_and_other_targets_log_under_the_root() {
        assert_eq!(
            logger_name("sluice_core::engine::commit"),
            "dev.sluice.core.engine.commit"
        );
        assert_eq!(logger_name("librdkafka"), "dev.sluice.core.librdkafka");
    }

    #[test]
    fn the_jni_crate_s_records_are_not_forwarded() {
        assert!(of_this_layer("jni::vm::java_vm"));
        assert!(!of_this_layer("sluice_core::jni::logging"));
        assert!(!of_this_layer("librdkafka"));
    }

    #[test]
    fn java_s_level_numbers_are_the_facade_s() {
        assert_eq!(level_filter(0), LevelFilter::Off);
        assert_eq!(level_filter(1), LevelFilter::Error);
        assert_eq!(level_filter(3), LevelFilter::Info);
        assert_eq!(level_filter(5), LevelFilter::Trace);
    }
}
